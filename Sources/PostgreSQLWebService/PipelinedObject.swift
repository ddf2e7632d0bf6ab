import JSONStreaming
import PostgreSQL

/// The first row of a query and its attachments, run on a pool's
/// ``StatementBatcher`` and written as one JSON object there:
/// ``ObjectWithAttachments`` without a thread that waits for it, each round
/// one job. A job's statements come from the connection that takes it,
/// which need not be the one of the round before. The row's result is read
/// whole: this is for a row by key. Attachments must not have attachments
/// of their own.
///
/// With a role, each round begins with the statement that sets it
/// (`set_config('role', $1, true)`): a job's statements run in one
/// implicit transaction up to its synchronization point, so the role holds
/// for the round's statements and ends with them. Without one, nothing is added.
enum PipelinedObject {
    /// Runs the query, as `role` when there is one; without one, a query
    /// that `isReadOnly` shares a read-only transaction with other reads
    /// (``StatementBatcher/Job/isReadOnly``). `completion` gets the object's JSON,
    /// `nil` when there is no row, or the failure.
    /// Everything after `run` returns happens on the pipeline's loop.
    static func run(
        on pipeline: StatementBatcher, sql: String, arguments: SQLArguments, attachments: [Attachment],
        options: JSONRenderingOptions, role: String? = nil, isReadOnly: Bool = false,
        completion: @escaping (Result<[UInt8]?, any Error>) -> Void
    ) {
        // Touched by the jobs on the loop thread only.
        var object = ObjectWithAttachments(sql: sql, arguments: arguments, attachments: attachments)
        let first = role == nil ? 0 : 1
        func round() -> StatementBatcher.Job {
            // Reads as a role do not share a transaction: the role holds to its end.
            StatementBatcher.Job(
                isReadOnly: isReadOnly && role == nil,
                statements: { statement in
                    guard let role else { return try object.nextRound(statement) }
                    return try [PipelinedStatement(statement(Connection.setLocalRoleSQL), values: [role])] + object.nextRound(statement)
                },
                completion: { outcome in
                    do {
                        let results = try outcome.get()
                        if let role, let error = results.first??.error { throw RoleError.failure(error, role: role) }
                        switch try object.receive({ try succeeded(results[$0 + first]) }, connection: nil) {
                        case .noRow:
                            completion(.success(nil))
                        case .secondRound:
                            pipeline.submit(round())
                        case .object(let rows):
                            // Written through a writer, then copied into the
                            // body's array once (see `ByteWriter`).
                            var writer = ByteWriter(capacity: 2 << 10)
                            rows.write(options: options, to: &writer)
                            completion(.success(Array(writer.bytes)))
                        }
                    } catch {
                        completion(.failure(error))
                    }
                })
        }
        pipeline.submit(round())
    }

    /// The result of a statement that succeeded, else its failure.
    private static func succeeded(_ result: QueryResult?) throws -> QueryResult {
        guard let result else {
            throw DatabaseError(code: .internalError, message: "a pipelined statement was skipped")
        }
        if let error = result.error { throw error }
        return result
    }
}
