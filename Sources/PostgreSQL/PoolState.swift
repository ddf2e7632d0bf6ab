import EventLoops
import FoundationEssentials
import PrometheusMetrics
import Locking
import Synchronization

// MARK: - State

/// The pool's mutable state. `@unchecked Sendable` is safe because every
/// stored property is read and written only while `lock` is held; the idle
/// connections are handed to exactly one caller at a time.
///
/// Callers that find no connection wait in line, first come first served. A
/// connection given back, or the place of one closed, goes straight to the
/// first in line, who wakes up holding it: no wake-up finds the connection
/// taken by a newcomer and has to sleep again.
final class PoolState: @unchecked Sendable {
    enum Take {
        case idle(Connection)
        case open
        case timedOut
    }

    private let lock = ConditionLock()
    private var idle: [Connection] = []
    private var waiters: [Waiter] = []
    private var count = 0
    private var lastRelease: ContinuousClock.Instant?

    var openCount: Int {
        lock.withLock { count }
    }

    var counts: (inUse: Int, idle: Int, waiting: Int, lastRelease: ContinuousClock.Instant?) {
        lock.withLock { (count - idle.count, idle.count, waiters.count, lastRelease) }
    }

    /// An idle connection, or permission to open one, or `.timedOut` at
    /// once when neither is to be had (nobody else waits then either: a
    /// connection given back goes to the first in line).
    func takeIfAvailable(limit: Int) -> Take {
        lock.withLock {
            if let connection = idle.popLast() { return .idle(connection) }
            guard count < limit else { return .timedOut }
            count += 1
            return .open
        }
    }

    /// An idle connection, or permission to open one (counted already), or a timeout.
    func take(limit: Int, until deadline: ContinuousClock.Instant) -> Take {
        lock.lock()
        if let connection = idle.popLast() {
            lock.unlock()
            return .idle(connection)
        }
        if count < limit {
            count += 1
            lock.unlock()
            return .open
        }
        let waiter = Waiter()
        waiters.append(waiter)
        lock.unlock()

        if let handed = waiter.wait(until: deadline) { return handed }
        // Out of time: leave the line, unless a connection was handed over meanwhile.
        let left = lock.withLock {
            guard let index = waiters.firstIndex(where: { $0 === waiter }) else { return false }
            waiters.remove(at: index)
            return true
        }
        return left ? .timedOut : waiter.waitForHandOver()
    }

    func putBack(_ connection: Connection) {
        let now = ContinuousClock.now
        lock.lock()
        lastRelease = now
        guard !waiters.isEmpty else {
            idle.append(connection)
            lock.unlock()
            return
        }
        let waiter = waiters.removeFirst()
        lock.unlock()
        waiter.hand(.idle(connection))
    }

    /// Frees the place of a connection that was closed or never opened.
    func forget() {
        lock.lock()
        guard !waiters.isEmpty else {
            count -= 1
            lock.unlock()
            return
        }
        // The place passes to the first in line, who opens a connection in it.
        let waiter = waiters.removeFirst()
        lock.unlock()
        waiter.hand(.open)
    }

    func takeAllIdle() -> [Connection] {
        lock.withLock {
            let connections = idle
            count -= idle.count
            idle = []
            return connections
        }
    }

    /// One caller waiting in line. `@unchecked Sendable`: `handed` is only
    /// touched with `lock` held.
    private final class Waiter: @unchecked Sendable {
        private let lock = ConditionLock()
        private var handed: Take?

        /// What was handed over by `deadline`, else `nil`.
        func wait(until deadline: ContinuousClock.Instant) -> Take? {
            lock.withLock {
                while handed == nil, lock.wait(until: deadline) {}
                return handed
            }
        }

        /// What is being handed over (the waiter has left the line, so it comes).
        func waitForHandOver() -> Take {
            lock.withLock {
                while true {
                    if let handed { return handed }
                    _ = lock.wait(until: .now + .seconds(1))
                }
            }
        }

        func hand(_ take: Take) {
            lock.withLock {
                handed = take
                lock.signal()
            }
        }
    }
}
