import JSONStreaming

/// The first row of a query and its attachments, run on a pool's
/// ``PipelineLoop`` and written as one JSON object there: the work of
/// `FirstRowWithAttachments`, without a thread that waits for it.
///
/// The row and every attachment go in one job when the arguments hold a
/// value for each attachment parameter (`GET /employees/{n}` binds
/// `:employeeNumber` from its path); the attachments are kept if the row's
/// columns of the same names hold the same values, else run again, bound
/// from the row, in a second job. The row's statement is read whole: this
/// is for a row by key. Attachments must not have attachments of their own.
enum PipelinedObject {
    /// Runs the query; `completion` gets the object's JSON, `nil` when
    /// there is no row, or the failure. Everything after `run` returns
    /// happens on the loop thread.
    static func run(
        on loop: PipelineLoop, sql: String, arguments: SQLArguments, attachments: [Attachment],
        options: JSONRenderingOptions, completion: @escaping (Result<[UInt8]?, any Error>) -> Void
    ) {
        // Filled on the loop thread by the first job, read by its completion:
        // the row's statement, the attachments', and the values guessed for
        // the attachments (`nil` when the arguments cannot bind them all).
        var statement: PreparedStatement?
        var children: [PreparedStatement] = []
        var guessed: [[String?]]?
        let first = PipelineLoop.Job(statements: { lookUp in
            let row = lookUp(sql)
            statement = row
            children = attachments.map { lookUp($0.sql) }
            let values = try row.parameters.textValues { arguments.values[$0] }
            var pipeline = [PipelinedStatement(row, values: values)]
            pipeline.reserveCapacity(1 + children.count)
            for child in children {
                // The same names as the row's (all `:employeeNumber`, say): the same values, no look-ups.
                if child.parameters.names == row.parameters.names {
                    pipeline.append(PipelinedStatement(child, values: values))
                } else if let values = try? child.parameters.textValues({ arguments.values[$0] }) {
                    pipeline.append(PipelinedStatement(child, values: values))
                } else {
                    return Array(pipeline.prefix(1))
                }
            }
            guessed = pipeline.dropFirst().map(\.values)
            return pipeline
        }, completion: { outcome in
            do {
                let results = try outcome.get()
                let result = try succeeded(results[0])
                guard let statement, result.rowCount > 0 else { return completion(.success(nil)) }
                let row = Row(result: result, index: 0, layout: statement.layout(of: result))
                if let guessed, children.indices.allSatisfy({
                    FirstRowWithAttachments.row(row, agreesWith: guessed[$0], for: children[$0].parameters)
                }) {
                    // The guesses hold: their failures are the attachments' own.
                    return completion(Result {
                        try write(row, attachments, children, results.dropFirst().map(succeeded), arguments, options)
                    })
                }
                // Bound from the row, as the blocking path does, in a second
                // job, with the statements of the connection that takes it.
                let second = PipelineLoop.Job(statements: { lookUp in
                    children = attachments.map { lookUp($0.sql) }
                    return try children.map { child in
                        let values = try child.parameters.textValues { name in
                            if let column = row.layout.index(of: name) { return row[column].map(SQLValue.text) ?? .null }
                            return arguments.values[name]
                        }
                        return PipelinedStatement(child, values: values)
                    }
                }, completion: { outcome in
                    completion(Result { try write(row, attachments, children, outcome.get().map(succeeded), arguments, options) })
                })
                loop.submit(second)
            } catch {
                completion(.failure(error))
            }
        })
        loop.submit(first)
    }

    /// The result of a statement that succeeded, else its failure.
    private static func succeeded(_ result: QueryResult?) throws -> QueryResult {
        guard let result else {
            throw DatabaseError(code: .internalError, message: "a pipelined statement was skipped")
        }
        if let error = result.error { throw error }
        return result
    }

    private static func write(
        _ row: Row, _ attachments: [Attachment], _ statements: [PreparedStatement], _ results: [QueryResult],
        _ arguments: SQLArguments, _ options: JSONRenderingOptions
    ) throws -> [UInt8] {
        var children: [ChildBlock] = []
        children.reserveCapacity(attachments.count)
        for index in attachments.indices {
            try children.append(ChildBlock(
                attachments[index], rowsOfOneParent: results[index],
                layout: statements[index].layout(of: results[index]), arguments: arguments, connection: nil))
        }
        var output: [UInt8] = []
        output.reserveCapacity(1024)
        row.layout.objectTemplate(attachments: attachments).write(row: row.index, of: row.result, options: options, to: &output) {
            index, output in children[index].writeArray(forParent: 0, options: options, to: &output)
        }
        return output
    }
}
