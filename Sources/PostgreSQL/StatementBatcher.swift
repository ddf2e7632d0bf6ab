internal import CLibPQ
#if canImport(Glibc)
import Glibc
#endif
import EventLoops
import PrometheusMetrics
import Locking

/// Runs short statements for many callers at once on a few connections in
/// libpq's non-blocking pipeline mode, driven by one ``EventLoop``, without
/// a thread waiting for each answer.
///
/// A pool runs its pipeline on a loop of its own (``ConnectionPool/pipeline``).
/// Callers hand in jobs from any thread (``submit(_:)``); at the end of the
/// loop's pass, the pipeline sends every job handed in since the last,
/// each ending in its own synchronization point, and reads the answers as
/// their sockets become readable. So one wake-up of a database backend
/// serves many jobs, and no caller sleeps on a socket of its own. A job's
/// statements run in order, as one pipeline: one that fails makes the
/// server skip the rest of that job (not of the others). Completions run
/// on the loop and must not block.
///
/// Each connection keeps its statements in its own cache
/// (``Connection/statements``), as a blocking connection does; a statement
/// new to a connection is prepared in the pipeline of its first execution
/// there, not in a round trip of its own. Connections are opened on demand
/// on a thread of their own, never on the loop, and handed to it when open.
///
/// Reads (``Job/access`` read-only, without a role) sent one after another on a connection in a
/// pass share a synchronization point, up to ``largestGroup`` of them: one
/// transaction, made read-only by its first statement, which PostgreSQL
/// ends once for all of them and answers with one flush; libpq 15 also
/// sends its buffer at each synchronization point (`PQpipelineSync`), so
/// one write carries the group, where a synchronization point per job would
/// cost a transaction and a flush each. A read that fails
/// makes the server skip the reads after it up to that point: they are
/// sent again, in a later group, so each job still gets its own outcome.
/// Every other job has a synchronization point, and so a transaction, of
/// its own.
///
/// For statements that answer quickly with few rows (a row by key and the
/// rows attached to it): a job's results are read whole, and a slow
/// statement holds up the jobs sent after it on the same connection.
package final class StatementBatcher {
    /// What a job runs and what becomes of the results.
    package struct Job {
        /// Builds the statements, on the loop, when a connection takes the
        /// job: `statement(sql)` is that connection's statement for `sql`
        /// (which the batcher prepares there if it is new).
        var statements: (_ statement: (String) -> PreparedStatement) throws -> [PipelinedStatement]
        /// Called once on the loop with a result per statement, in order
        /// (a statement's failure is its result, see `QueryResult.error`;
        /// `nil` for one skipped after a failure), or the failure of a
        /// preparation, of the role, or of the connection.
        var completion: (Result<[QueryResult?], any Error>) -> Void
        /// How the job's statements run: a read-only job's run in a
        /// read-only transaction (a write fails with `25006`), which,
        /// without a role, it may share with the reads sent beside it
        /// (see ``StatementBatcher``), and its statements must then be the
        /// same when they are asked for again; a job with a role has a
        /// transaction of its own, and a role that cannot be taken fails
        /// it with a ``RoleError``.
        var access: Access

        package init(
            access: Access,
            statements: @escaping (_ statement: (String) -> PreparedStatement) throws -> [PipelinedStatement],
            completion: @escaping (Result<[QueryResult?], any Error>) -> Void
        ) {
            self.access = access
            self.statements = statements
            self.completion = completion
        }

        /// Whether the job may share its synchronization point with other reads.
        var sharesTransaction: Bool { access.isReadOnly && access.role == nil }
    }

    /// The loop that drives the pipeline; everything below runs on it.
    package let loop: EventLoop
    let openConnection: @Sendable () throws -> Connection
    /// How many jobs each pass sent together (sizes of the batches).
    let batchSizes: Histogram
    /// How long a job may wait for a connection that makes progress.
    let waitTimeout: Duration
    /// A connection whose oldest job has been running this long gets no
    /// new ones (a lock, a slow statement): they wait for another, or
    /// time out as a pool's callers do.
    static let stallThreshold: Duration = .milliseconds(100)

    /// Jobs handed in from other threads, not yet taken by the loop;
    /// touched only with `incomingLock` held.
    let incomingLock = ConditionLock()
    @exclusivity(unchecked) var incoming: [Job] = []
    @exclusivity(unchecked) var isHandOverScheduled = false

    // The loop's own. `@exclusivity(unchecked)`: each access to a class's
    // stored property otherwise goes through the runtime's exclusivity
    // check (a `swift_beginAccess` and `swift_endAccess`, dozens per
    // request); none can overlap another, all being on the loop's thread.
    @exclusivity(unchecked) var slots: [Slot]
    /// Jobs handed in and not yet sent, oldest first.
    @exclusivity(unchecked) var waiting: [(job: Job, time: ContinuousClock.Instant)] = []
    @exclusivity(unchecked) var isSendScheduled = false
    @exclusivity(unchecked) var hookID: Int?
    /// Counts shutdowns: a connection opened for an earlier generation is closed, not used.
    @exclusivity(unchecked) var generation = 0
    /// When opening a connection last failed while others were open: no
    /// other is opened for a second.
    @exclusivity(unchecked) var failedOpening: ContinuousClock.Instant?

    enum Slot {
        case closed
        case opening
        case open(BatcherConnection)
    }

    /// - Parameters:
    ///   - loop: the loop that drives it.
    ///   - connections: how many connections it keeps (opened on demand).
    ///   - waitTimeout: how long a job waits for a connection (then ``PoolTimeoutError``).
    ///   - batchSizes: where the sizes of the batches sent are counted.
    ///   - openConnection: opens one, blocking (the pool's way, with its
    ///     settings); called on a thread of its own.
    init(
        loop: EventLoop, connections: Int, waitTimeout: Duration, batchSizes: Histogram,
        openConnection: @escaping @Sendable () throws -> Connection
    ) {
        self.loop = loop
        self.openConnection = openConnection
        self.waitTimeout = waitTimeout
        self.batchSizes = batchSizes
        self.slots = Array(repeating: .closed, count: max(1, connections))
    }

    /// Queues `job`, from any thread; it is sent at the end of the loop's
    /// pass, with the others handed in meanwhile. Once the loop has
    /// stopped, the job fails at once.
    package func submit(_ job: Job) {
        if loop.isCurrent { return enqueue(job) }
        // Jobs from other threads gather in `incoming`, which one task on the
        // loop takes whole: the HTTP loops hand in many jobs per pass of theirs.
        incomingLock.lock()
        incoming.append(job)
        let mustHandOver = !isHandOverScheduled
        isHandOverScheduled = true
        incomingLock.unlock()
        guard mustHandOver else { return }
        let pipeline = LoopConfined(self)
        let handOver = HandOver(self)
        loop.execute {
            handOver.ran = true
            let jobs = pipeline.value.takeIncoming()
            for job in jobs { pipeline.value.enqueue(job) }
        }
    }

    /// Fails the jobs handed in when the task that was to take them never
    /// runs: the loop refused it (it has stopped), or dropped it (it stopped
    /// before the task's turn, perhaps before this batcher's first job
    /// registered its stop hook). Either way the task is released unrun.
    private final class HandOver: @unchecked Sendable {
        // `@unchecked Sendable`: `ran` is set by the task on the loop's
        // thread, and read when the task is released, after it or instead of it.
        let batcher: StatementBatcher
        var ran = false

        init(_ batcher: StatementBatcher) {
            self.batcher = batcher
        }

        deinit {
            guard !ran else { return }
            for job in batcher.takeIncoming() { job.completion(.failure(StatementBatcher.closedError)) }
        }
    }

    func takeIncoming() -> [Job] {
        incomingLock.lock()
        defer { incomingLock.unlock() }
        isHandOverScheduled = false
        defer { incoming = [] }
        return incoming
    }

    static var closedError: DatabaseError {
        DatabaseError(code: .connectionFailure, message: "the connection pool is closed")
    }

    func enqueue(_ job: Job) {
        // Handed in by a stop hook that runs after this batcher's
        // `shutDown`: no pass is left to send it in.
        if loop.isEnding { return job.completion(.failure(Self.closedError)) }
        if hookID == nil {
            hookID = loop.addPassHook { [weak self] in self?.passEnded() ?? -1 }
            loop.onStop { [weak self] in self?.shutDown() }
        }
        waiting.append((job, .now))
        scheduleSend()
    }

    func scheduleSend() {
        guard !isSendScheduled else { return }
        isSendScheduled = true
        loop.runAtPassEnd {
            self.isSendScheduled = false
            self.sendWaiting()
            self.flushAll()
        }
    }

    /// Fails what is in flight and waiting, and closes the connections; a
    /// job submitted afterwards opens new ones (the jobs handed in and not
    /// yet taken too: `HandOver` fails them if their loop never takes them).
    /// On the loop.
    package func shutDown() {
        generation += 1
        for slot in slots.indices {
            switch slots[slot] {
            case .open(let connection): fail(connection, slot: slot, with: Self.closedError)
            case .opening: slots[slot] = .closed
            case .closed: break
            }
        }
        let jobs = waiting
        waiting = []
        for job in jobs { job.job.completion(.failure(Self.closedError)) }
    }

    /// At the end of every pass: jobs kept waiting too long, or sent behind
    /// one that does not finish, are answered; while there are such jobs,
    /// the loop looks again within 10 ms. (Waiting jobs are sent when a
    /// connection opens or answers, not from here.)
    func passEnded() -> Int {
        guard !waiting.isEmpty || hasQueuedBehind else { return -1 }
        let now = ContinuousClock.now
        abandonOverdueJobs(at: now)
        while let first = waiting.first, first.time.duration(to: now) >= waitTimeout {
            waiting.removeFirst()
            first.job.completion(.failure(timeoutError))
        }
        return 10
    }

    var hasQueuedBehind: Bool {
        for slot in slots {
            if case .open(let connection) = slot, connection.inFlight.count > 1 { return true }
        }
        return false
    }

    // MARK: - Sending

    /// Sends the waiting jobs, in order, while a connection takes them.
    func sendWaiting() {
        guard !waiting.isEmpty else { return }
        let now = ContinuousClock.now
        var taken = 0
        while taken < waiting.count, let available = availableConnection(at: now) {
            let next = waiting[taken]
            taken += 1
            send(next.job, submitted: next.time, on: available.connection, slot: available.slot)
        }
        waiting.removeFirst(taken)
        if taken > 0 { batchSizes.record(UInt64(taken)) }
        for slot in slots.indices {
            guard case .open(let connection) = slots[slot], connection.isGroupOpen, !endGroup(on: connection) else { continue }
            fail(connection, slot: slot, with: connection.connection.connectionError())
        }
    }

    var timeoutError: PoolTimeoutError {
        PoolTimeoutError(timeout: waitTimeout, poolSize: slots.count)
    }

    /// Jobs sent behind one that does not finish (a lock) have not started:
    /// past the wait timeout they are answered as a pool's waiting callers
    /// are, and their results dropped when they come.
    func abandonOverdueJobs(at now: ContinuousClock.Instant) {
        for slot in slots {
            guard case .open(let connection) = slot, connection.inFlight.count > 1 else { continue }
            for index in 1..<connection.inFlight.count where !connection.inFlight[index].isAbandoned {
                guard connection.inFlight[index].submitted.duration(to: now) >= waitTimeout else { break }
                connection.inFlight[index].isAbandoned = true
                connection.inFlight[index].job.completion(.failure(timeoutError))
            }
        }
    }

    func send(_ job: Job, submitted: ContinuousClock.Instant, on connection: BatcherConnection, slot: Int) {
        guard let handle = connection.connection.handle else {
            return fail(connection, slot: slot, with: connection.connection.connectionError(), andAlso: job)
        }
        let shares = job.sharesTransaction
        if connection.isGroupOpen, !shares || connection.groupSize >= Self.largestGroup, !endGroup(on: connection) {
            return fail(connection, slot: slot, with: connection.connection.connectionError(), andAlso: job)
        }
        if connection.connection.statements.isFull, connection.connection.preparesNothing {
            connection.connection.forgetPreparedStatements()
        } else if connection.connection.statements.isFull, connection.inFlight.isEmpty {
            // Between jobs only (a failed DEALLOCATE fails the oldest job in
            // flight, which must be the next one sent here), and before this
            // job takes its statements, so that it drops none of them.
            if PQsendQueryParams(handle, "DEALLOCATE ALL", 0, nil, nil, nil, nil, 0) == 1 {
                connection.expected.append(.preliminary(nil))
                connection.connection.forgetPreparedStatements()
            }
        }
        let statements: [PipelinedStatement]
        do {
            statements = try job.statements { connection.connection.statements.statementPreparedLater(for: $0) }
        } catch {
            return job.completion(.failure(error))
        }
        var sent = InFlight(job: job, count: statements.count, submitted: submitted, sent: .now)
        // The transaction up to the next synchronization point (a group's,
        // or the job's own) is made read-only by its first statement, so that
        // a read that writes fails (25006) rather than have its writes undone
        // by another's failure; then the job's role, if it has one.
        var preliminaries = job.access.preliminaries
        if connection.isGroupOpen { preliminaries.removeAll { $0.sql == Access.readOnlySQL } }
        for (sql, values) in preliminaries {
            let statement = connection.connection.statements.statementPreparedLater(for: sql)
            guard self.send(statement, values, as: .preliminary(nil), on: connection, handle: handle) else {
                return fail(connection, slot: slot, with: connection.connection.connectionError(), andAlso: job)
            }
        }
        if shares { connection.groupSize += 1 }
        let trace = job.access.trace
        if trace != nil { sent.spans = [] }
        for index in statements.indices {
            guard let statement = statements[index].prepared else { continue }
            var span: StatementSpan?
            if let trace {
                let started = StatementSpan(statement.parameters.sql, trace: trace, on: connection.connection)
                sent.spans?.append(started)
                span = started
            }
            guard
                self.send(
                    statement, statements[index].values, as: .statement, on: connection, handle: handle,
                    commentedSQL: span?.commentedSQL)
            else {
                sent.endSpansLeft(failure: nil)
                return fail(connection, slot: slot, with: connection.connection.connectionError(), andAlso: job)
            }
        }
        sent.results.reserveCapacity(statements.count)
        connection.inFlight.append(sent)
        connection.needsFlush = true
        if !shares, !endGroup(on: connection) {
            fail(connection, slot: slot, with: connection.connection.connectionError())
        }
    }

    /// The most reads that share a synchronization point. PostgreSQL
    /// answers a group with one flush at its end, and libpq sends what it
    /// holds at each one: in groups of this many, the answers of a pass's
    /// first reads come back, and the loop writes their responses, while
    /// PostgreSQL works on the next group. With one group per pass, each
    /// side would wait for the other's whole batch.
    static let largestGroup = 16

    /// Sends the execution of `statement`, prepared first if it is new to
    /// the connection, or its `commentedSQL` as the unnamed statement (a
    /// recording span's: `StatementSpan`); `false` when libpq refuses
    /// (the connection is lost).
    func send(
        _ statement: PreparedStatement, _ values: [String?], as expected: BatcherConnection.Expected,
        on connection: BatcherConnection, handle: OpaquePointer, commentedSQL: String? = nil
    ) -> Bool {
        if commentedSQL == nil, !statement.isPrepared, !connection.connection.preparesNothing {
            let accepted = statement.name.withCString { name in
                statement.parameters.sql.withCString { PQsendPrepare(handle, name, $0, 0, nil) }
            }
            guard accepted == 1 else { return false }
            statement.isPrepared = true
            connection.expected.append(.preliminary(statement))
        }
        guard connection.connection.sendExecution(of: statement, values, handle: handle, commentedSQL: commentedSQL) == 1 else {
            return false
        }
        connection.expected.append(expected)
        return true
    }

    /// Ends what was sent on `connection` since its last synchronization
    /// point (a job, or a group of reads) with one; `false` when libpq
    /// refuses (the connection is lost).
    func endGroup(on connection: BatcherConnection) -> Bool {
        connection.groupSize = 0
        guard let handle = connection.connection.handle, PQpipelineSync(handle) == 1 else { return false }
        connection.expected.append(.sync)
        if !connection.inFlight.isEmpty { connection.inFlight[connection.inFlight.count - 1].endsGroup = true }
        return true
    }

    func flushAll() {
        for slot in slots.indices {
            guard case .open(let connection) = slots[slot], connection.needsFlush else { continue }
            flush(connection, slot: slot)
        }
    }

    func flush(_ connection: BatcherConnection, slot: Int) {
        guard let handle = connection.connection.handle else { return }
        switch PQflush(handle) {
        case 0:
            connection.needsFlush = false
            connection.registration.interest = .readable
        case 1:
            // The socket is full: the rest goes once it has room.
            connection.registration.interest = [.readable, .writable]
        default:
            fail(connection, slot: slot, with: connection.connection.connectionError())
        }
    }

    /// The connection with the fewest jobs in flight among those whose
    /// oldest job is not stalled; `nil` when none can take a job now.
    ///
    /// A second connection opens only when every open one is stalled (or
    /// none is open), and the jobs wait for it: one connection takes every
    /// batch while it keeps up, which makes the batches, and so the jobs
    /// each wake-up of its backend serves, as large as they can be. After a failure to
    /// open one while others serve, none is opened for a second.
    func availableConnection(at now: ContinuousClock.Instant) -> (slot: Int, connection: BatcherConnection)? {
        var best: (slot: Int, connection: BatcherConnection)?
        var free: Int?
        var isOpening = false
        for slot in slots.indices {
            switch slots[slot] {
            case .closed:
                if free == nil { free = slot }
            case .opening:
                isOpening = true
            case .open(let connection):
                if let oldest = connection.inFlight.first, oldest.sent.duration(to: now) >= Self.stallThreshold { continue }
                if connection.inFlight.count < best?.connection.inFlight.count ?? .max { best = (slot, connection) }
            }
        }
        if let best { return best }
        if !isOpening, let free, failedOpening.map({ $0.duration(to: now) >= .seconds(1) }) ?? true {
            open(free)
        }
        return nil
    }

    /// Opens a connection for `slot` on a thread of its own (connecting
    /// blocks), and hands it to the loop.
    func open(_ slot: Int) {
        slots[slot] = .opening
        let generation = generation
        let loop = loop
        let openConnection = openConnection
        let pipeline = LoopConfined(Weak(self))
        let started = DetachedThread.start {
            let outcome = LoopConfined(Result { try openConnection() })
            let handed = loop.execute {
                guard let self = pipeline.value.object else {
                    if case .success(let connection) = outcome.value { connection.close() }
                    return
                }
                self.opened(outcome.value, slot: slot, generation: generation)
            }
            if !handed, case .success(let connection) = outcome.value { connection.close() }
        }
        if !started {
            opened(
                .failure(DatabaseError(code: .internalError, message: "cannot start a thread to connect")), slot: slot,
                generation: generation)
        }
    }

    func opened(_ outcome: Result<Connection, any Error>, slot: Int, generation: Int) {
        guard generation == self.generation, case .opening = slots[slot] else {
            if case .success(let connection) = outcome { connection.close() }
            return
        }
        do {
            let connection = try outcome.get()
            guard let handle = connection.handle, PQsetnonblocking(handle, 1) == 0, PQenterPipelineMode(handle) == 1 else {
                let error = connection.connectionError()
                connection.close()
                throw error
            }
            let registration = loop.register(PQsocket(handle), for: .readable) { [weak self] _ in
                self?.readable(slot: slot)
            }
            slots[slot] = .open(BatcherConnection(connection, registration: registration))
            failedOpening = nil
            if !waiting.isEmpty { scheduleSend() }
        } catch {
            slots[slot] = .closed
            // The jobs waiting for it fail with its error, unless another connection can take them.
            let isServing = slots.contains { if case .closed = $0 { false } else { true } }
            guard !isServing else {
                failedOpening = .now
                if !waiting.isEmpty { scheduleSend() }
                return
            }
            let jobs = waiting
            waiting = []
            for job in jobs { job.job.completion(.failure(error)) }
        }
    }

}

/// A weak reference, to hand a pipeline to a thread that may outlive it.
private struct Weak<Object: AnyObject> {
    weak var object: Object?
    init(_ object: Object) { self.object = object }
}

/// A pipeline belongs to its loop's thread.
@available(*, unavailable)
extension StatementBatcher: Sendable {}
