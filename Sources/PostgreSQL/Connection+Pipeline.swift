internal import CLibPQ

// MARK: - Several statements in one round trip

/// One statement sent in a pipeline: SQL text with text-format values, run
/// without preparing it.
struct PipelinedStatement {
    var sql: String
    var values: [String?] = []
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
    func runPipeline(_ statements: [PipelinedStatement]) throws -> [QueryResult] {
        finishActiveCursor()
        let handle = try openHandle()
        guard PQenterPipelineMode(handle) == 1 else { throw connectionError() }

        var sent = 0
        for statement in statements {
            let accepted = withCStringArray(statement.values) { pointers in
                PQsendQueryParams(handle, statement.sql, Int32(statement.values.count), nil, pointers, nil, nil, 0)
            }
            guard accepted == 1 else { break }
            sent += 1
        }
        guard PQpipelineSync(handle) == 1 else {
            // The connection cannot even send: it is lost.
            let error = connectionError()
            isBrokenAfterPipelineFailure()
            throw error
        }

        var results: [QueryResult] = []
        var failure: (any Error)?
        for _ in 0..<sent {
            guard let raw = PQgetResult(handle) else {
                failure = failure ?? connectionError()
                break
            }
            let result = QueryResult(taking: raw)
            if failure == nil {
                do { try check(result) } catch { failure = error }
            }
            results.append(result)
            // Each statement's results end with a NULL.
            while let extra = PQgetResult(handle) { PQclear(extra) }
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
        if sent < statements.count { failure = failure ?? connectionError() }
        if let failure { throw failure }
        return results
    }

    /// A connection left in pipeline mode cannot run ordinary statements:
    /// mark it broken so that its pool replaces it.
    private func isBrokenAfterPipelineFailure() {
        noteFailure(DatabaseError(code: .connectionFailure, message: "the connection is stuck in pipeline mode"))
    }
}
