import JSONStreaming
import PostgreSQL
import RequestTracing
import Synchronization
/// Where a ``RowStream`` gets its rows, one JSON object at a time.
///
/// Rows are written to the stream's ``ByteWriter``, which the stream
/// appends to the response's array once per block: a row's dozen appends
/// to the array itself would each check it and copy through the collection
/// machinery.
protocol RowSource: AnyObject {
    /// Whether another row is available (reads ahead if needed).
    func hasNext() throws -> Bool
    /// Writes the next row as a JSON object; only after `hasNext()` returned `true`.
    func writeNext(options: JSONRenderingOptions, to writer: ByteWriter) throws
    /// Writes rows as JSON objects separated by commas (one before the
    /// first too when `afterRow`) until the writer holds about `limit`
    /// bytes or the rows end: whether rows are left.
    func writeRows(options: JSONRenderingOptions, afterRow: inout Bool, limit: Int, to writer: ByteWriter) throws -> Bool
    /// Stops: cancels what is still running, leaves the connection idle.
    func close()
    /// The rows written so far.
    var rowsWritten: Int { get }
    /// The value of the column labelled `label` in the row `writeNext`
    /// writes next (after `hasNext()` returned `true`), as text; `nil` for
    /// NULL or a column it does not have.
    func nextText(_ label: String) -> String?
    /// The type of the column labelled `label`, once the rows are known.
    func type(of label: String) -> PostgresType?
}

extension RowSource {
    func writeRows(options: JSONRenderingOptions, afterRow: inout Bool, limit: Int, to writer: ByteWriter) throws -> Bool {
        while writer.count < limit, try hasNext() {
            if afterRow { writer.append(UInt8(ascii: ",")) }
            afterRow = true
            try writeNext(options: options, to: writer)
        }
        return try hasNext()
    }
}

// MARK: - Single-row mode

/// Rows of a query without embeds, streamed (``RowCursor``).
final class StreamingRows: RowSource {
    private let cursor: RowCursor
    private var pending: Row?
    private(set) var rowsWritten = 0
    /// The rows' template, looked up once: every row has the same columns.
    private var template: ObjectTemplate?

    init(connection: Connection, sql: String, arguments: SQLArguments, access: Access) throws {
        cursor = try connection.query(sql, arguments, access: access)
    }

    func hasNext() throws -> Bool {
        if pending == nil { pending = try cursor.next() }
        return pending != nil
    }

    func writeNext(options: JSONRenderingOptions, to writer: ByteWriter) throws {
        guard let row = pending.take() else { return }
        let template = self.template ?? row.layout.objectTemplate
        self.template = template
        var output = writer
        template.write(row, options: options, to: &output) { _, _ in }
        rowsWritten += 1
    }

    func close() {
        pending = nil
        cursor.close()
    }

    /// The columns, known once the query answered (also without rows).
    var columns: [Column] { cursor.columns }

    func nextText(_ label: String) -> String? { pending?[label] }

    func type(of label: String) -> PostgresType? {
        columns.first { $0.label == label }?.type
    }

    func writeRows(options: JSONRenderingOptions, afterRow: inout Bool, limit: Int, to writer: ByteWriter) throws -> Bool {
        try writeRows(as: .json, options: options, afterRow: &afterRow, limit: limit, to: writer)
    }

    /// ``writeRows(options:afterRow:limit:to:)`` as JSON objects or as CSV lines.
    func writeRows(
        as format: RowStream.Format, options: JSONRenderingOptions, afterRow: inout Bool, limit: Int,
        to writer: ByteWriter
    ) throws -> Bool {
        guard try hasNext(), let layout = pending?.layout else { return false }
        var output = writer
        // Once per block, not per row: taking the template out of its optional copies it.
        let template = self.template ?? layout.objectTemplate
        self.template = template
        while writer.count < limit, try hasNext() {
            // The row read ahead, written and let go before the loop below:
            // a row still held keeps its frame from being read into again.
            do {
                guard let row = pending.take() else { break }
                switch format {
                case .csv:
                    CSVWriter.appendRow(row, to: &output)
                case .json, .firstRow:
                    if afterRow { output.append(UInt8(ascii: ",")) }
                    template.write(row, options: options, to: &output) { _, _ in }
                }
                rowsWritten += 1
            }
            afterRow = true
            // The rest of the block read from the socket without a `Row` each.
            if format == .json,
                let ended = try cursor.readRows(
                    while: { writer.count < limit },
                    { values in
                        output.append(UInt8(ascii: ","))
                        template.write(values: values, options: options, to: &output)
                        rowsWritten += 1
                    }), ended
            {
                return false
            }
        }
        return try hasNext()
    }
}

// MARK: - One row with its embeds

/// The first row of an object query whose embeds have embeds of their
/// own: ``ObjectByKey`` run on a held connection, each round one
/// pipeline, in a transaction with the request's access. Nested embeds
/// run as batches.
final class FirstRowWithEmbeds: RowSource {
    private var rows: ObjectByKey.Rows?
    private(set) var rowsWritten = 0

    init(connection: Connection, query: Query, access: Access) throws {
        if access != .unrestricted, !connection.isInTransaction { try connection.begin(access) }
        var object = ObjectByKey(query)
        while true {
            var statements = try object.nextRound { try connection.preparedStatement(for: $0) }
            if statements.contains(where: { $0.prepared?.isPrepared == false }) {
                // A look-up found the cache full and emptied it, deallocating
                // the statements looked up before it: once more, with room.
                statements = try object.nextRound { try connection.preparedStatement(for: $0) }
            }
            let results = try connection.sendPipeline(statements)
            let outcome = try object.receive(
                { index in
                    let result = results[index]
                    try connection.check(result)
                    return result
                }, connection: connection)
            switch outcome {
            case .noRow: return
            case .secondRound: continue
            case .object(let rows):
                self.rows = rows
                return
            }
        }
    }

    func hasNext() throws -> Bool {
        rows != nil
    }

    func nextText(_ label: String) -> String? { rows?.row[label] }

    func type(of label: String) -> PostgresType? {
        rows?.row.columns.first { $0.label == label }?.type
    }

    func writeNext(options: JSONRenderingOptions, to writer: ByteWriter) throws {
        guard let rows else { return }
        self.rows = nil
        var output = writer
        rows.write(options: options, to: &output)
        rowsWritten = 1
    }

    func close() {
        rows = nil
    }
}

// MARK: - Blocks from a server-side cursor

/// Rows of a list with embeds: the list is a server-side cursor read in
/// blocks; each embed runs once per block. The cursor lives in a
/// read-only, repeatable read transaction of its own (one snapshot for
/// parents and children), as the request's role, or in the caller's
/// transaction when the connection is already in one.
final class BlockRows: RowSource {
    private let connection: Connection
    private let cursorName: String
    private let ownsTransaction: Bool
    private let arguments: SQLArguments
    private let embeds: [Query.Embed]
    private let fixedBlockSize: Int?
    private let labelSpelling: [String: String]
    /// The rows the last `FETCH` asked for: fewer came, the cursor is done.
    private var requested = 0
    /// Whether this stream is counted in `openStreams`.
    private var isCounted = false

    /// Parent rows per block, unless the adapter fixed it: a large block
    /// while at most `streamsWithLargeBlocks` streams of blocks are open
    /// in the process, a small one beyond, decided anew at each `FETCH`.
    /// A stream holds one block and the rows attached to it at a time
    /// (about 110 KB for 64 employees and their salaries): the small block
    /// keeps many concurrent streams within their memory, and one stream
    /// alone gets the large block's fewer statements and round trips.
    static let largeBlock = 256
    static let smallBlock = 64
    static let streamsWithLargeBlocks = 8
    private static let openStreams = Atomic<Int>(0)

    private var blockSize: Int {
        fixedBlockSize
            ?? (Self.openStreams.load(ordering: .relaxed) <= Self.streamsWithLargeBlocks
                ? Self.largeBlock : Self.smallBlock)
    }

    private var block: QueryResult?
    /// The first block, fetched in the same round trip as the cursor's declaration.
    private var firstBlock: QueryResult?
    /// The block after `block`, when looking ahead: its parents, and the
    /// statements reading their attached rows, running meanwhile.
    private var ahead: (parents: QueryResult, pending: PendingPipeline?, span: (any Span)?)?
    private var layout: ColumnLayout?
    private var children: [ChildBlock] = []
    private var template: ObjectTemplate?
    private var position: Int32 = 0
    private var isExhausted = false
    private var isClosed = false
    private(set) var rowsWritten = 0

    init(connection: Connection, sql: String, arguments: SQLArguments, embeds: [Query.Embed], access: Access, blockSize: Int?) throws {
        let shape = StatementShape.of(sql)
        let parameters = shape.parameters
        // The arguments may also hold values for the embeds' parameters.
        let values = try parameters.bind { arguments[value: $0] }.map { $0.text }
        self.connection = connection
        self.arguments = arguments
        self.embeds = embeds
        self.fixedBlockSize = blockSize.map { max(1, $0) }
        self.labelSpelling = shape.labelSpelling
        connection.cursorCount += 1
        cursorName = "rows\(connection.cursorCount)"
        ownsTransaction = !connection.isInTransaction
        // BEGIN (and the role), DECLARE and the first FETCH in one round trip.
        var statements: [PipelinedStatement] = []
        if ownsTransaction {
            statements.append(PipelinedStatement(sql: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"))
            if let role = access.role { statements.append(PipelinedStatement(sql: Connection.setLocalRoleSQL, values: [role])) }
        }
        var declaration = PipelinedStatement(sql: "DECLARE \(cursorName) NO SCROLL CURSOR FOR \(parameters.sql)", values: values)
        declaration.isTraced = true
        statements.append(declaration)
        Self.openStreams.add(1, ordering: .relaxed)
        isCounted = true
        requested = self.blockSize
        statements.append(PipelinedStatement(sql: "FETCH \(requested) FROM \(cursorName)"))
        do {
            let results = try connection.sendPipeline(statements)
            if ownsTransaction, let role = access.role { try RoleError.check(results[1], role: role, on: connection) }
            for result in results { try connection.check(result) }
            firstBlock = results.last
        } catch {
            uncount()
            if ownsTransaction { connection.rollBackQuietly() }
            throw error
        }
    }

    deinit { uncount() }

    private func uncount() {
        guard isCounted else { return }
        isCounted = false
        Self.openStreams.subtract(1, ordering: .relaxed)
    }

    func hasNext() throws -> Bool {
        if let block, position < block.rowCount { return true }
        guard !isClosed else { return false }
        // The block written, and the rows attached to it, are freed before
        // the next is read: a stream holds one block's results at a time
        // (and the parents of the block after it, while looking ahead).
        self.block = nil
        children = []
        let parents: QueryResult
        if let ahead {
            self.ahead = nil
            parents = ahead.parents
            // One result per embed; none when the block has no parents.
            defer { ahead.span?.end() }
            let results = try ahead.pending?.results()
            children = try embeds.indices.map { index in
                try ChildBlock(
                    embeds[index], parentCount: parents.rowCount, result: results?[index],
                    arguments: arguments, connection: connection)
            }
        } else {
            guard let fetched = try fetchParents() else { return false }
            parents = fetched
            let span = startBlockSpan(parents: parents)
            defer { span?.end() }
            children = try underBlockSpan(span) {
                try ChildBlock.blocks(
                    embeds, parents: parents, parentLayout: layout!, firstColumn: 0, arguments: arguments,
                    connection: connection)
            }
        }
        self.block = parents
        position = 0
        if looksAhead, !isExhausted, parents.rowCount > 0 { try sendAhead() }
        return parents.rowCount > 0
    }

    /// Whether the next block is read while this one is written: while
    /// few streams are open, so that PostgreSQL runs a block's attached
    /// statements while this thread writes the previous block, each on a
    /// core of its own. With more streams open
    /// the cores are busy with the others, and each stream keeps to one block.
    private var looksAhead: Bool {
        Self.openStreams.load(ordering: .relaxed) <= Self.streamsWithLargeBlocks
    }

    /// The next block of parent rows, `nil` after the last.
    private func fetchParents() throws -> QueryResult? {
        let block: QueryResult
        if let firstBlock {
            block = firstBlock
            self.firstBlock = nil
        } else {
            guard !isExhausted else { return nil }
            requested = blockSize
            block = try connection.runSimple("FETCH \(requested) FROM \(cursorName)")
        }
        if template == nil {
            let columns = block.columns.map { $0.respelled(labelSpelling) }
            template = ObjectTemplate(columns: columns, embedKeys: embeds.map(\.key))
            layout = ColumnLayout(columns)
        }
        if block.rowCount < requested { isExhausted = true }
        return block
    }

    /// Fetches the next block of parents and sends the statements that
    /// read their attached rows, in one pipeline whose results are read
    /// once the current block is written. A result waits in the socket
    /// and in libpq until then; the statement has finished unless its
    /// result is larger than the socket's buffer.
    private func sendAhead() throws {
        guard let parents = try fetchParents() else { return }
        let statements = try ChildBlock.statements(
            for: embeds, parents: parents, parentLayout: layout!, firstColumn: 0, arguments: arguments,
            connection: connection)
        let span = statements.isEmpty ? nil : startBlockSpan(parents: parents)
        do {
            let pending = statements.isEmpty ? nil : try underBlockSpan(span) { try connection.startPipeline(statements) }
            ahead = (parents, pending, span)
        } catch {
            span?.end()
            throw error
        }
    }

    // MARK: - Spans

    /// The span of one block's attachments, when the connection's work is traced.
    private func startBlockSpan(parents: QueryResult) -> (any Span)? {
        guard let trace = connection.trace else { return nil }
        let span = trace.startSpan("attachments", ofKind: .internal)
        if span.isRecording {
            span.attributes["sqlrest.block.parents"] = Int(parents.rowCount)
            span.attributes["sqlrest.block.attachments"] = embeds.map(\.key)
        }
        return span
    }

    /// Runs `body` with the connection's statements traced under `span`.
    private func underBlockSpan<Result>(_ span: (any Span)?, _ body: () throws -> Result) rethrows -> Result {
        guard let span, let trace = connection.trace else { return try body() }
        connection.trace = trace.under(span)
        defer { connection.trace = trace }
        return try body()
    }

    func nextText(_ label: String) -> String? {
        guard let block, let layout, position < block.rowCount, let column = layout.index(of: label) else { return nil }
        return block.string(row: position, column: Int32(column))
    }

    func type(of label: String) -> PostgresType? {
        layout.flatMap { layout in layout.index(of: label).map { layout.columns[$0].type } }
    }

    func writeNext(options: JSONRenderingOptions, to writer: ByteWriter) throws {
        guard let block, let template, position < block.rowCount else { return }
        let row = position
        position += 1
        rowsWritten += 1
        var output = writer
        template.write(row: row, of: block, options: options, to: &output) { index, output in
            children[index].write(forParent: row, options: options, to: &output)
        }
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        uncount()
        block = nil
        firstBlock = nil
        ahead?.pending?.close()
        ahead?.span?.end()
        ahead = nil
        children = []
        guard !connection.isBroken else { return }
        if ownsTransaction {
            connection.rollBackQuietly()
        } else {
            _ = try? connection.executeScript("CLOSE \(cursorName)")
        }
    }
}
