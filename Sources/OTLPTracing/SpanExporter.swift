import Locking
import Logging

/// Finished spans, gathered and sent in batches by a thread of its own:
/// a batch goes when it is full or when its oldest span has waited
/// ``OTLPTracer/Configuration/exportDelay``. Ending a span only appends it
/// to the queue under a lock; nothing on a request's path waits for the
/// collector. A full queue drops the new spans, and a failed export its
/// batch; both are counted, and logged at most once a minute.
// `@unchecked Sendable`: `state` is read and written with `lock` held only.
final class SpanExporter: @unchecked Sendable {
    private let endpoint: OTLPEndpoint
    private let resource: OTLPResource
    private let configuration: OTLPTracer.Configuration
    private let logger: Logger
    private let lock = ConditionLock()
    private var state = State()

    private struct State {
        var queue: [FinishedSpan] = []
        /// When the oldest span in the queue came.
        var oldest: ContinuousClock.Instant?
        /// Flushes asked for and not yet done: the thread exports all it holds.
        var flushes = 0
        /// Exports finished, to tell a flush when its turn is done.
        var rounds = 0
        var isStopping = false
        var isStopped = false
        var dropped = 0
        var lastWarning: ContinuousClock.Instant?
    }

    init(endpoint: OTLPEndpoint, resource: OTLPResource, configuration: OTLPTracer.Configuration, logger: Logger) throws {
        self.endpoint = endpoint
        self.resource = resource
        self.configuration = configuration
        self.logger = logger
        guard DetachedThread.start({ [self] in run() }) else {
            throw OTLPEndpoint.Problem(description: "cannot start the thread that exports spans")
        }
    }

    /// Queues `span` for export, or drops it when the queue is full.
    func add(_ span: FinishedSpan) {
        lock.withLock {
            guard !state.isStopped, state.queue.count < configuration.maximumQueuedSpans else {
                state.dropped += 1
                return
            }
            if state.queue.isEmpty { state.oldest = .now }
            state.queue.append(span)
            if state.queue.count == configuration.maximumBatchSize || state.queue.count == 1 { lock.broadcast() }
        }
    }

    /// Returns once the spans queued before the call have been sent (or dropped), or after 10 s.
    func flush() {
        let deadline = ContinuousClock.now + .seconds(10)
        lock.lock()
        defer { lock.unlock() }
        guard !state.isStopped else { return }
        state.flushes += 1
        let round = state.rounds
        lock.broadcast()
        while state.rounds <= round, !state.isStopped, lock.wait(until: deadline) {}
    }

    /// Sends what is queued, then stops the thread.
    func shutdown() {
        lock.withLock {
            state.isStopping = true
            lock.broadcast()
        }
        flush()
    }

    var droppedSpans: Int { lock.withLock { state.dropped } }

    // MARK: - The export thread

    private func run() {
        let connection = OTLPConnection(endpoint)
        while true {
            let (batch, stops) = nextBatch()
            if !batch.isEmpty { export(batch, on: connection) }
            if stops { connection.close() }
            lock.withLock {
                state.rounds += 1
                if stops { state.isStopped = true }
                // Wakes a flush waiting for this round.
                lock.broadcast()
            }
            if stops { return }
        }
    }

    /// Waits until a batch is due, and takes it; whether the thread stops after it.
    private func nextBatch() -> (batch: [FinishedSpan], stops: Bool) {
        lock.lock()
        defer { lock.unlock() }
        while true {
            let isDue =
                state.queue.count >= configuration.maximumBatchSize || state.flushes > 0 || state.isStopping
                || state.oldest.map { $0.duration(to: .now) >= configuration.exportDelay } ?? false
            if isDue {
                let count = min(state.queue.count, configuration.maximumBatchSize)
                let batch = Array(state.queue.prefix(count))
                state.queue.removeFirst(count)
                state.oldest = state.queue.isEmpty ? nil : .now
                if state.queue.isEmpty { state.flushes = 0 }
                return (batch, state.isStopping && state.queue.isEmpty)
            }
            _ = lock.wait(until: state.oldest.map { $0 + configuration.exportDelay } ?? .now + .seconds(60))
        }
    }

    private func export(_ batch: [FinishedSpan], on connection: OTLPConnection) {
        let body = OTLPProtobuf.exportRequest(batch, resource: resource)
        let failure: String?
        do {
            let status = try connection.post(body)
            failure = (200..<300).contains(status) ? nil : "the collector answered \(status)"
        } catch {
            failure = "\(error)"
        }
        guard let failure else { return }
        let warns = lock.withLock { () -> Bool in
            state.dropped += batch.count
            if let last = state.lastWarning, last.duration(to: .now) < .seconds(60) { return false }
            state.lastWarning = .now
            return true
        }
        if warns {
            logger.warning("\(batch.count) spans were not exported to \(endpoint.description): \(failure) (said at most once a minute)")
        }
    }
}
