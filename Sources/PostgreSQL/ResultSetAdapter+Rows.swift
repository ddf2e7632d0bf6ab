/// Where a ``ResultSetAdapter`` gets its rows, one JSON object at a time.
protocol RowSource: AnyObject {
    /// Whether another row is available (reads ahead if needed).
    func hasNext() throws -> Bool
    /// Writes the next row as a JSON object; only after `hasNext()` returned `true`.
    func writeNext(options: JSONRenderingOptions, to output: inout [UInt8]) throws
    /// Stops: cancels what is still running, leaves the connection idle.
    func close()
}

// MARK: - Single-row mode

/// Rows of a query without attachments, read in single-row mode.
final class StreamingRows: RowSource {
    private let cursor: RowCursor
    private var pending: Row?

    init(connection: Connection, sql: String, arguments: SQLArguments) throws {
        cursor = try connection.query(sql, arguments)
    }

    func hasNext() throws -> Bool {
        if pending == nil { pending = try cursor.next() }
        return pending != nil
    }

    func writeNext(options: JSONRenderingOptions, to output: inout [UInt8]) throws {
        guard let row = pending else { return }
        pending = nil
        row.layout.objectTemplate.write(row: row.index, of: row.result, options: options, to: &output) { _, _ in }
    }

    func close() {
        pending = nil
        cursor.close()
    }

    /// The columns, known once the query answered (also without rows).
    var columns: [Column] { cursor.columns }

    /// Writes the next row as a CSV line; only after `hasNext()` returned `true`.
    func writeNextCSV(to output: inout [UInt8]) {
        guard let row = pending else { return }
        pending = nil
        CSVWriter.appendRow(row, to: &output)
    }
}

// MARK: - One row with its attachments

/// The first row of a query with attachments, for
/// ``ResultSetAdapter/Shape/object``, read with prepared statements and no
/// cursor or transaction of its own: each statement sees what was committed
/// when it started (run the adapter on a connection in a repeatable read
/// transaction for one snapshot). Nested attachments run as batches.
///
/// When the adapter's arguments hold a value for every parameter of the
/// attachments (as `GET /employees/{n}` binds `:employeeNumber` from its
/// path), the row and all the attachments go in one pipeline, one round
/// trip, the attachments bound from the arguments; they are kept if the
/// row's columns of the same names hold the same values, which is what
/// binding from the row would have given, and run again, bound from the
/// row, otherwise. Without such values: the row, then the attachments in
/// one pipeline, two round trips. Rows after the first are dropped as they
/// arrive.
final class FirstRowWithAttachments: RowSource {
    private var row: Row?
    private var template: ObjectTemplate?
    private var children: [ChildBlock] = []

    init(connection: Connection, sql: String, arguments: SQLArguments, attachments: [Attachment]) throws {
        let statement = try connection.preparedStatement(for: sql)
        var childStatements: [PreparedStatement] = []
        childStatements.reserveCapacity(attachments.count)
        for attachment in attachments { try childStatements.append(connection.preparedStatement(for: attachment.sql)) }

        // The row first, with the attachments bound from the arguments when
        // they can be (the arguments may hold values for their parameters).
        var pipeline: [PipelinedStatement] = []
        pipeline.reserveCapacity(1 + attachments.count)
        let values = try statement.parameters.textValues { arguments.values[$0] }
        pipeline.append(PipelinedStatement(statement, values: values, firstRowOnly: true))
        for child in childStatements {
            // The same names as the row's (all `:employeeNumber`, say): the same values, no look-ups.
            if child.parameters.names == statement.parameters.names {
                pipeline.append(PipelinedStatement(child, values: values))
                continue
            }
            guard let values = try? child.parameters.textValues({ arguments.values[$0] }) else {
                pipeline.removeSubrange(1...)
                break
            }
            pipeline.append(PipelinedStatement(child, values: values))
        }
        let hasGuesses = pipeline.count == 1 + attachments.count
        var results = try connection.sendPipeline(pipeline)
        try connection.check(results[0])
        guard results[0].rowCount > 0 else { return }
        let row = Row(result: results[0], index: 0, layout: statement.layout(of: results[0]))
        var isGuessed = hasGuesses
        if hasGuesses {
            // Names already found to agree (with the same values) need no second look.
            var agreeingNames: [String]?
            for index in childStatements.indices {
                let parameters = childStatements[index].parameters
                if parameters.names == agreeingNames { continue }
                guard Self.row(row, agreesWith: pipeline[index + 1].values, for: parameters) else {
                    isGuessed = false
                    break
                }
                if parameters.names == statement.parameters.names { agreeingNames = parameters.names }
            }
        }

        let layout = row.layout
        if isGuessed {
            for result in results.dropFirst() { try connection.check(result) }
        } else {
            pipeline.removeAll(keepingCapacity: true)
            for child in childStatements {
                let values = try child.parameters.textValues { name in
                    if let column = layout.index(of: name) { return row[column].map(SQLValue.text) ?? .null }
                    return arguments.values[name]
                }
                pipeline.append(PipelinedStatement(child, values: values))
            }
            results = [results[0]]
            results += try connection.runPipeline(pipeline)
        }
        var children: [ChildBlock] = []
        children.reserveCapacity(attachments.count)
        for (index, attachment) in attachments.enumerated() {
            let child = childStatements[index]
            let result = results[index + 1]
            try children.append(
                ChildBlock(
                    attachment, rowsOfOneParent: result, layout: child.layout(of: result),
                    arguments: arguments, connection: connection))
        }
        self.children = children
        self.template = layout.objectTemplate(attachments: attachments)
        self.row = row
    }

    /// Whether binding `parameters` from the row gives `values`: the row's
    /// column of each name, where there is one, holds the same text.
    static func row(_ row: Row, agreesWith values: [String?], for parameters: Parameters) -> Bool {
        for (index, name) in parameters.names.enumerated() {
            guard let column = row.layout.index(of: name) else { continue }
            guard let value = values[index] else {
                if row.result.isNull(row: row.index, column: Int32(column)) { continue }
                return false
            }
            guard let bytes = row.bytes(column), bytes.elementsEqual(value.utf8) else { return false }
        }
        return true
    }

    func hasNext() throws -> Bool {
        row != nil
    }

    func writeNext(options: JSONRenderingOptions, to output: inout [UInt8]) throws {
        guard let row, let template else { return }
        self.row = nil
        template.write(row: row.index, of: row.result, options: options, to: &output) { index, output in
            children[index].writeArray(forParent: 0, options: options, to: &output)
        }
    }

    func close() {
        row = nil
        children = []
    }
}

// MARK: - Blocks from a server-side cursor

/// Rows of a query with attachments: the query is a server-side cursor read
/// in blocks; each attachment runs once per block.
final class BlockRows: RowSource {
    private let connection: Connection
    private let cursorName: String
    private let ownsTransaction: Bool
    private let arguments: SQLArguments
    private let attachments: [Attachment]
    private let blockSize: Int
    private let labelSpelling: [String: String]

    private var block: QueryResult?
    /// The first block, fetched in the same round trip as the cursor's declaration.
    private var firstBlock: QueryResult?
    private var layout: ColumnLayout?
    private var children: [ChildBlock] = []
    private var template: ObjectTemplate?
    private var position: Int32 = 0
    private var isExhausted = false
    private var isClosed = false

    init(connection: Connection, sql: String, arguments: SQLArguments, attachments: [Attachment], blockSize: Int) throws {
        let parameters = Parameters.parse(sql)
        // The arguments may also hold values for the attachments' parameters.
        let values = try parameters.bind { arguments.values[$0] }.map(\.text)
        self.connection = connection
        self.arguments = arguments
        self.attachments = attachments
        self.blockSize = max(1, blockSize)
        self.labelSpelling = SQLTokens.aliases(in: parameters.sql)
        connection.cursorCount += 1
        cursorName = "rows\(connection.cursorCount)"
        ownsTransaction = !connection.isInTransaction
        // BEGIN, DECLARE and the first FETCH in one round trip, not three.
        var statements: [PipelinedStatement] = []
        if ownsTransaction {
            statements.append(PipelinedStatement(sql: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"))
        }
        statements.append(PipelinedStatement(sql: "DECLARE \(cursorName) NO SCROLL CURSOR FOR \(parameters.sql)", values: values))
        statements.append(PipelinedStatement(sql: "FETCH \(self.blockSize) FROM \(cursorName)"))
        do {
            firstBlock = try connection.runPipeline(statements).last
        } catch {
            if ownsTransaction { connection.rollBackQuietly() }
            throw error
        }
    }

    func hasNext() throws -> Bool {
        if let block, position < block.rowCount { return true }
        guard !isExhausted, !isClosed else { return false }
        let block: QueryResult
        if let firstBlock {
            block = firstBlock
            self.firstBlock = nil
        } else {
            block = try connection.runSimple("FETCH \(blockSize) FROM \(cursorName)")
        }
        if template == nil {
            let columns = block.columns.map { $0.respelled(labelSpelling) }
            template = ObjectTemplate(columns: columns, attachmentKeys: attachments.map(\.key))
            layout = ColumnLayout(columns)
        }
        self.block = block
        position = 0
        if block.rowCount < blockSize { isExhausted = true }
        children = try attachments.map { attachment in
            try ChildBlock(
                attachment, parents: block, parentLayout: layout!, firstColumn: 0, arguments: arguments,
                connection: connection)
        }
        return block.rowCount > 0
    }

    func writeNext(options: JSONRenderingOptions, to output: inout [UInt8]) throws {
        guard let block, let template, position < block.rowCount else { return }
        let row = position
        position += 1
        template.write(row: row, of: block, options: options, to: &output) { index, output in
            children[index].writeArray(forParent: row, options: options, to: &output)
        }
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        block = nil
        firstBlock = nil
        children = []
        guard !connection.isBroken else { return }
        if ownsTransaction {
            connection.rollBackQuietly()
        } else {
            _ = try? connection.executeScript("CLOSE \(cursorName)")
        }
    }
}
