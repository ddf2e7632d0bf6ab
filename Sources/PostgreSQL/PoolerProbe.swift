internal import CLibPQ
#if canImport(Glibc)
import Glibc
#endif
import Locking

/// Finds out, on a pool's first connection, whether its connections reach
/// PostgreSQL through a pooler that lends a server connection per
/// transaction (PgBouncer in transaction mode, before 1.21 or without
/// `max_prepared_statements`): there, a statement prepared by name does
/// not survive its transaction, and a pool must prepare nothing
/// (``ConnectionPool/Configuration/poolerCompatible``).
///
/// In three steps, each only when the one before leaves the question open:
///
/// 1. One connection asks `pg_backend_pid()`. A pooler answers the
///    connection with a process id of its own, so the same id means
///    PostgreSQL itself: prepared statements are safe (one round trip).
/// 2. A statement is prepared on that connection; a second connection
///    opens a transaction and prepares the same name. A pooler that lends
///    it the first connection's server connection (as PgBouncer does, most
///    recently used first) answers `42P05`: statements are shared between
///    clients.
/// 3. While the second holds its transaction, the first runs its
///    statement: on another server connection it is missing (`26000`).
///
/// A ``ConnectionPool`` probes so on its first connection, unless its
/// configuration is ``ConnectionPool/Configuration/poolerCompatible``
/// already, and tells what it found (``ConnectionPool/init(_:onPoolerFound:)``).
///
/// ```swift
/// switch try PoolerProbe.check(configuration) {
/// case .direct, .keepsPreparedStatements: break
/// case .losesPreparedStatements: configuration.poolerCompatible = true
/// }
/// ```
public enum PoolerProbe {
    /// What the probe found.
    public enum Finding: Sendable, Equatable {
        /// Connected to PostgreSQL itself.
        case direct
        /// A pooler that keeps each client's prepared statements (session
        /// mode, or one that tracks them).
        case keepsPreparedStatements
        /// A pooler whose prepared statements do not survive a transaction.
        case losesPreparedStatements
    }

    /// Probes the database `configuration` reaches, as described above.
    ///
    /// - Throws: ``DatabaseError`` when it cannot connect or a probe statement fails otherwise.
    public static func check(_ configuration: ConnectionPool.Configuration) throws -> Finding {
        let first = try Connection(configuration.conninfo)
        defer { first.close() }
        return try check(first, conninfo: configuration.conninfo)
    }

    /// Probes with `first`, a new connection to `conninfo` (opening a
    /// second one to it when needed), which is left as it was found.
    static func check(_ first: Connection, conninfo: String) throws -> Finding {
        let pid = try first.runSimple("SELECT pg_backend_pid()")
        if let reported = pid.string(row: 0, column: 0).flatMap(Int.init), reported == first.backendPID { return .direct }

        let name = "sqlrest_pooler_probe_\(UInt32.random(in: 1...UInt32.max))"
        guard let handle = first.handle, let prepared = PQprepare(handle, name, "SELECT 1", 0, nil) else {
            throw first.connectionError()
        }
        try first.check(QueryResult(taking: prepared))
        let second = try Connection(conninfo)
        defer { second.close() }
        try second.runSimple("BEGIN")
        guard let secondHandle = second.handle, let clash = PQprepare(secondHandle, name, "SELECT 2", 0, nil) else {
            throw second.connectionError()
        }
        if QueryResult(taking: clash).error?.code == .duplicatePreparedStatement { return .losesPreparedStatements }
        // The second holds its server connection until it rolls back; a
        // pooler of one server connection makes the first wait for it.
        guard PQsendQueryPrepared(handle, name, 0, nil, nil, nil, 0) == 1 else { throw first.connectionError() }
        let answered = first.waitForInput(milliseconds: 2000)
        try second.runSimple("ROLLBACK")
        if !answered { _ = first.waitForInput(milliseconds: 5000) }
        var missing = false
        while let raw = PQgetResult(handle) {
            let result = QueryResult(taking: raw)
            if result.error?.code == .invalidSQLStatementName { missing = true }
        }
        if missing { return .losesPreparedStatements }
        _ = try? first.runSimple("DEALLOCATE \(name)")
        return .keepsPreparedStatements
    }
}

/// A pool's answer to whether its database loses prepared statements
/// (``PoolerProbe``), found on the first connection the pool opens and
/// kept: the connections opened meanwhile wait for it, so that none
/// prepares a statement before it is known.
final class PoolerCheck: Sendable {
    private let finding = Locked<PoolerProbe.Finding?>(nil)
    private let report: (@Sendable (PoolerProbe.Finding) -> Void)?

    init(report: (@Sendable (PoolerProbe.Finding) -> Void)?) {
        self.report = report
    }

    /// Whether the statements of `connection` (just opened to `conninfo`)
    /// must not be prepared by name; probes on the first call that gets
    /// an answer.
    func losesPreparedStatements(_ connection: Connection, conninfo: String) throws -> Bool {
        let (found, isNew) = try finding.withLock { finding -> (PoolerProbe.Finding, Bool) in
            if let finding { return (finding, false) }
            let found = try PoolerProbe.check(connection, conninfo: conninfo)
            finding = found
            return (found, true)
        }
        if isNew { report?(found) }
        return found == .losesPreparedStatements
    }
}

extension SQLState {
    /// `42P05`: a prepared statement of that name exists already.
    static let duplicatePreparedStatement = SQLState(rawValue: "42P05")
    /// `26000`: no prepared statement of that name.
    static let invalidSQLStatementName = SQLState(rawValue: "26000")
}

extension Connection {
    /// Waits up to `milliseconds` for a result to be readable; whether one is.
    func waitForInput(milliseconds: Int32) -> Bool {
        guard let handle else { return false }
        let deadline = ContinuousClock.now + .milliseconds(Int(milliseconds))
        while PQisBusy(handle) == 1 {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return false }
            var socket = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            let (seconds, attoseconds) = left.components
            _ = poll(&socket, 1, Int32(seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1))
            guard PQconsumeInput(handle) == 1 else { return true }
        }
        return true
    }
}
