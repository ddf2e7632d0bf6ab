import Locking

/// The read replicas of one primary, each a ``ConnectionPool``, with a
/// thread that watches them: reads are spread over the healthy ones in
/// turn, and one that fails or lags is taken out until it is well again.
///
/// The watching thread asks each replica every ``Configuration/checkInterval``
/// how far behind it is. A replica is out when it cannot be reached, or
/// when it lags more than ``Configuration/maxLag``; an out replica is
/// asked again after a delay that doubles at each failure (from
/// ``Configuration/firstRetry`` to ``Configuration/longestRetry``). A
/// caller that sees a replica fail says so with ``reportFailure(of:)``,
/// which takes it out at once. ``next()`` is `nil` when no replica is
/// healthy: the caller then reads from the primary.
///
/// ```swift
/// let replicas = ReplicaSet([ConnectionPool(.init(conninfo: "host=replica1 dbname=app"))])
/// let pool = replicas.next() ?? primary
/// ```
public final class ReplicaSet: Sendable {
    /// How replicas are watched.
    ///
    /// ```swift
    /// var configuration = ReplicaSet.Configuration()
    /// configuration.maxLag = .seconds(5)
    /// ```
    public struct Configuration: Sendable {
        /// A replica further behind than this is taken out.
        public var maxLag: Duration
        /// How often a healthy replica is asked how far behind it is.
        public var checkInterval: Duration
        /// The wait before an out replica is asked again, after its first failure.
        public var firstRetry: Duration
        /// The longest wait before an out replica is asked again.
        public var longestRetry: Duration
        /// How long the probe waits for a replica to accept its connection
        /// (libpq's `connect_timeout`, whole seconds, at least 2), and then
        /// to answer its statement: one that does not is taken out, as one
        /// that is down, and the other replicas are asked on time.
        public var probeTimeout: Duration

        /// A configuration; every parameter has a default.
        ///
        /// ```swift
        /// let configuration = ReplicaSet.Configuration(maxLag: .seconds(30))
        /// ```
        public init(
            maxLag: Duration = .seconds(10), checkInterval: Duration = .seconds(1),
            firstRetry: Duration = .milliseconds(500), longestRetry: Duration = .seconds(8),
            probeTimeout: Duration = .seconds(3)
        ) {
            self.probeTimeout = probeTimeout
            self.maxLag = maxLag
            self.checkInterval = checkInterval
            self.firstRetry = firstRetry
            self.longestRetry = longestRetry
        }
    }

    /// What became of a replica, for ``init(_:configuration:onChange:)``'s observer.
    ///
    /// ```swift
    /// ReplicaSet(pools) { index, change in print("replica \(index + 1): \(change)") }
    /// ```
    public enum Change: Sendable, CustomStringConvertible {
        /// Healthy again (or for the first time), this far behind its primary.
        case healthy(lag: Duration)
        /// Taken out, for this reason; asked again after `retry`.
        case out(reason: String, retry: Duration)

        public var description: String {
            switch self {
            case .healthy(let lag): "healthy (lag \(Self.seconds(lag)) s)"
            case .out(let reason, let retry): "out (\(reason)); asked again in \(Self.seconds(retry)) s"
            }
        }

        private static func seconds(_ duration: Duration) -> String {
            let milliseconds = Int(duration.timeInterval * 1000)
            return "\(milliseconds / 1000).\(String(milliseconds % 1000 / 100))"
        }
    }

    /// The replicas' pools, in the order given.
    public let pools: [ConnectionPool]
    /// How they are watched.
    public let configuration: Configuration
    private let state: ReplicaState

    /// Replicas reached through `pools`; the watching thread starts at
    /// once and asks each of them before it takes reads. `onChange` is
    /// called on that thread (or the reporting caller's) when a replica
    /// comes in or goes out.
    ///
    /// ```swift
    /// let replicas = ReplicaSet(urls.map { ConnectionPool(.init(conninfo: $0)) }, configuration: .init(maxLag: .seconds(5)))
    /// ```
    public init(
        _ pools: [ConnectionPool], configuration: Configuration = Configuration(),
        onChange: (@Sendable (_ index: Int, _ change: Change) -> Void)? = nil
    ) {
        self.pools = pools
        self.configuration = configuration
        self.state = ReplicaState(count: pools.count, onChange: onChange)
        guard !pools.isEmpty else { return }
        let monitor = ReplicaMonitor(pools: pools, configuration: configuration, state: state)
        if !DetachedThread.start({ monitor.run() }) {
            // No thread: every replica stays out, and reads go to the primary.
            state.stop()
        }
    }

    deinit {
        state.stop()
    }

    /// The next healthy replica in turn, or `nil` when none is.
    ///
    /// ```swift
    /// let pool = replicas.next() ?? primary
    /// ```
    public func next() -> ConnectionPool? {
        state.nextHealthy().map { pools[$0] }
    }

    /// Takes `pool` out at once (a statement on it found the server gone);
    /// the watching thread asks it again after the first retry delay.
    ///
    /// ```swift
    /// catch let error as DatabaseError where error.isConnectionFailure { replicas.reportFailure(of: pool) }
    /// ```
    public func reportFailure(of pool: ConnectionPool) {
        guard let index = pools.firstIndex(where: { $0 === pool }) else { return }
        state.markOut(
            index, reason: "a statement lost its connection", firstRetry: configuration.firstRetry, longestRetry: configuration.longestRetry
        )
    }

    /// Whether each replica takes reads now, in the order of ``pools``.
    ///
    /// ```swift
    /// replicas.healthy  // [true, false]
    /// ```
    public var healthy: [Bool] { state.healthy }

    /// Stops the watching thread and closes the replicas' pools.
    ///
    /// ```swift
    /// replicas.close()
    /// ```
    public func close() {
        state.stop()
        for pool in pools { pool.close() }
    }
}

// MARK: - State

/// The replicas' health. `@unchecked Sendable`: every stored property is
/// read and written only while `lock` is held.
final class ReplicaState: @unchecked Sendable {
    struct Replica {
        var isHealthy = false
        /// When the watching thread asks next.
        var nextCheck = ContinuousClock.now
        /// The wait after the next failure.
        var retry: Duration?
    }

    private let lock = ConditionLock()
    private var replicas: [Replica]
    private var turn = 0
    private(set) var isStopped = false
    private let onChange: (@Sendable (Int, ReplicaSet.Change) -> Void)?

    init(count: Int, onChange: (@Sendable (Int, ReplicaSet.Change) -> Void)?) {
        self.replicas = Array(repeating: Replica(), count: count)
        self.onChange = onChange
    }

    var healthy: [Bool] { lock.withLock { replicas.map(\.isHealthy) } }

    func nextHealthy() -> Int? {
        lock.withLock {
            for step in 0..<replicas.count {
                let index = (turn + step) % replicas.count
                if replicas[index].isHealthy {
                    turn = index + 1
                    return index
                }
            }
            return nil
        }
    }

    func markHealthy(_ index: Int, lag: Duration, checkInterval: Duration) {
        let changed = lock.withLock {
            let changed = !replicas[index].isHealthy
            replicas[index].isHealthy = true
            replicas[index].retry = nil
            replicas[index].nextCheck = .now + checkInterval
            return changed
        }
        if changed { onChange?(index, .healthy(lag: lag)) }
    }

    /// Takes the replica out (unless it is out already and `reason` is a
    /// caller's report) and sets when it is asked again.
    func markOut(_ index: Int, reason: String, firstRetry: Duration, longestRetry: Duration, fromMonitor: Bool = false) {
        let retry: Duration? = lock.withLock {
            guard replicas[index].isHealthy || fromMonitor else { return nil }
            let retry = replicas[index].retry ?? firstRetry
            replicas[index].isHealthy = false
            replicas[index].nextCheck = .now + retry
            replicas[index].retry = min(retry * 2, longestRetry)
            lock.signal()
            return retry
        }
        if let retry { onChange?(index, .out(reason: reason, retry: retry)) }
    }

    /// The replicas to ask now, or waits until one is due (or a report
    /// moved a check earlier); `nil` once stopped.
    func due() -> [Int]? {
        lock.withLock {
            while !isStopped {
                let now = ContinuousClock.now
                let due = replicas.indices.filter { replicas[$0].nextCheck <= now }
                if !due.isEmpty { return due }
                let soonest = replicas.map(\.nextCheck).min() ?? now + .seconds(1)
                _ = lock.wait(until: soonest)
            }
            return nil
        }
    }

    func stop() {
        lock.withLock {
            isStopped = true
            lock.signal()
        }
    }
}

// MARK: - The watching thread

/// Asks each replica how far behind it is, on a connection of its own (not
/// one of the pool's, which may all be busy). `@unchecked Sendable`: its
/// connections are used by the watching thread only.
private final class ReplicaMonitor: @unchecked Sendable {
    /// The lag in seconds: 0 for a replica that has replayed all it has
    /// received while it streams (an idle primary sends nothing, and the
    /// last replayed transaction grows old without any lag; after a
    /// restart, what it replays from its own files is ahead of what it
    /// received), else the age of the last transaction replayed. 0 for a server that is not in
    /// recovery (a promoted replica, or a primary given as a replica).
    static let lagQuery = """
        SELECT CASE
            WHEN NOT pg_is_in_recovery() THEN 0
            WHEN pg_last_wal_replay_lsn() >= pg_last_wal_receive_lsn()
                AND EXISTS (SELECT 1 FROM pg_stat_wal_receiver) THEN 0
            ELSE coalesce(extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp()), 1e9)
        END::float8 AS lag
        """

    let pools: [ConnectionPool]
    let configuration: ReplicaSet.Configuration
    let state: ReplicaState
    private var connections: [Connection?]

    init(pools: [ConnectionPool], configuration: ReplicaSet.Configuration, state: ReplicaState) {
        self.pools = pools
        self.configuration = configuration
        self.state = state
        self.connections = Array(repeating: nil, count: pools.count)
    }

    func run() {
        while let due = state.due() {
            for index in due { check(index) }
        }
        for connection in connections { connection?.close() }
    }

    /// `probeTimeout` in libpq's whole seconds (2 at least: libpq makes 1 into 2).
    private var connectTimeoutSeconds: Int {
        max(2, Int((configuration.probeTimeout / .seconds(1)).rounded(.up)))
    }

    private func check(_ index: Int) {
        do {
            let connection =
                try connections[index]
                ?? Connection(
                    pools[index].configuration.conninfo, overriding: ["connect_timeout": String(connectTimeoutSeconds)])
            connections[index] = connection
            let seconds = try connection.fetchDouble(Self.lagQuery, within: configuration.probeTimeout) ?? 1e9
            let lag = Duration.milliseconds(Int64(min(seconds, 1e9) * 1000))
            if lag > configuration.maxLag {
                state.markOut(
                    index, reason: "lag \(Int(seconds)) s", firstRetry: configuration.firstRetry,
                    longestRetry: configuration.longestRetry, fromMonitor: true)
            } else {
                state.markHealthy(index, lag: lag, checkInterval: configuration.checkInterval)
            }
        } catch {
            connections[index]?.close()
            connections[index] = nil
            let reason = (error as? DatabaseError).map { $0.isConnectionFailure ? "unreachable" : $0.description } ?? "\(error)"
            // libpq's messages run over several lines; the first tells.
            let firstLine = String(reason.prefix { $0 != "\n" })
            state.markOut(
                index, reason: firstLine, firstRetry: configuration.firstRetry,
                longestRetry: configuration.longestRetry, fromMonitor: true)
        }
    }
}
