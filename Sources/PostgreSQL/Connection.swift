internal import CLibPQ
#if canImport(Glibc)
import Glibc
#endif
import RequestTracing

/// One connection to PostgreSQL: the single owner of a libpq `PGconn`.
///
/// The connection is closed by ``close()`` or when the object goes away, and
/// also when connecting fails. Statements are prepared once per connection
/// and reused by SQL text. Every call blocks the calling thread until the
/// server answers, so use connections from threads that may block (the
/// HTTP server's workers), never from an event loop or Swift's cooperative
/// thread pool.
///
/// ```swift
/// let connection = try Connection("postgresql://localhost/employees")
/// try connection.execute("UPDATE employees SET hire_date = now() WHERE emp_no = :id", ["id": 10001])
/// ```
public final class Connection {
    /// The libpq handle; `nil` once closed.
    private(set) var handle: OpaquePointer?

    /// The statements prepared here, by SQL text. On a ``StatementBatcher``'s
    /// connection, which runs nothing else, also those whose preparation is
    /// still to be sent (see ``PreparedStatement/isPrepared``).
    var statements = PreparedStatementCache()

    /// What the layers above keep for this connection (``subscript(cache:)``),
    /// forgotten with the prepared statements.
    var layerCaches = LayerCaches()

    /// Numbers the server-side cursors this connection declares.
    package var cursorCount = 0

    /// The cursor streaming a result right now, if any. The connection can
    /// run nothing else until that result has been read to its end.
    weak var activeCursor: RowCursor?

    /// Statements sent to run while the caller does something else, whose
    /// results are still to be read (``startPipeline(_:)``). The connection
    /// can run nothing else until they have been.
    weak var pendingPipeline: PendingPipeline?

    /// Whether the connection leaves no prepared statement on the server:
    /// each statement is sent with its SQL text, as the unnamed statement,
    /// and parsed again by the server every time. For a connection through
    /// a pooler in transaction mode (PgBouncer before 1.21), which lends a
    /// server connection per transaction: a statement prepared by name in
    /// one would not exist in the next, and could clash with another
    /// client's of the same name. Set before the first statement.
    package var preparesNothing = false

    /// Whether streamed rows are read by libpq in its single-row mode, as
    /// on an encrypted connection, rather than from the socket
    /// (``ConnectionPool/Configuration/readsRowsFromSocket``).
    package var streamsThroughLibpq = false

    /// The request whose statements the connection runs now: each gets a
    /// span under it (`StatementSpan`). Set by ``ConnectionPool/acquire(for:)``
    /// for the holder's work, cleared when the connection goes back.
    package var trace: RequestTrace?

    /// The pool the connection belongs to (`primary`, `replica-1`), as its statements' spans name it.
    package var poolName = ""

    /// `true` once the connection failed in a way that makes it unusable
    /// (lost socket, server shutdown). A pool replaces such a connection.
    ///
    /// ```swift
    /// if connection.isBroken { connection.close() }
    /// ```
    public private(set) var isBroken = false

    /// Opens a connection.
    ///
    /// - Parameter conninfo: a libpq connection string (`"host=/tmp dbname=app"`)
    ///   or URL (`"postgresql://user@localhost/app"`). Empty (the default):
    ///   the standard `PG*` environment variables (`PGHOST`, `PGPORT`, ...).
    /// - Throws: ``DatabaseError`` with a class `08` code when the server
    ///   cannot be reached or refuses the connection.
    ///
    /// ```swift
    /// let connection = try Connection(ProcessInfo.processInfo.environment["DATABASE_URL"] ?? "")
    /// ```
    public convenience init(_ conninfo: String = "") throws {
        try self.init(connecting: PQconnectdb(conninfo))
    }

    /// Opens a connection to what `conninfo` names with `settings` (libpq
    /// keywords, such as `connect_timeout`) over the ones it gives.
    convenience init(_ conninfo: String, overriding settings: KeyValuePairs<String, String>) throws {
        // Later keywords win over the ones conninfo expands to; NULL ends each array.
        let keywords: [String?] = ["dbname"] + settings.map(\.key) + [nil]
        let values: [String?] = [conninfo] + settings.map(\.value) + [nil]
        let handle: OpaquePointer? = withCStringArray(keywords) { keywords in
            withCStringArray(values) { values in PQconnectdbParams(keywords, values, 1) }
        }
        try self.init(connecting: handle)
    }

    /// Takes `handle`, a connection libpq has finished opening, or finishes it and throws.
    private init(connecting handle: OpaquePointer?) throws {
        guard let handle else {
            throw DatabaseError(code: .sqlClientUnableToEstablishSQLConnection, message: "out of memory")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(handle)).trimmed
            PQfinish(handle)
            throw DatabaseError(code: .sqlClientUnableToEstablishSQLConnection, message: message)
        }
        self.handle = handle
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
    }

    deinit {
        if let handle { PQfinish(handle) }
    }

    /// Closes the connection. Later calls throw; closing twice does nothing.
    ///
    /// ```swift
    /// connection.close()
    /// ```
    public func close() {
        guard let handle else { return }
        PQfinish(handle)
        self.handle = nil
        isBroken = true
        forgetPreparedStatements()
    }

    /// The server's process id for this connection (as in `pg_stat_activity.pid`).
    ///
    /// ```swift
    /// try connection.execute("SELECT pg_terminate_backend(:pid)", ["pid": other.backendPID])
    /// ```
    public var backendPID: Int {
        handle.map { Int(PQbackendPID($0)) } ?? 0
    }

    /// `true` while a transaction block is open (after `BEGIN`, before `COMMIT`/`ROLLBACK`).
    ///
    /// ```swift
    /// try connection.execute("BEGIN")
    /// connection.isInTransaction // true
    /// ```
    public var isInTransaction: Bool {
        guard let handle else { return false }
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// `true` when a statement failed inside the open transaction block.
    var isInFailedTransaction: Bool {
        handle.map { PQtransactionStatus($0) == PQTRANS_INERROR } ?? false
    }

    // MARK: - Health

    /// Reads whatever the server sent while the connection sat idle; a
    /// terminated backend's goodbye or a closed socket then shows as broken.
    /// Returns `true` if the connection is usable.
    func checkIdleHealth() -> Bool {
        guard let handle, !isBroken else { return false }
        // Nothing to read (the usual case): no read at all, one poll instead of three reads.
        var socket = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        if poll(&socket, 1, 0) == 0 {
            return PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE
        }
        // A terminated backend sends an error and closes the socket: the first
        // read takes the message, a later one sees the end of the stream.
        for _ in 0..<3 where PQconsumeInput(handle) == 0 || PQstatus(handle) != CONNECTION_OK {
            isBroken = true
            return false
        }
        if PQtransactionStatus(handle) != PQTRANS_IDLE {
            return false
        }
        return true
    }

    /// Throws the result's error, if any, marking the connection broken when
    /// the error means it is lost. libpq's own errors carry no SQLSTATE; on a
    /// lost connection they become ``SQLState/connectionFailure``.
    package func check(_ result: QueryResult) throws {
        guard var error = result.error else { return }
        if !result.hasSQLState, handle.map({ PQstatus($0) == CONNECTION_BAD }) ?? true {
            error.code = .connectionFailure
        }
        noteFailure(error)
        throw error
    }

    /// Marks the connection broken: lost outside libpq (``WireRowReader``).
    func markBroken() {
        isBroken = true
    }

    /// Tells libpq the transaction status the server reported at the end of
    /// an execution libpq did not read (``WireRowReader``), when it differs
    /// from what libpq believes (a statement that failed inside a
    /// transaction): an empty query, whose answer libpq reads, carries it.
    func settleTransactionStatus(_ status: UInt8) throws {
        guard let handle else { return }
        let reported =
            switch status {
            case UInt8(ascii: "T"): PQTRANS_INTRANS
            case UInt8(ascii: "E"): PQTRANS_INERROR
            default: PQTRANS_IDLE
            }
        guard PQtransactionStatus(handle) != reported else { return }
        guard let raw = PQexec(handle, "") else { throw connectionError() }
        PQclear(raw)
    }

    /// Marks the connection broken if libpq lost it or `error` says the server is going away.
    func noteFailure(_ error: DatabaseError?) {
        if let error, error.isConnectionFailure { isBroken = true }
        if let handle, PQstatus(handle) == CONNECTION_BAD { isBroken = true }
        if handle == nil { isBroken = true }
    }

    /// The libpq handle, or an error if the connection is closed.
    func openHandle() throws -> OpaquePointer {
        guard let handle else {
            throw DatabaseError(code: .connectionDoesNotExist, message: "the connection is closed")
        }
        return handle
    }

    /// The error libpq reports on the connection itself (no result available).
    func connectionError() -> DatabaseError {
        let message = handle.map { String(cString: PQerrorMessage($0)).trimmed } ?? "the connection is closed"
        let lost = handle.map { PQstatus($0) == CONNECTION_BAD } ?? true
        let error = DatabaseError(code: lost ? .connectionFailure : .internalError, message: message)
        noteFailure(error)
        return error
    }

    // MARK: - Prepared statements

    /// The statement prepared for `sql` (named or positional parameters),
    /// parsing and preparing it on first use.
    package func preparedStatement(for sql: String) throws -> PreparedStatement {
        if let statement = statements.statement(for: sql) { return statement }
        finishActiveCursor()
        let handle = try openHandle()
        if statements.isFull {
            if !preparesNothing { try runSimple("DEALLOCATE ALL") }
            forgetPreparedStatements()
        }
        let statement = statements.makeStatement(for: sql)
        if preparesNothing {
            // Parsed and cached here only; each run sends the SQL text.
            statement.isPrepared = true
            statements.add(statement, for: sql)
            return statement
        }
        guard let raw = PQprepare(handle, statement.name, statement.parameters.sql, 0, nil) else { throw connectionError() }
        let result = QueryResult(taking: raw)
        try check(result)
        statement.isPrepared = true
        statements.add(statement, for: sql)
        return statement
    }

    /// Forgets every prepared statement and what was derived from them.
    func forgetPreparedStatements() {
        statements.removeAll()
        layerCaches.removeAll()
    }

    /// How many statements this connection has prepared (each SQL text once).
    ///
    /// ```swift
    /// try connection.execute("SELECT 1"); try connection.execute("SELECT 1")
    /// connection.preparedStatementCount // 1
    /// ```
    public var preparedStatementCount: Int { statements.count }

    /// The type OIDs of a prepared statement's parameters, as the server inferred them.
    package func parameterTypes(of statement: PreparedStatement) throws -> [UInt32] {
        try describePrepared(statement).parameterTypes
    }

    /// The server's description of a prepared statement (parameter types,
    /// result columns). A connection that ``preparesNothing`` prepares it
    /// as the unnamed statement first, in a transaction (its own unless
    /// one is open): through a pooler, both steps then reach the same
    /// server connection.
    func describePrepared(_ statement: PreparedStatement) throws -> QueryResult {
        finishActiveCursor()
        let handle = try openHandle()
        let opensTransaction = preparesNothing && !isInTransaction
        if opensTransaction { try runSimple("BEGIN") }
        defer { if opensTransaction { rollBackQuietly() } }
        if preparesNothing {
            guard let raw = PQprepare(handle, "", statement.parameters.sql, 0, nil) else { throw connectionError() }
            try check(QueryResult(taking: raw))
        }
        let name = preparesNothing ? "" : statement.name
        guard let raw = PQdescribePrepared(handle, name) else { throw connectionError() }
        let result = QueryResult(taking: raw)
        try check(result)
        return result
    }

    /// Sends one execution of `statement` with text-format values, as
    /// libpq's `PQsendQueryPrepared` (or `PQsendQueryParams` with its SQL
    /// text when the connection ``preparesNothing``, or with
    /// `commentedSQL`, the text a recording span sends:
    /// `StatementSpan`) does; 1 when sent.
    func sendExecution(
        of statement: PreparedStatement, _ values: [String?], handle: OpaquePointer, commentedSQL: String? = nil
    ) -> Int32 {
        let count = Int32(values.count)
        if commentedSQL != nil || preparesNothing {
            let text = commentedSQL ?? statement.parameters.sql
            return withCStringArray(values) { pointers in
                text.withCString { PQsendQueryParams(handle, $0, count, nil, pointers, nil, nil, 0) }
            }
        }
        return withCStringArray(values) { pointers in
            // Not the implicit conversion, which copies the name into a new array here.
            return statement.name.withCString { PQsendQueryPrepared(handle, $0, count, pointers, nil, nil, 0) }
        }
    }

    // MARK: - Running statements

    /// Runs a prepared statement with text-format parameter values and
    /// returns the complete result.
    package func run(_ statement: PreparedStatement, values: [String?]) throws -> QueryResult {
        finishActiveCursor()
        let handle = try openHandle()
        let span = trace == nil ? nil : StatementSpan.start(statement.parameters.sql, on: self)
        let raw: OpaquePointer?
        if span?.commentedSQL != nil || preparesNothing {
            let text = span?.commentedSQL ?? statement.parameters.sql
            raw = withCStringArray(values) { pointers in
                text.withCString { PQexecParams(handle, $0, Int32(values.count), nil, pointers, nil, nil, 0) }
            }
        } else {
            raw = withCStringArray(values) { pointers in
                statement.name.withCString { PQexecPrepared(handle, $0, Int32(values.count), pointers, nil, nil, 0) }
            }
        }
        guard let raw else {
            let error = connectionError()
            span?.end(rows: nil, failure: error)
            throw error
        }
        let result = QueryResult(taking: raw)
        span?.end(result)
        try check(result)
        return result
    }

    /// Runs SQL text without preparing it and returns the complete result:
    /// without `values`, in the simple query protocol, which also takes
    /// several statements separated by semicolons (`BEGIN`, `SET ...`,
    /// `FETCH ...`, scripts); with `values` (even none), as the unnamed
    /// statement: exactly one statement, whose `$1`, `$2`, ... they fill.
    @discardableResult
    package func runSimple(_ sql: String, values: [String?]? = nil) throws -> QueryResult {
        finishActiveCursor()
        let handle = try openHandle()
        let raw =
            if let values {
                withCStringArray(values) { PQexecParams(handle, sql, Int32(values.count), nil, $0, nil, nil, 0) }
            } else {
                PQexec(handle, sql)
            }
        guard let raw else { throw connectionError() }
        let result = QueryResult(taking: raw)
        try check(result)
        return result
    }

    /// Sends a prepared statement; the returned cursor reads the rows as
    /// they come, from the socket (``WireRowReader``), or on an encrypted
    /// connection in libpq's single-row mode, one `PGresult` at a time.
    ///
    /// With an `access` other than ``Access/unrestricted``, the statement
    /// runs with it: on the socket, after its ``Access/preliminaries`` in
    /// the same implicit transaction (no round trip more); through libpq,
    /// in a transaction begun for it (``begin(_:repeatableRead:)``), which
    /// the connection's next owner ends (a pool rolls it back).
    func stream(_ statement: PreparedStatement, values: [String?], access: Access = .unrestricted) throws -> RowCursor {
        finishActiveCursor()
        let handle = try openHandle()
        let cursor: RowCursor
        let trace = access.trace ?? self.trace
        let span = trace.map { StatementSpan(statement.parameters.sql, trace: $0, on: self) }
        do {
            if WireRowReader.isUsable(on: self) {
                var preliminaries: [(statement: PreparedStatement, values: [String?])] = []
                for (sql, values) in access.preliminaries { preliminaries.append((try preparedStatement(for: sql), values)) }
                let reader = try WireRowReader(
                    connection: self, statement: statement, values: values, describe: statement.knownLayout == nil,
                    preliminaries: preliminaries, role: access.role, commentedSQL: span?.commentedSQL,
                    countsRows: span?.span.isRecording ?? false)
                cursor = RowCursor(connection: self, statement: statement, wire: reader, span: span)
            } else {
                if access != .unrestricted, !isInTransaction { try begin(access) }
                guard sendExecution(of: statement, values, handle: handle, commentedSQL: span?.commentedSQL) == 1 else {
                    throw connectionError()
                }
                PQsetSingleRowMode(handle)
                cursor = RowCursor(connection: self, statement: statement, wire: nil, span: span)
            }
        } catch {
            span?.end(rows: nil, failure: error as? DatabaseError)
            throw error
        }
        activeCursor = cursor
        return cursor
    }

    /// Stops the streaming cursor, if one is active, so that the connection
    /// can run something else.
    func finishActiveCursor() {
        activeCursor?.close()
        activeCursor = nil
        pendingPipeline?.close()
        pendingPipeline = nil
    }

    // MARK: - Cancelling

    /// Asks the server to cancel the running query, then reads and drops
    /// every result left so the connection is idle again.
    ///
    /// Results that have already arrived are dropped first: a short query
    /// (one row read of a one-row result) is usually complete by then, and
    /// a cancel request costs a new connection to the server, milliseconds.
    func cancelAndDrain() {
        guard let handle else { return }
        if PQisBusy(handle) == 1 { _ = PQconsumeInput(handle) }
        while PQisBusy(handle) == 0 {
            guard let raw = PQgetResult(handle) else { return noteFailure(nil) }
            PQclear(raw)
        }
        if PQisBusy(handle) == 1 || PQtransactionStatus(handle) == PQTRANS_ACTIVE {
            if let cancel = PQgetCancel(handle) {
                var buffer = [CChar](repeating: 0, count: 256)
                _ = PQcancel(cancel, &buffer, Int32(buffer.count))
                PQfreeCancel(cancel)
            }
        }
        drain()
    }

    /// Reads and drops results until libpq has none left.
    func drain() {
        guard let handle else { return }
        while let raw = PQgetResult(handle) {
            PQclear(raw)
        }
        noteFailure(nil)
    }
}

/// A `Connection` is used by one thread at a time; a pool hands it from
/// thread to thread under its lock.
@available(*, unavailable)
extension Connection: Sendable {}

// MARK: - C strings

/// Calls `body` with a C array of NUL-terminated strings (NULL for `nil`).
///
/// The strings are copied into one temporary buffer (on the stack when
/// small), not one `strdup` each.
func withCStringArray<R>(_ values: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
    if values.isEmpty { return body(nil) }
    var byteCount = 0
    for value in values {
        if let value { byteCount += value.utf8.count + 1 }
    }
    return withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: values.count) { pointers in
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: max(byteCount, 1)) { bytes in
            var offset = 0
            for (index, value) in values.enumerated() {
                guard var value else {
                    pointers[index] = nil
                    continue
                }
                // Both allocations hold at least one element (values is not empty): they have addresses.
                let start = bytes.baseAddress! + offset
                value.withUTF8 { utf8 in
                    if let source = utf8.baseAddress {
                        UnsafeMutableRawPointer(start).copyMemory(from: source, byteCount: utf8.count)
                    }
                    offset += utf8.count
                }
                bytes[offset] = 0
                offset += 1
                pointers[index] = UnsafePointer(start)
            }
            return body(UnsafePointer(pointers.baseAddress!))
        }
    }
}
