import Locking

/// A value shared between test threads (a handler's and the test's): each
/// read, write or mutation holds a lock, so none is seen half done.
///
/// ```swift
/// let hits = Shared(0)
/// hits.mutate { $0 += 1 }
/// #expect(hits.value == 1)
/// ```
public final class Shared<Value: Sendable>: Sendable {
    private let storage: Locked<Value>
    public init(_ value: Value) { storage = Locked(value) }
    public var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
    public func mutate(_ body: (inout Value) -> Void) { storage.withLock { body(&$0) } }
}
