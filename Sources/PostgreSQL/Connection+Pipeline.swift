internal import CLibPQ

// MARK: - Several statements in one round trip

/// One statement sent in a pipeline, with text-format values: SQL text run
/// without preparing it, or an execution of a prepared statement.
package struct PipelinedStatement {
    /// The SQL text run without preparing it; empty with `prepared`.
    var sql: String
    package var values: [String?] = []
    /// The prepared statement to execute instead of parsing `sql`.
    package var prepared: PreparedStatement?
    /// Whether only the first row is wanted: ``Connection/sendPipeline(_:)``
    /// reads the statement in single-row mode (when it is the first of the
    /// pipeline) and drops the rows after the first as they arrive. A
    /// ``StatementBatcher`` reads every result whole.
    var firstRowOnly = false
    /// Whether the statement gets a span when the connection has a trace
    /// (`StatementSpan`): an execution of a prepared statement, or a
    /// statement of the request's SQL sent as text (a cursor's
    /// declaration); not transaction control.
    package var isTraced: Bool

    package init(sql: String, values: [String?] = []) {
        self.sql = sql
        self.values = values
        self.isTraced = false
    }

    package init(_ statement: PreparedStatement, values: [String?], firstRowOnly: Bool = false) {
        self.sql = ""
        self.values = values
        self.prepared = statement
        self.firstRowOnly = firstRowOnly
        self.isTraced = true
    }
}

extension Connection {
    /// Runs `statements` in order in one round trip (libpq's pipeline mode)
    /// and returns their results, in order.
    ///
    /// When a statement fails the server skips the rest; every result is
    /// read all the same, so the connection is idle again, and the first
    /// failure is thrown. Statements run as if sent one by one: a `BEGIN`
    /// among them opens a transaction that stays open afterwards.
    ///
    /// ```swift
    /// let results = try connection.runPipeline([
    ///     PipelinedStatement(sql: "BEGIN"),
    ///     PipelinedStatement(sql: "DECLARE c CURSOR FOR SELECT $1::int", values: ["1"]),
    ///     PipelinedStatement(sql: "FETCH 10 FROM c"),
    /// ])
    /// ```
    package func runPipeline(_ statements: [PipelinedStatement]) throws -> [QueryResult] {
        let results = try sendPipeline(statements)
        for result in results { try check(result) }
        return results
    }

    /// Like ``runPipeline(_:)``, but a statement's failure comes back as its
    /// result (see `QueryResult.error`, and `check(_:)` to throw it); only a
    /// failure of the connection is thrown.
    package func sendPipeline(_ statements: [PipelinedStatement]) throws -> [QueryResult] {
        finishActiveCursor()
        let (sent, spans) = try send(statements)
        return try readPipeline(
            firstRowOnly: statements.prefix(sent).map(\.firstRowOnly), allSent: sent == statements.count, spans: spans)
    }

    /// ``sendPipeline(_:)`` with `access`: its ``Access/preliminaries`` go
    /// first, in the same implicit transaction, and their results are not
    /// returned; a failure among them is thrown (a ``RoleError`` for the role).
    package func sendPipeline(_ statements: [PipelinedStatement], access: Access) throws -> [QueryResult] {
        let preliminaries = access.preliminaries
        guard !preliminaries.isEmpty else { return try sendPipeline(statements) }
        var all: [PipelinedStatement] = []
        all.reserveCapacity(preliminaries.count + statements.count)
        for (sql, values) in preliminaries { all.append(PipelinedStatement(try preparedStatement(for: sql), values: values)) }
        all += statements
        var results = try sendPipeline(all)
        for index in preliminaries.indices {
            guard let error = results[index].error else { continue }
            if let role = access.role { throw RoleError.failure(error, role: role) }
            try check(results[index])
        }
        results.removeFirst(preliminaries.count)
        return results
    }

    /// Sends `statements` in one pipeline and returns at once: the server
    /// runs them while the caller does something else, and
    /// ``PendingPipeline/results()`` reads their results, as
    /// ``runPipeline(_:)`` returns them. Until then the connection runs
    /// nothing else; any other call on it reads and drops these results first.
    ///
    /// ```swift
    /// let pending = try connection.startPipeline([PipelinedStatement(sql: "SELECT pg_sleep(0.1)")])
    /// render(previousBlock)                  // while the server works
    /// let results = try pending.results()
    /// ```
    package func startPipeline(_ statements: [PipelinedStatement]) throws -> PendingPipeline {
        finishActiveCursor()
        let (sent, spans) = try send(statements)
        let pending = PendingPipeline(
            connection: self, firstRowOnly: statements.prefix(sent).map(\.firstRowOnly), allSent: sent == statements.count,
            spans: spans)
        pendingPipeline = pending
        return pending
    }

    /// Enters pipeline mode, sends `statements` and the synchronization
    /// point; returns how many statements libpq accepted, and the spans of
    /// those sent (one per statement, `nil` for one not traced) when the
    /// connection has a trace.
    private func send(_ statements: [PipelinedStatement]) throws -> (sent: Int, spans: [StatementSpan?]) {
        let handle = try openHandle()
        guard PQenterPipelineMode(handle) == 1 else { throw connectionError() }

        // By index, fields read in place: copying each statement costs.
        var sent = 0
        var spans: [StatementSpan?] = []
        for index in statements.indices {
            let accepted: Int32
            var span: StatementSpan?
            if let trace, statements[index].isTraced {
                span = StatementSpan(statements[index].prepared?.parameters.sql ?? statements[index].sql, trace: trace, on: self)
            }
            if let statement = statements[index].prepared {
                accepted = sendExecution(of: statement, statements[index].values, handle: handle, commentedSQL: span?.commentedSQL)
            } else {
                let count = Int32(statements[index].values.count)
                accepted = withCStringArray(statements[index].values) { pointers in
                    (span?.commentedSQL ?? statements[index].sql).withCString {
                        PQsendQueryParams(handle, $0, count, nil, pointers, nil, nil, 0)
                    }
                }
            }
            guard accepted == 1 else {
                span?.end(rows: nil)
                break
            }
            if trace != nil { spans.append(span) }
            // Possible for the first statement only; the others then come whole.
            if statements[index].firstRowOnly, sent == 0 { _ = PQsetSingleRowMode(handle) }
            sent += 1
        }
        guard PQpipelineSync(handle) == 1 else {
            // The connection cannot even send: it is lost.
            let error = connectionError()
            for span in spans { span?.end(rows: nil, failure: error) }
            isBrokenAfterPipelineFailure()
            throw error
        }
        return (sent, spans)
    }

    /// Reads the results of the statements `send(_:)` sent (one
    /// `firstRowOnly` each), up to the synchronization point, and leaves
    /// pipeline mode; throws when libpq did not accept them all.
    fileprivate func readPipeline(firstRowOnly: [Bool], allSent: Bool, spans: [StatementSpan?] = []) throws -> [QueryResult] {
        var results: [QueryResult] = []
        defer {
            // Each span ends with its statement's result, or without one.
            for (index, span) in spans.enumerated() { span?.end(index < results.count ? results[index] : nil) }
        }
        let handle = try openHandle()
        let sent = firstRowOnly.count
        results.reserveCapacity(sent)
        var failure: DatabaseError?
        for index in 0..<sent {
            guard let raw = PQgetResult(handle) else {
                failure = failure ?? connectionError()
                break
            }
            // This reads up to the NULL that ends each statement's results.
            guard
                let result = readToEnd(
                    startingWith: QueryResult(taking: raw), firstRowOnly: firstRowOnly[index], handle: handle)
            else {
                failure = failure ?? DatabaseError(code: .internalError, message: "out of memory putting a result together")
                continue
            }
            results.append(result)
        }
        // Then the synchronization point; the connection is idle after it.
        while let raw = PQgetResult(handle) {
            let status = PQresultStatus(raw)
            PQclear(raw)
            if status == PGRES_PIPELINE_SYNC { break }
        }
        if PQexitPipelineMode(handle) != 1 {
            failure = failure ?? connectionError()
            isBrokenAfterPipelineFailure()
        }
        if !allSent { failure = failure ?? connectionError() }
        if let failure { throw failure }
        return results
    }

    /// Reads a statement's results up to the `NULL` that ends them and
    /// returns the complete result, or its first row alone when
    /// `firstRowOnly` (later rows are dropped as they arrive), or its
    /// failure; `nil` if libpq runs out of memory.
    ///
    /// libpq resets single-row mode when a query is sent outside a pipeline,
    /// or when a pipeline moves on to its next query, so the first query of a
    /// pipeline keeps the mode of the query run before it (a `RowCursor`):
    /// its rows then arrive one result each, and are put back together here.
    private func readToEnd(startingWith first: QueryResult, firstRowOnly: Bool, handle: OpaquePointer) -> QueryResult? {
        // The rows to put together, only when rows come one by one.
        var rows: [QueryResult] = []
        var failed: QueryResult?
        while let raw = PQgetResult(handle) {
            if PQresultStatus(raw) == PGRES_SINGLE_TUPLE {
                if !firstRowOnly {
                    if rows.isEmpty { rows.append(first) }
                    rows.append(QueryResult(taking: raw))
                } else {
                    PQclear(raw)
                }
                continue
            }
            // The usual end of a statement's results needs no object of its own.
            if failed != nil || PQresultStatus(raw) == PGRES_TUPLES_OK || PQresultStatus(raw) == PGRES_COMMAND_OK {
                PQclear(raw)
                continue
            }
            let part = QueryResult(taking: raw)
            if part.error != nil { failed = part }
        }
        if let failed { return failed }
        guard first.isSingleRow, !firstRowOnly else { return first }
        return QueryResult.combining(rows.isEmpty ? [first] : rows)
    }

    /// A connection left in pipeline mode cannot run ordinary statements:
    /// mark it broken so that its pool replaces it.
    private func isBrokenAfterPipelineFailure() {
        noteFailure(DatabaseError(code: .connectionFailure, message: "the connection is stuck in pipeline mode"))
    }
}

// MARK: - A pipeline read later

/// Statements sent by ``Connection/startPipeline(_:)``, running on the
/// server until ``results()`` reads what they returned.
package final class PendingPipeline {
    private let connection: Connection
    private let firstRowOnly: [Bool]
    private let allSent: Bool
    /// The statements' spans, ended when their results are read.
    private let spans: [StatementSpan?]
    private var isRead = false

    fileprivate init(connection: Connection, firstRowOnly: [Bool], allSent: Bool, spans: [StatementSpan?]) {
        self.connection = connection
        self.firstRowOnly = firstRowOnly
        self.allSent = allSent
        self.spans = spans
    }

    deinit { close() }

    /// The statements' results, in order, waiting for the server to
    /// finish them; throws the first failure, as ``Connection/runPipeline(_:)``.
    /// Read once: the connection is idle again afterwards.
    package func results() throws -> [QueryResult] {
        guard !isRead else {
            throw DatabaseError(code: .internalError, message: "the pipeline's results were already read")
        }
        isRead = true
        if connection.pendingPipeline === self { connection.pendingPipeline = nil }
        let results = try connection.readPipeline(firstRowOnly: firstRowOnly, allSent: allSent, spans: spans)
        for result in results { try connection.check(result) }
        return results
    }

    /// Reads and drops the results not read yet, so that the connection
    /// can run something else. Safe to call twice.
    package func close() {
        guard !isRead else { return }
        isRead = true
        if connection.pendingPipeline === self { connection.pendingPipeline = nil }
        _ = try? connection.readPipeline(firstRowOnly: firstRowOnly, allSent: allSent, spans: spans)
    }
}

/// A pending pipeline reads from its connection, which one thread uses at a time.
@available(*, unavailable)
extension PendingPipeline: Sendable {}
