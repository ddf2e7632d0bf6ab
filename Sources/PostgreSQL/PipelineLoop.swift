internal import CLibPQ
#if canImport(Glibc)
import Glibc
#endif
import Instrumentation
import Locking

/// A thread that runs short statements for many callers at once on a few
/// connections in libpq's non-blocking pipeline mode, without a thread
/// waiting for each answer.
///
/// Callers hand in jobs from any thread (``submit(_:)``); the loop sends
/// every job that has arrived since it last looked, each ending in its own
/// synchronization point, and reads the answers as they come. So one
/// wake-up of a database backend serves many jobs, and no caller sleeps on
/// a socket of its own. A job's statements run in order, as one pipeline:
/// one that fails makes the server skip the rest of that job (not of the
/// others). Completions run on the loop thread and must not block.
///
/// Each connection keeps its statements in its own cache
/// (``Connection/statements``), as a blocking connection does; a statement
/// new to a connection is prepared in the pipeline of its first execution
/// there, not in a round trip of its own.
///
/// For statements that answer quickly with few rows (a row by key and the
/// rows attached to it): a job's results are read whole, and a slow
/// statement holds up the jobs sent after it on the same connection.
package final class PipelineLoop: @unchecked Sendable {
    // `@unchecked Sendable`: `submitted`, `isSleeping` and `isStopped` are
    // touched only with `lock` held; everything else only by the loop thread.

    /// What a job runs and what becomes of the results.
    package struct Job {
        /// Builds the statements, on the loop thread, when a connection
        /// takes the job: `statement(sql)` is that connection's statement
        /// for `sql` (which the loop prepares there if it is new).
        var statements: (_ statement: (String) -> PreparedStatement) throws -> [PipelinedStatement]
        /// Called once on the loop thread with a result per statement, in
        /// order (a statement's failure is its result, see
        /// `QueryResult.error`; `nil` for one skipped after a failure), or
        /// the failure of a preparation or of the connection.
        var completion: (Result<[QueryResult?], any Error>) -> Void

        package init(
            statements: @escaping (_ statement: (String) -> PreparedStatement) throws -> [PipelinedStatement],
            completion: @escaping (Result<[QueryResult?], any Error>) -> Void
        ) {
            self.statements = statements
            self.completion = completion
        }
    }

    private let openConnection: () throws -> Connection
    /// How many jobs each pass of the loop sent together (sizes of the batches).
    let batchSizes = Histogram(bounds: Histogram.sizeBounds)
    /// How long a job may wait for a connection that makes progress.
    private let waitTimeout: Duration
    /// A connection whose oldest job has been running this long gets no
    /// new ones (a lock, a slow statement): they wait for another, or
    /// time out as a pool's callers do.
    static let stallThreshold: Duration = .milliseconds(100)

    // The `var`s of the loop and of its connections are
    // `@exclusivity(unchecked)`: each access to a class's stored property
    // otherwise goes through the runtime's exclusivity check (a
    // `swift_beginAccess` and `swift_endAccess`, some thirty per request).
    // None can overlap another: each is touched under `lock` or by the loop
    // thread alone, as said above, and never while a mutation of it is in
    // progress.
    private let lock = ConditionLock()
    @exclusivity(unchecked) private var submitted: [(job: Job, time: ContinuousClock.Instant)] = []
    @exclusivity(unchecked) private var isSleeping = false
    @exclusivity(unchecked) private var isStopped = false
    @exclusivity(unchecked) private var hasThread = false

    /// A pipe whose reading end wakes the loop from `poll`.
    private let wakeReader: Int32
    private let wakeWriter: Int32

    // The loop thread's own.
    @exclusivity(unchecked) private var connections: [LoopConnection?]
    /// Jobs taken from `submitted` and not yet sent, oldest first.
    @exclusivity(unchecked) private var waiting: [(job: Job, time: ContinuousClock.Instant)] = []

    /// - Parameters:
    ///   - connections: how many connections the loop keeps (opened on demand).
    ///   - waitTimeout: how long a job waits for a connection (then ``PoolTimeoutError``).
    ///   - openConnection: opens one, blocking (the pool's way, with its settings).
    init(connections: Int, waitTimeout: Duration, openConnection: @escaping () throws -> Connection) {
        self.openConnection = openConnection
        self.waitTimeout = waitTimeout
        self.connections = Array(repeating: nil, count: max(1, connections))
        var ends: [Int32] = [-1, -1]
        _ = pipe(&ends)
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        wakeReader = ends[0]
        wakeWriter = ends[1]
    }

    deinit {
        for connection in connections { connection?.connection.close() }
        close(wakeReader)
        close(wakeWriter)
    }

    /// Queues `job`; the loop thread starts on first use. After ``stop()``
    /// the job fails at once.
    package func submit(_ job: Job) {
        lock.lock()
        if isStopped {
            lock.unlock()
            job.completion(.failure(DatabaseError(code: .connectionFailure, message: "the connection pool is closed")))
            return
        }
        submitted.append((job, .now))
        let mustWake = isSleeping
        isSleeping = false
        let start = !hasThread
        hasThread = true
        lock.unlock()
        if start {
            if !DetachedThread.start({ self.run() }) {
                lock.withLock { hasThread = false }
                failSubmitted(DatabaseError(code: .internalError, message: "cannot start the pipeline thread"))
            }
        } else if mustWake {
            wake()
        }
    }

    private func wake() {
        var one: UInt8 = 1
        _ = write(wakeWriter, &one, 1)
    }

    /// Stops the loop: jobs in flight fail, the connections close. A job
    /// submitted afterwards starts it again.
    func stop() {
        let running = lock.withLock {
            guard hasThread else { return false }
            isStopped = true
            isSleeping = false
            return true
        }
        guard running else { return }
        wake()
    }

    // MARK: - The loop

    private func run() {
        var sockets: [pollfd] = []
        var drained = [UInt8](repeating: 0, count: 64)
        while true {
            lock.lock()
            if isStopped {
                lock.unlock()
                shutDown()
                lock.withLock {
                    isStopped = false
                    hasThread = false
                }
                return
            }
            waiting += submitted
            submitted.removeAll(keepingCapacity: true)
            lock.unlock()
            sendWaiting()
            abandonOverdueJobs()
            flushAll()

            sockets.removeAll(keepingCapacity: true)
            sockets.append(pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0))
            for connection in connections {
                guard let connection else { continue }
                let events = POLLIN | (connection.needsFlush ? POLLOUT : 0)
                sockets.append(pollfd(fd: connection.socket, events: Int16(events), revents: 0))
            }
            lock.lock()
            let mustSleep = submitted.isEmpty && !isStopped
            if mustSleep { isSleeping = true }
            lock.unlock()
            // Jobs kept waiting, or sent behind others, are looked at again every 10 ms.
            let count = poll(&sockets, nfds_t(sockets.count), mustSleep ? (hasTimedWork ? 10 : -1) : 0)
            lock.withLock { isSleeping = false }
            guard count > 0 else { continue }
            if sockets[0].revents != 0 {
                while read(wakeReader, &drained, drained.count) > 0 {}
            }
            for index in sockets.indices.dropFirst() where sockets[index].revents != 0 {
                guard let slot = connections.firstIndex(where: { $0?.socket == sockets[index].fd }),
                      let connection = connections[slot]
                else { continue }
                receive(on: connection, slot: slot)
            }
        }
    }

    private func shutDown() {
        let failure = DatabaseError(code: .connectionFailure, message: "the connection pool is closed")
        for slot in connections.indices {
            guard let connection = connections[slot] else { continue }
            fail(connection, slot: slot, with: failure)
        }
        let jobs = waiting
        waiting = []
        for job in jobs { job.job.completion(.failure(failure)) }
        failSubmitted(failure)
    }

    private func failSubmitted(_ failure: DatabaseError) {
        let jobs = lock.withLock {
            let jobs = submitted
            submitted = []
            return jobs
        }
        for job in jobs { job.job.completion(.failure(failure)) }
    }

    /// Sends the waiting jobs, in order, while a connection takes them;
    /// fails those that waited too long, and one for which no connection
    /// could be opened.
    private func sendWaiting() {
        guard !waiting.isEmpty else { return }
        let now = ContinuousClock.now
        var taken = 0
        while taken < waiting.count {
            let next = waiting[taken]
            let available: (slot: Int, connection: LoopConnection)?
            do {
                available = try availableConnection(at: now)
            } catch {
                taken += 1
                next.job.completion(.failure(error))
                continue
            }
            guard let available else { break }
            taken += 1
            send(next.job, submitted: next.time, on: available.connection, slot: available.slot)
        }
        waiting.removeFirst(taken)
        if taken > 0 { batchSizes.record(UInt64(taken)) }
        while let first = waiting.first, first.time.duration(to: now) >= waitTimeout {
            waiting.removeFirst()
            first.job.completion(.failure(timeoutError))
        }
    }

    private var timeoutError: PoolTimeoutError {
        PoolTimeoutError(timeout: waitTimeout, poolSize: connections.count)
    }

    /// Jobs sent behind one that does not finish (a lock) have not started:
    /// past the wait timeout they are answered as a pool's waiting callers
    /// are, and their results dropped when they come.
    private func abandonOverdueJobs() {
        let now = ContinuousClock.now
        for connection in connections {
            guard let connection, connection.inFlight.count > 1 else { continue }
            for index in 1..<connection.inFlight.count where !connection.inFlight[index].isAbandoned {
                guard connection.inFlight[index].submitted.duration(to: now) >= waitTimeout else { break }
                connection.inFlight[index].isAbandoned = true
                connection.inFlight[index].job.completion(.failure(timeoutError))
            }
        }
    }

    /// Whether the loop must look again soon without input: jobs wait, or
    /// some were sent behind others and may become overdue.
    private var hasTimedWork: Bool {
        !waiting.isEmpty || connections.contains { ($0?.inFlight.count ?? 0) > 1 }
    }

    // MARK: - Sending

    private func send(_ job: Job, submitted: ContinuousClock.Instant, on connection: LoopConnection, slot: Int) {
        guard let handle = connection.connection.handle else {
            return fail(connection, slot: slot, with: connection.connection.connectionError(), andAlso: job)
        }
        if connection.connection.statements.isFull, connection.connection.preparesNothing {
            connection.connection.forgetPreparedStatements()
        } else if connection.connection.statements.isFull, connection.inFlight.isEmpty {
            // Between jobs only (a failed DEALLOCATE fails the oldest job in
            // flight, which must be the next one sent here), and before this
            // job takes its statements, so that it drops none of them.
            if PQsendQueryParams(handle, "DEALLOCATE ALL", 0, nil, nil, nil, nil, 0) == 1 {
                connection.expected.append(.prepare(nil))
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
        for index in statements.indices {
            guard let statement = statements[index].prepared else { continue }
            if !statement.isPrepared, !connection.connection.preparesNothing {
                let accepted = statement.name.withCString { name in
                    statement.parameters.sql.withCString { PQsendPrepare(handle, name, $0, 0, nil) }
                }
                guard accepted == 1 else {
                    return fail(connection, slot: slot, with: connection.connection.connectionError(), andAlso: job)
                }
                statement.isPrepared = true
                connection.expected.append(.prepare(statement))
            }
            guard connection.connection.sendExecution(of: statement, statements[index].values, handle: handle) == 1 else {
                return fail(connection, slot: slot, with: connection.connection.connectionError(), andAlso: job)
            }
            connection.expected.append(.statement)
        }
        guard PQpipelineSync(handle) == 1 else {
            return fail(connection, slot: slot, with: connection.connection.connectionError(), andAlso: job)
        }
        connection.expected.append(.sync)
        sent.results.reserveCapacity(statements.count)
        connection.inFlight.append(sent)
        connection.needsFlush = true
    }

    private func flushAll() {
        for slot in connections.indices {
            guard let connection = connections[slot], connection.needsFlush, let handle = connection.connection.handle
            else { continue }
            switch PQflush(handle) {
            case 0:
                connection.needsFlush = false
            case 1:
                // The socket is full: more when it drains (`poll` waits for it).
                break
            default:
                fail(connection, slot: slot, with: connection.connection.connectionError())
            }
        }
    }

    /// The connection with the fewest jobs in flight among those whose
    /// oldest job is not stalled, opening one where a place is free and
    /// every open one is busy; `nil` when none can take a job now.
    private func availableConnection(at now: ContinuousClock.Instant) throws -> (slot: Int, connection: LoopConnection)? {
        var best: Int?
        for slot in connections.indices {
            guard let connection = connections[slot] else {
                if best == nil || !connections[best!]!.inFlight.isEmpty { return (slot, try open(slot)) }
                continue
            }
            if let oldest = connection.inFlight.first, oldest.sent.duration(to: now) >= Self.stallThreshold { continue }
            if best == nil || connection.inFlight.count < connections[best!]!.inFlight.count { best = slot }
        }
        return best.map { ($0, connections[$0]!) }
    }

    private func open(_ slot: Int) throws -> LoopConnection {
        let connection = try openConnection()
        guard let handle = connection.handle, PQsetnonblocking(handle, 1) == 0, PQenterPipelineMode(handle) == 1 else {
            let error = connection.connectionError()
            connection.close()
            throw error
        }
        let loopConnection = LoopConnection(connection, socket: PQsocket(handle))
        connections[slot] = loopConnection
        return loopConnection
    }

    // MARK: - Receiving

    private func receive(on connection: LoopConnection, slot: Int) {
        guard let handle = connection.connection.handle else { return }
        if connection.needsFlush, PQflush(handle) == 0 {
            connection.needsFlush = false
        }
        guard PQconsumeInput(handle) == 1 else {
            return fail(connection, slot: slot, with: connection.connection.connectionError())
        }
        while !connection.expected.isEmpty, PQisBusy(handle) == 0 {
            let raw = PQgetResult(handle)
            switch connection.expected[connection.expectedStart] {
            case .prepare(let statement):
                guard let raw else {
                    connection.advance()
                    continue
                }
                let result = QueryResult(taking: raw)
                guard let error = result.error else { continue }
                // Not prepared after all: the next job that needs it prepares it again.
                statement?.isPrepared = false
                // Skipped after an earlier statement's failure, which tells what happened.
                if result.status == PGRES_PIPELINE_ABORTED { continue }
                // The job's statements fail too; the preparation's error is the one that tells.
                if !connection.inFlight.isEmpty, connection.inFlight[0].failure == nil {
                    connection.inFlight[0].failure = error
                }
            case .statement:
                guard let raw else {
                    connection.advance()
                    continue
                }
                let result = QueryResult(taking: raw)
                guard !connection.inFlight.isEmpty else { continue }
                connection.inFlight[0].results.append(result.status == PGRES_PIPELINE_ABORTED ? nil : result)
            case .sync:
                guard let raw else {
                    // Not yet: the synchronization point comes with the next input.
                    return
                }
                let status = PQresultStatus(raw)
                PQclear(raw)
                guard status == PGRES_PIPELINE_SYNC else { continue }
                connection.advance()
                guard !connection.inFlight.isEmpty else { continue }
                let done = connection.inFlight.removeFirst()
                if done.isAbandoned { continue }
                if let failure = done.failure {
                    done.job.completion(.failure(failure))
                } else if done.results.count != done.count {
                    done.job.completion(.failure(DatabaseError(
                        code: .internalError, message: "a pipelined statement came back without a result")))
                } else {
                    done.job.completion(.success(done.results))
                }
            }
        }
        if PQstatus(handle) == CONNECTION_BAD {
            fail(connection, slot: slot, with: connection.connection.connectionError())
        }
    }

    /// The connection is lost: its jobs (and `job`) fail, it closes, and a
    /// new one takes its place on the next job.
    private func fail(_ connection: LoopConnection, slot: Int, with error: DatabaseError, andAlso job: Job? = nil) {
        connections[slot] = nil
        let lost = connection.inFlight
        connection.inFlight = []
        connection.connection.close()
        var failure = error
        if !failure.isConnectionFailure {
            failure = DatabaseError(code: .connectionFailure, message: error.message)
        }
        for inFlight in lost where !inFlight.isAbandoned { inFlight.job.completion(.failure(failure)) }
        job?.completion(.failure(failure))
    }
}

// MARK: - Connections of the loop

/// A job sent, waiting for its results.
private struct InFlight {
    let job: PipelineLoop.Job
    /// How many statement results make it complete.
    let count: Int
    let submitted: ContinuousClock.Instant
    let sent: ContinuousClock.Instant
    /// Answered already (overdue behind a job that does not finish).
    var isAbandoned = false
    var results: [QueryResult?] = []
    /// A preparation's failure, which fails the whole job.
    var failure: (any Error)?

    init(job: PipelineLoop.Job, count: Int, submitted: ContinuousClock.Instant, sent: ContinuousClock.Instant) {
        self.job = job
        self.count = count
        self.submitted = submitted
        self.sent = sent
    }
}

/// One connection of the loop, in pipeline mode, and what it waits for.
/// Touched by the loop thread alone: its `var`s are not checked for
/// exclusivity at run time (see `PipelineLoop`).
private final class LoopConnection {
    enum Expected {
        /// A preparation (of the statement), or `DEALLOCATE ALL`.
        case prepare(PreparedStatement?)
        case statement
        case sync
    }

    let connection: Connection
    let socket: Int32
    @exclusivity(unchecked) var inFlight: [InFlight] = []
    /// The results still to come, in order, from `expectedStart` on.
    @exclusivity(unchecked) var expected: [Expected] = []
    @exclusivity(unchecked) var expectedStart = 0
    @exclusivity(unchecked) var needsFlush = false

    init(_ connection: Connection, socket: Int32) {
        self.connection = connection
        self.socket = socket
    }

    func advance() {
        expectedStart += 1
        if expectedStart == expected.count {
            expected.removeAll(keepingCapacity: true)
            expectedStart = 0
        } else if expectedStart >= 1024 {
            expected.removeFirst(expectedStart)
            expectedStart = 0
        }
    }
}
