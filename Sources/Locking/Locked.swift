#if canImport(Glibc)
import Glibc
#endif

/// A value that threads share, reached only with its lock held.
///
/// It plays the part of `Synchronization.Mutex`, on a pthread mutex:
/// ThreadSanitizer understands pthread locks but not `Mutex`'s futex, so
/// with `Mutex` it reports the locked accesses themselves as races (under
/// contention, now and then) instead of checking the code around them.
///
/// ```swift
/// let names = Locked<[String: Int]>([:])
/// names.withLock { $0["a", default: 0] += 1 }
/// let count = names.withLock { $0.count }    // 1
/// ```
// `@unchecked Sendable`: `value` is only read or written in `withLock`,
// with the mutex held; the mutex lives at a fixed heap address for the
// object's lifetime.
public final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// Holds `value`.
    ///
    /// ```swift
    /// let current = Locked(router)
    /// ```
    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` on the value with the lock held.
    ///
    /// ```swift
    /// let router = current.withLock { $0 }
    /// current.withLock { $0 = newRouter }
    /// ```
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
