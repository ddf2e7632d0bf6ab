import Locking
import Synchronization

/// A Prometheus counter: an atomic total that only grows.
///
/// ```swift
/// let bytes = Counter()
/// bytes.add(4096)
/// bytes.value    // 4096
/// ```
public final class Counter: Sendable {
    private let total = Atomic<UInt64>(0)

    /// A counter at 0.
    public init() {}

    /// Adds `amount` (one by default).
    ///
    /// ```swift
    /// requests.add()
    /// ```
    public func add(_ amount: UInt64 = 1) {
        total.add(amount, ordering: .relaxed)
    }

    /// The total so far.
    public var value: UInt64 {
        total.load(ordering: .relaxed)
    }
}

/// Counters by a small set of names (SQLSTATE classes, say), each created
/// on first use; for events too rare to need a slot set up in advance.
///
/// ```swift
/// let errors = CounterFamily()
/// errors.add("23")
/// errors.values    // [("23", 1)]
/// ```
public final class CounterFamily: Sendable {
    private let counts = Locked<[String: UInt64]>([:])

    /// A family with no counter yet.
    public init() {}

    /// Adds one to the counter of `name`.
    public func add(_ name: String) {
        counts.withLock { $0[name, default: 0] += 1 }
    }

    /// Every counter, sorted by name.
    public var values: [(name: String, value: UInt64)] {
        counts.withLock { $0.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) } }
    }
}
