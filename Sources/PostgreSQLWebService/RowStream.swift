import JSONStreaming
import PostgreSQL

/// The body of a response streamed from the database: the rows of a
/// started ``RowSource`` written as a JSON array (or CSV), or its first
/// row as a JSON object, pulled from the database only as the client
/// reads. It holds the connection the rows come from, and gives it back
/// to its pool in ``close()`` (which the server calls once, at the end,
/// however the response ended): an unfinished query is cancelled and an
/// open transaction rolled back before another caller gets it.
///
/// A stream, not a future: it is made once its query has answered (on a
/// worker, by `QueryRunner`), so that a failure or a missing row is known
/// before the response starts.
final class RowStream: StreamingBody {
    /// How rows are written.
    enum Format {
        /// A JSON array of objects keyed by column label; `[]` without rows.
        case json
        /// RFC 4180 CSV: a header row of column labels, then a line per
        /// row, each ended by CRLF; NULL is an empty field. For a list
        /// without embeds (CSV has no nesting).
        case csv
        /// The first row alone, as a JSON object (`null` without one).
        case firstRow
    }

    private let rows: any RowSource
    /// Whether the query found rows (or an object's row).
    let hasRows: Bool
    private let format: Format
    private let options: JSONRenderingOptions
    /// The connection's pool, to give it back to; `nil` for one the caller keeps.
    private let lease: (pool: ConnectionPool, connection: Connection)?
    /// The header fields the stream adds when it ends within the server's
    /// first block, from the number of rows it wrote.
    var headersForRows: ((_ rows: Int) -> [(name: String, value: String)])?
    private var writer: ByteWriter?
    private var hasWrittenOpening = false
    private var hasWrittenRow = false
    private var isClosed = false

    /// A stream of `rows`, started on `connection` (`hasRows` tells whether
    /// it found any), which came from `pool` (given back in ``close()``)
    /// unless `pool` is `nil`.
    init(
        _ rows: any RowSource, hasRows: Bool, format: Format, options: JSONRenderingOptions, connection: Connection, pool: ConnectionPool?
    ) {
        self.rows = rows
        self.hasRows = hasRows
        self.format = format
        self.options = options
        self.lease = pool.map { ($0, connection) }
    }

    deinit {
        close()
    }

    /// About how many bytes of rows one ``write(into:)`` appends.
    static let blockLimit = 16_384

    /// Appends the next rows (about 16 KB) to `output`: whether more come.
    func write(into output: inout [UInt8]) throws -> Bool {
        guard !isClosed else { return false }
        let writer = self.writer ?? ByteWriter(capacity: 4 << 10)
        self.writer = writer
        var bytes = writer
        defer { writer.flush(into: &output) }
        switch format {
        case .firstRow:
            if try rows.hasNext() { try rows.writeNext(options: options, to: writer) } else { JSONWriter.appendNull(to: &bytes) }
            rows.close()
            return false
        case .csv:
            guard let rows = rows as? StreamingRows else {
                throw DatabaseError(code: .internalError, message: "CSV takes a list without embeds")
            }
            if !hasWrittenOpening {
                _ = try rows.hasNext()
                CSVWriter.appendHeader(rows.columns, to: &bytes)
                hasWrittenOpening = true
            }
            if try rows.writeRows(as: .csv, options: options, afterRow: &hasWrittenRow, limit: Self.blockLimit, to: writer) {
                return true
            }
            rows.close()
            return false
        case .json:
            if !hasWrittenOpening {
                writer.append(UInt8(ascii: "["))
                hasWrittenOpening = true
            }
            if try rows.writeRows(options: options, afterRow: &hasWrittenRow, limit: Self.blockLimit, to: writer) {
                return true
            }
            writer.append(UInt8(ascii: "]"))
            rows.close()
            return false
        }
    }

    /// The rows written so far.
    var rowsWritten: Int { rows.rowsWritten }

    func headersWhenWhole() -> [(name: String, value: String)] {
        headersForRows?(rows.rowsWritten) ?? []
    }

    /// Ends the stream: cancels the query if rows are left, gives a pooled
    /// connection back (its transaction rolled back). Safe to call twice.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        rows.close()
        if let lease { lease.pool.release(lease.connection) }
    }
}

/// A stream is written by one thread (the HTTP connection's) at a time.
@available(*, unavailable)
extension RowStream: Sendable {}

/// An object followed by array members streamed from their own queries:
/// `{"departmentNumber":"d005",…,"employees":[…]}`. The object is written
/// first, without its closing brace; each member's query starts when its
/// turn comes (`start`, on the pulling thread), on a connection of its own.
final class ObjectWithMembers: StreamingBody {
    private let object: [UInt8]
    private let members: [(key: String, start: () throws -> RowStream)]
    /// The member being written; `nil` while the object is.
    private var current: (index: Int, rows: RowStream?)?

    /// `object` is a whole JSON object (`{…}`).
    init(object: [UInt8], members: [(key: String, start: () throws -> RowStream)]) {
        self.object = object
        self.members = members
    }

    func write(into output: inout [UInt8]) throws -> Bool {
        guard let (index, rows) = current else {
            // Its brace closes the members instead.
            output += object.dropLast()
            return try startMember(0, into: &output)
        }
        guard index < members.count, let rows else { return false }
        if try rows.write(into: &output) { return true }
        rows.close()
        return try startMember(index + 1, into: &output)
    }

    private func startMember(_ index: Int, into output: inout [UInt8]) throws -> Bool {
        guard index < members.count else {
            output.append(UInt8(ascii: "}"))
            current = (members.count, nil)
            return false
        }
        current = (index, nil)
        let rows = try members[index].start()
        current = (index, rows)
        // After the object's own members (`{` alone when it has none), or the member before.
        if index > 0 || object.count > 2 { output.append(UInt8(ascii: ",")) }
        JSONWriter.appendString(members[index].key, to: &output)
        output.append(UInt8(ascii: ":"))
        return true
    }

    func close() {
        current?.rows?.close()
        current = (members.count, nil)
    }
}
