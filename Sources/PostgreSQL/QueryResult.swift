internal import CLibPQ

/// The single owner of one libpq `PGresult`, freed in `deinit`.
///
/// Values are read in PostgreSQL's text format straight from libpq's buffer,
/// without copying them into Swift strings first.
package final class QueryResult {
    let handle: OpaquePointer

    /// Takes ownership of `handle`; it is cleared when this object goes away.
    init(taking handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        PQclear(handle)
    }

    /// One result with the rows of `parts`, the results of one query read in
    /// single-row mode; `nil` if libpq runs out of memory.
    static func combining(_ parts: [QueryResult]) -> QueryResult? {
        guard let first = parts.first, let combined = PQcopyResult(first.handle, Int32(PG_COPYRES_ATTRS)) else {
            return nil
        }
        let result = QueryResult(taking: combined)
        var row: Int32 = 0
        for part in parts {
            for index in 0..<part.rowCount {
                for column in 0..<part.columnCount {
                    let isNull = PQgetisnull(part.handle, index, column) == 1
                    let value = isNull ? nil : PQgetvalue(part.handle, index, column)
                    let length = isNull ? -1 : PQgetlength(part.handle, index, column)
                    guard PQsetvalue(combined, row, column, value, length) == 1 else { return nil }
                }
                row += 1
            }
        }
        return result
    }

    // MARK: - Status

    var status: ExecStatusType { PQresultStatus(handle) }

    var isSingleRow: Bool { status == PGRES_SINGLE_TUPLE }

    var isSuccess: Bool {
        let status = self.status
        return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_SINGLE_TUPLE
            || status == PGRES_PIPELINE_SYNC
    }

    /// The server's error as a ``DatabaseError``, or `nil` for a successful result.
    package var error: DatabaseError? {
        guard !isSuccess else { return nil }
        func field(_ code: Character) -> String? {
            guard let text = PQresultErrorField(handle, Int32(code.asciiValue ?? 0)) else { return nil }
            return String(cString: text)
        }
        let message = field("M") ?? String(cString: PQresultErrorMessage(handle)).trimmed
        let code = field("C").map(SQLState.init(rawValue:)) ?? .internalError
        return DatabaseError(
            code: code, message: message, detail: field("D"), hint: field("H"), position: field("P").flatMap { Int($0) },
            constraint: field("n"), table: field("t"), column: field("c"))
    }

    /// Whether the error came from the server (with a SQLSTATE) rather than from libpq.
    var hasSQLState: Bool {
        PQresultErrorField(handle, Int32(UInt8(ascii: "C"))) != nil
    }

    /// The number of rows changed by an `INSERT`, `UPDATE`, `DELETE`, ... (0 when not applicable).
    var affectedRowCount: Int {
        Int(String(cString: PQcmdTuples(handle))) ?? 0
    }

    // MARK: - Rows and columns

    package var rowCount: Int32 { PQntuples(handle) }

    var columnCount: Int32 { PQnfields(handle) }

    package var columns: [Column] {
        (0..<columnCount).map { index in
            Column(label: String(cString: PQfname(handle, index)), type: PostgresType(oid: PQftype(handle, index)))
        }
    }

    /// The parameter types of a described prepared statement.
    package var parameterTypes: [UInt32] {
        (0..<PQnparams(handle)).map { PQparamtype(handle, $0) }
    }

    package func isNull(row: Int32, column: Int32) -> Bool {
        PQgetisnull(handle, row, column) != 0
    }

    /// The value's text bytes (valid while this result lives), or `nil` for NULL.
    /// Every value of every row written passes here: only an empty value is
    /// asked whether it is NULL (libpq gives NULL as an empty value).
    package func bytes(row: Int32, column: Int32) -> UnsafeRawBufferPointer? {
        let length = Int(PQgetlength(handle, row, column))
        guard length > 0 || PQgetisnull(handle, row, column) == 0 else { return nil }
        return UnsafeRawBufferPointer(start: PQgetvalue(handle, row, column), count: length)
    }

    package func string(row: Int32, column: Int32) -> String? {
        bytes(row: row, column: column).map { String(decoding: $0, as: UTF8.self) }
    }
}

/// The label and PostgreSQL type of one result column.
///
/// ```swift
/// let cursor = try connection.query("SELECT emp_no AS employeeNumber FROM employees")
/// cursor.columns[0].label   // "employeenumber" unless quoted: "employeeNumber"
/// cursor.columns[0].type   // .int4
/// ```
public struct Column: Sendable, Hashable {
    /// The column's label: its name or its `AS` alias.
    public var label: String
    /// The column's type (`type.oid` is `pg_type.oid`, as in `23` for `int4`).
    public var type: PostgresType

    /// Creates a column description.
    ///
    /// ```swift
    /// let column = Column(label: "id", type: .int4)
    /// ```
    public init(label: String, type: PostgresType) {
        self.label = label
        self.type = type
    }

    /// The column with its label spelled as in `spelling` (lower-cased alias → alias).
    package func respelled(_ spelling: [String: String]) -> Column {
        Column(label: spelling[label] ?? label, type: type)
    }
}

extension String {
    /// Without the trailing newline libpq puts at the end of its messages.
    var trimmed: String {
        var text = Substring(self)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return String(text)
    }
}
