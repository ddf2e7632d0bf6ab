import HTTPServer
import PostgreSQL
import WebService

// MARK: - Statements that write, in one transaction

extension Query {
    /// Runs a ``transaction(_:_:returning:)`` on `connection` and answers
    /// with the last statement's rows.
    func write(
        earlier: [String], returning: Returning, location: String?, on connection: Connection, access: Access, runner: QueryRunner,
        request: RoutedRequest
    ) throws -> HTTPResponse {
        var body: [UInt8] = []
        var rowCount = 0
        var created: String?
        try connection.transaction(readOnly: access.isReadOnly, role: access.role) { connection in
            for statement in earlier {
                try connection.execute(statement, Self.arguments(arguments, for: statement))
            }
            let rows = try connection.query(sql, Self.arguments(arguments, for: sql))
            defer { rows.close() }
            if returning == .list { body.append(UInt8(ascii: "[")) }
            // Every row is read: a statement stopped halfway would fail the transaction.
            while let row = try rows.next() {
                rowCount += 1
                switch returning {
                case .object:
                    guard rowCount == 1 else { continue }
                    row.appendJSON(options: runner.options, to: &body)
                    created = location.flatMap { Self.fill($0, from: row) }
                case .list:
                    if rowCount > 1 { body.append(UInt8(ascii: ",")) }
                    row.appendJSON(options: runner.options, to: &body)
                }
            }
            if returning == .list { body.append(UInt8(ascii: "]")) }
        }
        if rowCount == 0, returning == .object { return HTTPResponse(status: .noContent) }
        var response = HTTPResponse(status: request.method == .post && rowCount > 0 ? .created : .ok, json: body)
        if request.method == .post, let created { response.headers["Location"] = created }
        return response
    }

    /// The arguments `statement` names: each statement of a transaction
    /// binds only its own parameters.
    private static func arguments(_ arguments: SQLArguments, for statement: String) -> SQLArguments {
        var bound = SQLArguments()
        for name in StatementShape.of(statement).parameters.names {
            if let value = arguments[value: name] { bound[value: name] = value }
        }
        return bound
    }

    /// `template` with each `{label}` replaced by the row's value of that
    /// label, percent-encoded as a path segment; `nil` when one is missing or NULL.
    static func fill(_ template: String, from row: Row) -> String? {
        var path = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else { break }
            path += rest[..<open]
            guard let value = row[String(rest[rest.index(after: open)..<close])] else { return nil }
            path += percentEncodedSegment(value)
            rest = rest[rest.index(after: close)...]
        }
        return path + rest
    }

    /// `text` with every byte that is not unreserved in a path segment (RFC 3986) percent-encoded.
    static func percentEncodedSegment(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF".unicodeScalars)
                encoded.unicodeScalars.append("%")
                encoded.unicodeScalars.append(digits[Int(byte >> 4)])
                encoded.unicodeScalars.append(digits[Int(byte & 0x0F)])
            }
        }
        return encoded
    }
}
