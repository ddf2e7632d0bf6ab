import Synchronization

/// A fixed number of atomic counters side by side, addressed by index:
/// the storage of a ``Histogram``'s buckets, or of counts by status code.
///
/// ```swift
/// let counters = Counters(count: 3)
/// counters.add(at: 1)
/// counters[1]   // 1
/// ```
public final class Counters: @unchecked Sendable {
    // `@unchecked Sendable`: the pointer never changes after `init`, and
    // what it points to is atomics, touched only through their atomic
    // operations.

    /// How many counters there are.
    public let count: Int
    // Atomics cannot sit in an array (they are not copyable): they live in
    // memory of their own, allocated and initialised once, freed in deinit.
    private let storage: UnsafeMutablePointer<Atomic<UInt64>>

    /// `count` counters at 0.
    public init(count: Int) {
        self.count = count
        storage = .allocate(capacity: count)
        for index in 0..<count {
            (storage + index).initialize(to: Atomic(0))
        }
    }

    deinit {
        storage.deinitialize(count: count)
        storage.deallocate()
    }

    /// Adds `amount` to the counter at `index`.
    @inline(__always)
    public func add(at index: Int, _ amount: UInt64 = 1) {
        // Indexes are the code's (a route's slot, a bucket found by bound), never a request's.
        precondition(index >= 0 && index < count, "counter index out of range")
        storage[index].add(amount, ordering: .relaxed)
    }

    /// The value of the counter at `index`.
    public subscript(index: Int) -> UInt64 {
        // Indexes are the code's, never a request's.
        precondition(index >= 0 && index < count, "counter index out of range")
        return storage[index].load(ordering: .relaxed)
    }
}
