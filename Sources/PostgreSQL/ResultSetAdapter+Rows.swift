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
    private var template: ObjectTemplate?

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
        if template == nil { template = ObjectTemplate(columns: row.columns) }
        template!.write(row: row.index, of: row.result, options: options, to: &output) { _, _ in }
    }

    func close() {
        pending = nil
        cursor.close()
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
    private var layout: ColumnLayout?
    private var children: [ChildBlock] = []
    private var template: ObjectTemplate?
    private var position: Int32 = 0
    private var isExhausted = false
    private var isClosed = false

    init(connection: Connection, sql: String, arguments: SQLArguments, attachments: [Attachment], blockSize: Int) throws {
        let parameters = Parameters.parse(sql)
        // The arguments may also hold values for the attachments' parameters.
        let values: [String?] = try parameters.bind { arguments.values[$0] }.map { value in
            switch value {
            case .null: nil
            case .text(let text): text
            }
        }
        self.connection = connection
        self.arguments = arguments
        self.attachments = attachments
        self.blockSize = max(1, blockSize)
        self.labelSpelling = SQLTokens.aliases(in: parameters.sql)
        connection.cursorCount += 1
        cursorName = "rows\(connection.cursorCount)"
        ownsTransaction = !connection.isInTransaction
        if ownsTransaction {
            try connection.executeScript("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        }
        do {
            try connection.runUnprepared("DECLARE \(cursorName) NO SCROLL CURSOR FOR \(parameters.sql)", values: values)
        } catch {
            if ownsTransaction { connection.rollBackQuietly() }
            throw error
        }
    }

    func hasNext() throws -> Bool {
        if let block, position < block.rowCount { return true }
        guard !isExhausted, !isClosed else { return false }
        let block = try connection.runSimple("FETCH \(blockSize) FROM \(cursorName)")
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
        children = []
        guard !connection.isBroken else { return }
        if ownsTransaction {
            connection.rollBackQuietly()
        } else {
            _ = try? connection.executeScript("CLOSE \(cursorName)")
        }
    }
}
