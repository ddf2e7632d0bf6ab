import EventLoops
import FoundationEssentials
import PrometheusMetrics
import Locking
import Synchronization

/// A bounded set of connections shared by blocking threads.
///
/// Connections are opened on demand up to `size`. A caller that finds all
/// of them busy waits up to `acquireTimeout`, then gets a
/// ``PoolTimeoutError``. Broken connections (server restart,
/// `pg_terminate_backend`) are dropped and replaced by new ones, and a
/// connection comes back clean: an unfinished query is cancelled and an
/// open transaction rolled back before another caller gets it.
///
/// ```swift
/// let pool = ConnectionPool(.init(size: 20))
/// let count = try pool.withConnection { connection in
///     try connection.fetchOne(Int.self, "SELECT count(*) AS value FROM employees")
/// }
/// ```
public final class ConnectionPool: Sendable {
    /// How the pool connects and how many connections it keeps.
    ///
    /// ```swift
    /// var configuration = ConnectionPool.Configuration()
    /// configuration.size = 4
    /// configuration.statementTimeout = .seconds(30)
    /// ```
    public struct Configuration: Sendable {
        /// A libpq connection string or URL; empty means the `PG*` environment
        /// variables. The pool reads no other variable: a program that
        /// honours `DATABASE_URL` passes it here.
        public var conninfo: String
        /// The most connections open at once.
        public var size: Int
        /// How long ``ConnectionPool/acquire()`` waits for a free connection.
        public var acquireTimeout: Duration
        /// If set, every connection runs `SET statement_timeout` with it
        /// after connecting (not when ``poolerCompatible``: set it on the
        /// role, `ALTER ROLE ... SET statement_timeout`, instead).
        public var statementTimeout: Duration?
        /// If set, every connection runs `SET idle_in_transaction_session_timeout`
        /// with it after connecting (not when ``poolerCompatible``): PostgreSQL
        /// ends a session whose transaction waits longer than this for its
        /// next statement, so a transaction its holder forgot, or a client
        /// that stopped reading, cannot hold locks and a connection for good.
        public var idleInTransactionTimeout: Duration?
        /// Connections of each batcher (one per event loop that uses the
        /// pool: `batcher(on:)`), in libpq's pipeline mode,
        /// which run the short statements of non-blocking callers (a row by
        /// key, in PostgreSQLWebService) for many of them at once; opened on
        /// first use, besides `size`.
        public var pipelineConnections: Int
        /// Whether the connections leave no state on the server between
        /// transactions: no named prepared statements (each statement is
        /// sent with its text) and no `SET`. For a pooler in transaction
        /// mode, such as PgBouncer before 1.21, whose server connections
        /// change from one transaction to the next.
        public var poolerCompatible: Bool
        /// Whether streamed rows are read from an unencrypted connection's
        /// socket, one `DataRow` at a time (the default), rather than by
        /// libpq's single-row mode, which builds a result per row. An
        /// encrypted connection always streams through libpq.
        public var readsRowsFromSocket: Bool
        /// The pool's name, as the spans of its statements give it
        /// (`db.sqlrest.pool`): `primary`, or `replica-1`, `replica-2`, …
        public var name = "primary"

        /// Creates a configuration; each parameter sets the property of
        /// its name, and has a default. `conninfo` defaults to empty:
        /// libpq then reads `PGHOST`, `PGPORT`, `PGDATABASE`, ...
        ///
        /// ```swift
        /// let configuration = ConnectionPool.Configuration(conninfo: "postgresql:///employees", size: 8)
        /// ```
        public init(
            conninfo: String = "",
            size: Int = 10,
            acquireTimeout: Duration = .seconds(5),
            statementTimeout: Duration? = nil,
            idleInTransactionTimeout: Duration? = nil,
            pipelineConnections: Int = 2,
            poolerCompatible: Bool = false,
            readsRowsFromSocket: Bool = true
        ) {
            self.readsRowsFromSocket = readsRowsFromSocket
            self.idleInTransactionTimeout = idleInTransactionTimeout
            self.conninfo = conninfo
            self.size = max(1, size)
            self.acquireTimeout = acquireTimeout
            self.statementTimeout = statementTimeout
            self.pipelineConnections = max(1, pipelineConnections)
            self.poolerCompatible = poolerCompatible
        }
    }

    /// The configuration the pool was created with.
    public let configuration: Configuration
    private let state: PoolState
    /// How long ``acquire()`` took, in nanoseconds, for `/metrics`.
    private let acquireDurations = Histogram(bounds: Histogram.durationBounds)
    /// How many jobs each pass of a batcher sent together.
    private let batchSizes = Histogram(bounds: Histogram.sizeBounds)
    /// The batcher of callers without an event loop, on a loop of its own,
    /// started on first use and stopped by ``close()``.
    private let batcherLoop = BatcherThread()
    /// The batchers on the event loops callers named (``batcher(on:)``).
    private let loopBatchers = LoopBatchers()

    /// Whether the database loses prepared statements (a pooler in
    /// transaction mode), found on the first connection.
    private let poolerCheck: PoolerCheck

    /// Creates a pool; no connection is opened until one is needed. Unless
    /// the configuration is ``Configuration/poolerCompatible``, the first
    /// connection finds out whether the database is reached through a
    /// pooler that loses prepared statements (``PoolerProbe``), and if it
    /// is, the pool's connections prepare nothing, as with
    /// `poolerCompatible`; `onPoolerFound` is told what was found, once.
    ///
    /// ```swift
    /// let pool = ConnectionPool()  // PG* variables, 10 connections, 5 s timeout
    /// let logged = ConnectionPool(configuration) { finding in print("pooler: \(finding)") }
    /// ```
    public init(_ configuration: Configuration = Configuration(), onPoolerFound: (@Sendable (PoolerProbe.Finding) -> Void)? = nil) {
        self.configuration = configuration
        self.state = PoolState()
        self.poolerCheck = PoolerCheck(report: onPoolerFound)
    }

    // MARK: - Batchers

    /// The batcher that runs the short statements of non-blocking callers
    /// on `loop` (made there on first use), or, without a loop, on a loop
    /// of the pool's own (a thread that starts on first use). Its jobs
    /// complete on that loop.
    ///
    /// Given the loop that received a request, the request's statements,
    /// their answers and its response stay on one thread: no hand-off to
    /// another thread and back, no wake-up of it. Each pass of the loop
    /// reads every request that has come, and the batcher sends their
    /// statements together at its end. With two loops, each with its
    /// batcher, the batches halve and each loop sleeps more: see
    /// `ServerOptions.eventLoops` for how many loops.
    ///
    /// - Throws: ``DatabaseError`` when the pool's own loop cannot be started.
    ///
    /// ```swift
    /// pool.batcher(on: request.eventLoop).submit(job)
    /// ```
    package func batcher(on loop: EventLoop?) throws -> StatementBatcher {
        guard let loop else { return try batcherLoop.batcher(makeBatcher) }
        return loopBatchers.batcher(on: loop, make: makeBatcher)
    }

    private func makeBatcher(on loop: EventLoop) -> StatementBatcher {
        let configuration = configuration
        let poolerCheck = poolerCheck
        return StatementBatcher(
            loop: loop, connections: configuration.pipelineConnections, waitTimeout: configuration.acquireTimeout,
            batchSizes: batchSizes
        ) {
            try ConnectionPool.openConnection(configuration, poolerCheck: poolerCheck)
        }
    }

    deinit {
        close()
        loopBatchers.forget()
    }

    // MARK: - Acquiring and releasing

    /// Takes a connection for exclusive use; give it back with ``release(_:)``.
    ///
    /// Use this pair when the connection must outlive one call, as a
    /// streaming response body does; otherwise prefer ``withConnection(_:)``.
    ///
    /// - Throws: ``PoolTimeoutError`` when no connection frees up in time,
    ///   ``DatabaseError`` when a new connection cannot be opened.
    ///
    /// ```swift
    /// let connection = try pool.acquire()
    /// defer { pool.release(connection) }
    /// ```
    public func acquire() throws -> Connection {
        let started = ContinuousClock.now
        let deadline = started + configuration.acquireTimeout
        defer { acquireDurations.record(started.duration(to: .now)) }
        while true {
            switch state.take(limit: configuration.size, until: deadline) {
            case .idle(let connection):
                if connection.checkIdleHealth() { return connection }
                connection.close()
                state.forget()
            case .open:
                do {
                    return try Self.openConnection(configuration, poolerCheck: poolerCheck)
                } catch {
                    state.forget()
                    throw error
                }
            case .timedOut:
                throw PoolTimeoutError(timeout: configuration.acquireTimeout, poolSize: configuration.size)
            }
        }
    }

    /// Runs `body` with a connection if one is idle or can be opened now;
    /// returns `nil` at once, without waiting in line, when every
    /// connection is in use. For probes, which must answer quickly under
    /// full load.
    ///
    /// ```swift
    /// let answered = try pool.withConnectionIfAvailable { try $0.execute("SELECT 1") } != nil
    /// ```
    public func withConnectionIfAvailable<Result>(_ body: (Connection) throws -> Result) throws -> Result? {
        var connection: Connection?
        while connection == nil {
            switch state.takeIfAvailable(limit: configuration.size) {
            case .idle(let idle):
                if idle.checkIdleHealth() {
                    connection = idle
                } else {
                    idle.close()
                    state.forget()
                }
            case .open:
                do {
                    connection = try Self.openConnection(configuration, poolerCheck: poolerCheck)
                } catch {
                    state.forget()
                    throw error
                }
            case .timedOut:
                return nil
            }
        }
        guard let connection else { return nil }
        defer { release(connection) }
        return try body(connection)
    }

    /// Gives back a connection taken with ``acquire()``.
    ///
    /// A query still streaming is cancelled, an open transaction rolled
    /// back; a broken connection is closed so that a new one replaces it.
    ///
    /// ```swift
    /// pool.release(connection)
    /// ```
    public func release(_ connection: Connection) {
        connection.trace = nil
        connection.finishActiveCursor()
        connection.rollBackQuietly()
        if connection.isBroken || connection.isInTransaction {
            connection.close()
            state.forget()
        } else {
            state.putBack(connection)
        }
    }

    /// ``acquire()`` for work with `access`: the connection's statements
    /// are traced under the access's trace until it goes back.
    ///
    /// ```swift
    /// let connection = try pool.acquire(for: access)
    /// defer { pool.release(connection) }
    /// ```
    package func acquire(for access: Access) throws -> Connection {
        let connection = try acquire()
        connection.trace = access.trace
        return connection
    }

    /// ``withConnection(_:)`` for work with `access` (see ``acquire(for:)``).
    package func withConnection<Result>(for access: Access, _ body: (Connection) throws -> Result) throws -> Result {
        let connection = try acquire(for: access)
        defer { release(connection) }
        return try body(connection)
    }

    /// Runs `body` with a connection from the pool and gives it back afterwards.
    ///
    /// ```swift
    /// try pool.withConnection { try $0.execute("DELETE FROM sessions WHERE expires < now()") }
    /// ```
    public func withConnection<Result>(_ body: (Connection) throws -> Result) throws -> Result {
        let connection = try acquire()
        defer { release(connection) }
        return try body(connection)
    }

    /// Runs `body` in a transaction on a pooled connection: committed when
    /// `body` returns, rolled back when it throws.
    ///
    /// ```swift
    /// let titles = try pool.transaction(readOnly: true) { connection in
    ///     try connection.fetchAll(Title.self, "SELECT title FROM titles WHERE emp_no = :id", ["id": 10001])
    /// }
    /// ```
    @discardableResult
    public func transaction<Result>(readOnly: Bool = false, _ body: (Connection) throws -> Result) throws -> Result {
        try withConnection { connection in
            try connection.transaction(readOnly: readOnly, body)
        }
    }

    /// Closes the idle connections and the pipeline's (done also when the
    /// pool goes away). Connections in use stay open until they are
    /// released; non-blocking statements in flight fail. The pool can be
    /// used again afterwards: it opens new connections.
    ///
    /// ```swift
    /// pool.close()
    /// ```
    public func close() {
        batcherLoop.stop()
        loopBatchers.shutDown()
        for connection in state.takeAllIdle() {
            connection.close()
        }
    }

    /// The number of connections open or being opened, idle or in use.
    ///
    /// ```swift
    /// pool.openConnectionCount // 0 before first use
    /// ```
    public var openConnectionCount: Int { state.openCount }

    /// What the pool is doing now and has done, for `/metrics`.
    ///
    /// ```swift
    /// let statistics = pool.statistics
    /// print(statistics.inUse, statistics.idle, statistics.waiting)
    /// ```
    public var statistics: Statistics {
        let counts = state.counts
        return Statistics(
            inUse: counts.inUse, idle: counts.idle, waiting: counts.waiting, size: configuration.size,
            sinceLastRelease: counts.lastRelease.map { $0.duration(to: .now) },
            acquireDurations: acquireDurations.snapshot(),
            batchSizes: batchSizes.snapshot()
        )
    }

    /// The figures of ``ConnectionPool/statistics``.
    public struct Statistics: Sendable {
        /// Connections handed out and not given back (or being opened for a caller).
        public let inUse: Int
        /// Connections open and free.
        public let idle: Int
        /// Callers waiting in line for a connection.
        public let waiting: Int
        /// The most connections the pool opens.
        public let size: Int
        /// How long ago a connection was last given back healthy; `nil` if never.
        public let sinceLastRelease: Duration?
        /// How long ``ConnectionPool/acquire()`` took, in nanoseconds.
        public let acquireDurations: Histogram.Snapshot
        /// How many non-blocking callers' statements went to the database in
        /// one pass of the pipeline loop.
        public let batchSizes: Histogram.Snapshot
    }

    // MARK: - Opening

    /// A connection set as the pool's are, outside its count, which the
    /// caller owns and closes: a listener's, a long-lived reader's.
    /// `applicationName` names it in `pg_stat_activity`.
    package func openConnection(applicationName: String) throws -> Connection {
        try Self.openConnection(configuration, poolerCheck: poolerCheck, applicationName: applicationName)
    }

    private static func openConnection(
        _ configuration: Configuration, poolerCheck: PoolerCheck, applicationName: String? = nil
    ) throws -> Connection {
        let connection =
            if let applicationName {
                try Connection(configuration.conninfo, overriding: ["application_name": applicationName])
            } else {
                try Connection(configuration.conninfo)
            }
        connection.poolName = configuration.name
        let preparesNothing =
            try configuration.poolerCompatible || poolerCheck.losesPreparedStatements(connection, conninfo: configuration.conninfo)
        connection.preparesNothing = preparesNothing
        connection.streamsThroughLibpq = !configuration.readsRowsFromSocket
        guard !preparesNothing else { return connection }
        var settings: [String] = []
        if let timeout = configuration.statementTimeout {
            settings.append("SET statement_timeout = \(Int(timeout.timeInterval * 1000))")
        }
        if let timeout = configuration.idleInTransactionTimeout {
            settings.append("SET idle_in_transaction_session_timeout = \(Int(timeout.timeInterval * 1000))")
        }
        if !settings.isEmpty { try connection.executeScript(settings.joined(separator: "; ")) }
        return connection
    }
}

extension Duration {
    /// The duration in seconds.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
