internal import CLibPQ

/// A query result read row by row while the server sends it.
///
/// Each ``next()`` reads one row from the connection's socket
/// (`WireRowReader`; on an encrypted connection, libpq's single-row mode),
/// so even a result of millions of rows never sits in memory. Closing the
/// cursor before the end (or dropping it) cancels the query and reads what
/// is left, so the connection is idle and reusable afterwards.
///
/// ```swift
/// let rows = try connection.query("SELECT emp_no, first_name FROM employees")
/// while let row = try rows.next() {
///     print(row["first_name"] ?? "")
/// }
/// ```
public final class RowCursor {
    private let connection: Connection
    private var layout: ColumnLayout?
    /// The prepared statement read, which keeps the layout of its results.
    private let statement: PreparedStatement
    /// Reads the rows from the socket; `nil` when libpq reads them.
    private let wire: WireRowReader?
    private var isFinished = false
    /// The statement's span, ended with the cursor.
    private var span: StatementSpan?

    init(connection: Connection, statement: PreparedStatement, wire: WireRowReader?, span: StatementSpan? = nil) {
        self.connection = connection
        self.statement = statement
        self.wire = wire
        self.span = span
    }

    deinit {
        close()
    }

    /// The result's columns, known once the first row (or the end) was read.
    ///
    /// ```swift
    /// _ = try rows.next()
    /// rows.columns.map(\.label) // ["emp_no", "first_name"]
    /// ```
    public var columns: [Column] { layout?.columns ?? [] }

    /// The next row, or `nil` at the end of the result.
    ///
    /// - Throws: ``DatabaseError`` if the query fails, possibly after some
    ///   rows were returned (a division by zero in row 1000, a cancel).
    ///
    /// ```swift
    /// while let row = try rows.next() { print(row[0] ?? "NULL") }
    /// ```
    public func next() throws -> Row? {
        guard !isFinished else { return nil }
        if let wire { return try next(from: wire) }
        guard let handle = connection.handle, let raw = PQgetResult(handle) else {
            finish()
            if connection.handle == nil || connection.isBroken { throw connection.connectionError() }
            return nil
        }
        let result = QueryResult(taking: raw)
        if result.isSingleRow {
            return Row(result: result, index: 0, layout: layout(for: result))
        }
        if let error = result.error {
            endSpan(rows: nil, failure: error)
            finish()
            try connection.check(result)
        }
        _ = layout(for: result)
        endSpan(rows: result.affectedRowCount, failure: nil)
        finish()
        return nil
    }

    private func next(from wire: WireRowReader) throws -> Row? {
        do {
            guard let row = try wire.next() else {
                finish(wire)
                return nil
            }
            return Row(wire: row, layout: wireLayout(wire))
        } catch {
            endSpan(rows: nil, failure: error as? DatabaseError)
            finish()
            throw error
        }
    }

    /// Reads rows while `more()` says so, handing each to `body` as its
    /// values' text bytes by column index (`nil` for NULL), valid during
    /// the call only: whether the rows have ended. `nil` when the rows
    /// come through libpq (an encrypted connection): then read them with
    /// ``next()``. For the rows after a first read with ``next()``, whose
    /// ``Row/layout`` holds for them all.
    ///
    /// A list's loop, without a ``Row`` per row (which holds references,
    /// retained and released): see `WireRowReader.readRows(while:_:)`.
    package func readRows(
        while more: () -> Bool, _ body: (_ value: (Int) -> UnsafeRawBufferPointer?) throws -> Void
    ) throws -> Bool? {
        guard let wire else { return nil }
        guard !isFinished else { return true }
        do {
            let ended = try wire.readRows(while: more) { frame in
                try body { frame.bytes($0) }
            }
            if ended { finish(wire) }
            return ended
        } catch {
            endSpan(rows: nil, failure: error as? DatabaseError)
            finish()
            throw error
        }
    }

    /// Stops reading: cancels the query if rows are left, drains the
    /// connection and makes it available again. Safe to call twice.
    ///
    /// ```swift
    /// let rows = try connection.query("SELECT * FROM generate_series(1, 1000000)")
    /// _ = try rows.next()
    /// rows.close() // the server stops; the connection can run the next query
    /// ```
    public func close() {
        guard !isFinished else { return }
        endSpan(rows: nil, failure: nil)
        isFinished = true
        if let wire { wire.close() } else { connection.cancelAndDrain() }
        if connection.activeCursor === self { connection.activeCursor = nil }
    }

    /// The socket's rows have ended: the layout is taken (known also
    /// without rows), and the cursor is done.
    private func finish(_ wire: WireRowReader) {
        _ = wireLayout(wire)
        endSpan(rows: wire.completedRows, failure: nil)
        finish()
    }

    /// Ends the statement's span, once.
    private func endSpan(rows: @autoclosure () -> Int?, failure: DatabaseError?) {
        guard let span else { return }
        self.span = nil
        span.end(rows: rows(), failure: failure)
    }

    private func finish() {
        isFinished = true
        if wire == nil { connection.drain() }
        if connection.activeCursor === self { connection.activeCursor = nil }
    }

    private func layout(for result: QueryResult) -> ColumnLayout {
        if let layout { return layout }
        let layout = statement.layout(of: result)
        self.layout = layout
        return layout
    }

    /// The statement's layout, or the one the server described.
    private func wireLayout(_ wire: WireRowReader) -> ColumnLayout {
        if let layout { return layout }
        let layout = statement.knownLayout ?? statement.layout(of: wire.describedColumns ?? [])
        self.layout = layout
        return layout
    }
}

/// A `RowCursor` reads from its connection, which one thread uses at a time.
@available(*, unavailable)
extension RowCursor: Sendable {}

/// The columns of a result, shared by all its rows, with a label index.
package final class ColumnLayout {
    package let columns: [Column]
    let indexByLabel: [String: Int]
    /// What the layers above keep for these columns (``subscript(cache:)``).
    var layerCaches = LayerCaches()

    package init(_ columns: [Column]) {
        self.columns = columns
        var indexByLabel: [String: Int] = [:]
        for (index, column) in columns.enumerated() where indexByLabel[column.label] == nil {
            indexByLabel[column.label] = index
        }
        self.indexByLabel = indexByLabel
    }

    /// The index of the column labelled `label`, ignoring case if no label matches exactly.
    package func index(of label: String) -> Int? {
        if let index = indexByLabel[label] { return index }
        let lowered = label.lowercased()
        return columns.firstIndex { $0.label.lowercased() == lowered }
    }
}

/// One row of a result: text values by column index or label.
///
/// ```swift
/// let row = try connection.query("SELECT 1 AS one, NULL AS nothing").next()!
/// row["one"]     // "1"
/// row["nothing"] // nil
/// ```
public struct Row {
    /// Where the values are: a row of a complete result, or one read from the socket.
    package enum Values {
        case result(QueryResult, Int32)
        case wire(WireRow)
    }

    package let values: Values
    package let layout: ColumnLayout

    package init(result: QueryResult, index: Int32, layout: ColumnLayout) {
        self.values = .result(result, index)
        self.layout = layout
    }

    init(wire: WireRow, layout: ColumnLayout) {
        self.values = .wire(wire)
        self.layout = layout
    }

    /// The row's columns.
    ///
    /// ```swift
    /// row.columns.count // 2
    /// ```
    public var columns: [Column] { layout.columns }

    /// The value of the column at `column` in PostgreSQL's text format, `nil` for NULL.
    ///
    /// ```swift
    /// row[0] // "10001"
    /// ```
    public subscript(_ column: Int) -> String? {
        bytes(column).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The value of the first column labelled `label`, `nil` for NULL or an unknown label.
    ///
    /// ```swift
    /// row["employeeNumber"] // "10001"
    /// ```
    public subscript(_ label: String) -> String? {
        layout.index(of: label).flatMap { self[$0] }
    }

    /// The raw text bytes of a value (valid while the row lives), `nil` for NULL.
    package func bytes(_ column: Int) -> UnsafeRawBufferPointer? {
        switch values {
        case .result(let result, let index): result.bytes(row: index, column: Int32(column))
        case .wire(let row): row.bytes(column)
        }
    }

    /// Whether the value is NULL.
    package func isNull(_ column: Int) -> Bool {
        bytes(column) == nil
    }
}
