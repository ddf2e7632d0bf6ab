#if canImport(Glibc)
import Glibc
#endif

/// A pthread mutex with a condition variable, for state shared between
/// threads that may wait: the HTTP server's workers and suspended
/// connections, the connection pool's waiting callers, the log's writer.
///
/// A pthread mutex rather than `Synchronization.Mutex`: ThreadSanitizer
/// understands pthread locks but not `Mutex`'s futex, so with `Mutex` it
/// reports every locked access as a race instead of checking the code.
/// The condition waits on the monotonic clock, so a change of the wall
/// clock neither shortens nor stretches a timeout.
///
/// ```swift
/// let lock = ConditionLock()
/// var items: [Int] = []
/// lock.withLock { items.append(1); lock.signal() }
///
/// lock.lock()
/// let deadline = ContinuousClock.now + .seconds(5)
/// while items.isEmpty, lock.wait(until: deadline) {}
/// lock.unlock()
/// ```
// `@unchecked Sendable`: the mutex and condition live at fixed heap
// addresses for the object's lifetime and are only used through pthread
// calls, which are thread-safe by definition.
public final class ConditionLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    /// Creates an unlocked lock.
    ///
    /// ```swift
    /// let lock = ConditionLock()
    /// ```
    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    // MARK: - Locking

    /// Blocks until the calling thread holds the lock.
    ///
    /// ```swift
    /// lock.lock()
    /// defer { lock.unlock() }
    /// ```
    public func lock() {
        pthread_mutex_lock(mutex)
    }

    /// Releases the lock the calling thread holds.
    ///
    /// ```swift
    /// lock.unlock()
    /// ```
    public func unlock() {
        pthread_mutex_unlock(mutex)
    }

    /// Runs `body` with the lock held.
    ///
    /// ```swift
    /// let count = lock.withLock { items.count }
    /// ```
    public func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    // MARK: - Waiting

    /// With the lock held: releases it, sleeps until signalled or until
    /// `deadline`, and takes it again. `false` when the deadline passed.
    /// Wake-ups can be spurious, so wait in a loop that checks the state.
    ///
    /// ```swift
    /// while items.isEmpty {
    ///     guard lock.wait(until: deadline) else { throw TimeoutError() }
    /// }
    /// ```
    public func wait(until deadline: ContinuousClock.Instant) -> Bool {
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero else { return false }
        let (seconds, attoseconds) = remaining.components
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        let nanoseconds = Int(time.tv_nsec) + Int(attoseconds / 1_000_000_000)
        time.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
        time.tv_nsec = nanoseconds % 1_000_000_000
        return pthread_cond_timedwait(condition, mutex, &time) != ETIMEDOUT
    }

    /// Wakes one thread waiting in ``wait(until:)``; call it with the lock held.
    ///
    /// ```swift
    /// lock.withLock { items.append(2); lock.signal() }
    /// ```
    public func signal() {
        pthread_cond_signal(condition)
    }

    /// Wakes every thread waiting in ``wait(until:)``; call it with the lock held.
    ///
    /// ```swift
    /// lock.withLock { isOpen = true; lock.broadcast() }
    /// ```
    public func broadcast() {
        pthread_cond_broadcast(condition)
    }
}
