import EventLoops
import FoundationEssentials
import PrometheusMetrics
import Locking

// MARK: - The pool's own loop

/// The loop of a pool's batcher for callers without a loop of their own,
/// and the batcher: started on first use, stopped (failing the jobs in
/// flight) by the pool's `close()`, and started again by the next use.
/// `@unchecked Sendable`: the stored properties are touched only with
/// `lock` held; the batcher only on its loop.
final class BatcherThread: @unchecked Sendable {
    private let lock = ConditionLock()
    private var loop: EventLoop?
    private var batcher: LoopConfined<StatementBatcher>?

    deinit {
        loop?.stop()
    }

    func batcher(_ make: (_ on: EventLoop) -> StatementBatcher) throws -> StatementBatcher {
        try lock.withLock {
            if let batcher { return batcher.value }
            let loop: EventLoop
            do {
                loop = try EventLoop(name: "batcher")
            } catch {
                throw DatabaseError(code: .internalError, message: "cannot start the batcher's thread: \(error)")
            }
            let made = make(loop)
            self.loop = loop
            batcher = LoopConfined(made)
            return made
        }
    }

    /// Stops the loop; its batcher's jobs in flight fail and its connections close.
    func stop() {
        let loop = lock.withLock {
            defer {
                self.loop = nil
                batcher = nil
            }
            return self.loop
        }
        loop?.stop()
    }
}

/// The batchers a pool keeps on other event loops (an HTTP server's), one
/// per loop, made on first use. A batcher is handed jobs from any thread
/// (``StatementBatcher/submit(_:)``) and runs them on its loop.
/// `@unchecked Sendable`: `batchers` is touched only with `lock` held, and
/// each batcher's state only on its loop.
final class LoopBatchers: @unchecked Sendable {
    private let lock = Locked<[ObjectIdentifier: (loop: EventLoop, batcher: LoopConfined<StatementBatcher>)]>([:])

    /// The batcher on `loop`; made by `make` the first time.
    func batcher(on loop: EventLoop, make: (_ on: EventLoop) -> StatementBatcher) -> StatementBatcher {
        lock.withLock { batchers in
            if let existing = batchers[ObjectIdentifier(loop)] { return existing.batcher.value }
            let made = make(loop)
            batchers[ObjectIdentifier(loop)] = (loop, LoopConfined(made))
            return made
        }
    }

    /// Fails the jobs in flight and closes the connections of every
    /// batcher, each on its loop, and waits until they are closed. The
    /// batchers stay, and open connections again for the next jobs.
    func shutDown() {
        for (loop, batcher) in lock.withLock({ Array($0.values) }) {
            loop.executeAndWait { batcher.value.shutDown() }
        }
    }

    /// Drops the batchers (the pool is going away, its `close()` shut them down).
    func forget() {
        lock.withLock { $0 = [:] }
    }
}
