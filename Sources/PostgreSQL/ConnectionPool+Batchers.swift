import EventLoops
import FoundationEssentials
import PrometheusMetrics
import Locking
import Synchronization

// MARK: - The pipeline's loop

/// The loop a pool's pipeline runs on, and the pipeline: started on first
/// use, stopped (failing the jobs in flight) by the pool's `close()`, and
/// started again by the next use. `@unchecked Sendable`: the stored
/// properties are touched only with `lock` held; the pipeline only on its loop.
final class BatcherThread: @unchecked Sendable {
    private let lock = ConditionLock()
    private var loop: EventLoop?
    private var pipeline: LoopConfined<StatementBatcher>?

    deinit {
        loop?.stop()
    }

    func pipeline(_ make: (_ on: EventLoop) -> StatementBatcher) throws -> StatementBatcher {
        try lock.withLock {
            if let pipeline { return pipeline.value }
            let loop: EventLoop
            do {
                loop = try EventLoop(name: "pipeline")
            } catch {
                throw DatabaseError(code: .internalError, message: "cannot start the pipeline's thread: \(error)")
            }
            let made = make(loop)
            self.loop = loop
            pipeline = LoopConfined(made)
            return made
        }
    }

    /// Stops the loop; its pipeline's jobs in flight fail and its connections close.
    func stop() {
        let loop = lock.withLock {
            defer {
                self.loop = nil
                pipeline = nil
            }
            return self.loop
        }
        loop?.stop()
    }
}

/// The pipelines a pool keeps on other event loops (an HTTP server's), one
/// per loop, each kept among its loop's ``EventLoop/locals`` under a key
/// of the pool's own, and listed here so that the pool can shut them down.
/// `@unchecked Sendable`: `pipelines` is touched only with `lock` held, and
/// each pipeline only on its loop.
final class LoopBatchers: @unchecked Sendable {
    private static let nextKey = Atomic<Int>(0)
    /// The pool's key among a loop's locals (an `EventLoopDaemon` uses `Int.min`).
    private let key = LoopBatchers.nextKey.add(1, ordering: .relaxed).newValue
    private let lock = ConditionLock()
    private var pipelines: [(loop: EventLoop, pipeline: LoopConfined<StatementBatcher>)] = []

    /// The pipeline on `loop`, the calling thread's; made by `make` the first time.
    func pipeline(on loop: EventLoop, make: (_ on: EventLoop) -> StatementBatcher) -> StatementBatcher {
        if let existing = loop.locals[key] { return unsafeDowncast(existing, to: StatementBatcher.self) }
        let made = make(loop)
        loop.locals[key] = made
        lock.withLock { pipelines.append((loop, LoopConfined(made))) }
        return made
    }

    /// Fails the jobs in flight and closes the connections of every
    /// pipeline, each on its loop, and waits until they are closed. The
    /// pipelines stay, and open connections again for the next jobs.
    func shutDown() {
        for (loop, pipeline) in lock.withLock({ pipelines }) {
            loop.executeAndWait { pipeline.value.shutDown() }
        }
    }

    /// Takes the pipelines out of their loops (the pool is going away).
    func forget() {
        let key = key
        let forgotten = lock.withLock {
            defer { pipelines = [] }
            return pipelines
        }
        for (loop, _) in forgotten {
            loop.executeAndWait { _ = EventLoop.current?.locals.removeValue(forKey: key) }
        }
    }
}
