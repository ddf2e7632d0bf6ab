#if canImport(Glibc)
import Glibc
#endif
import Locking

/// The threads that check passwords, few and at a lower priority than the
/// server's own, with a queue of bounded length: however many checks
/// arrive at once, they take at most `threads` processors, and the event
/// loops and database work keep theirs. A check that finds the queue full
/// is not queued (the caller answers 503).
///
/// ```swift
/// let checks = PasswordCheckQueue(threads: 1, capacity: 32)
/// if !checks.submit({ verify(password) }) { /* busy: 503 */ }
/// ```
// `@unchecked Sendable`: `waiting` is touched only with `lock` held.
final class PasswordCheckQueue: @unchecked Sendable {
    private let lock = ConditionLock()
    /// The checks waiting, from `first`; a check taken is set to `nil`, so
    /// that what it holds (a request, a password) goes with it.
    private var waiting: [(@Sendable () -> Void)?] = []
    private var first = 0
    private let capacity: Int

    /// `threads` threads (at least one) that run the checks, nice 10; at most `capacity` checks wait.
    init(threads: Int, capacity: Int) {
        self.capacity = max(1, capacity)
        for _ in 0..<max(1, threads) {
            DetachedThread.start { [self] in
                // Nice 10, for this thread alone (Linux keeps a nice value per
                // thread): under a flood of checks, serving requests comes first.
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
                run()
            }
        }
    }

    /// Queues `check`; `false` when the queue is full and it was not queued.
    func submit(_ check: @escaping @Sendable () -> Void) -> Bool {
        lock.withLock {
            guard waiting.count - first < capacity else { return false }
            waiting.append(check)
            lock.signal()
            return true
        }
    }

    private func run() {
        while true {
            let check = lock.withLock {
                while first == waiting.count { _ = lock.wait(until: .now + .seconds(3600)) }
                let check = waiting[first]
                waiting[first] = nil
                first += 1
                if first == waiting.count || first >= capacity {
                    waiting.removeFirst(first)
                    first = 0
                }
                return check
            }
            check?()
        }
    }
}
