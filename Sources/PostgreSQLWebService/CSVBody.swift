import HTTPServer
import JSONStreaming

/// A `text/csv` request body read as the JSON array of objects a write
/// takes, as PostgREST reads it: the first line names the columns, each
/// line after it is a row; fields are separated by commas, lines by LF or
/// CRLF, and a field in double quotes may hold commas, line breaks and
/// doubled quotes. An unquoted `NULL` is null; every other field is its
/// text, read as its column's type by PostgreSQL.
///
/// ```swift
/// CSVBody.json(Array("a,b\n1,NULL".utf8))   // [{"a":"1","b":null}]
/// ```
enum CSVBody {
    /// The body as JSON text; a line whose field count differs from the
    /// header's, a quote left open or an empty body is a 400 (`PGRST102`).
    static func json(_ body: [UInt8]) throws(HTTPError) -> String {
        let lines = try records(body)
        guard let header = lines.first, !header.isEmpty else {
            throw HTTPError(.badRequest, detail: "Empty or invalid CSV: the first line names the columns.", code: "PGRST102")
        }
        var output: [UInt8] = [UInt8(ascii: "[")]
        for (index, line) in lines.dropFirst().enumerated() {
            guard line.count == header.count else {
                throw HTTPError(.badRequest, detail: "All lines must have same number of fields", code: "PGRST102")
            }
            if index > 0 { output.append(UInt8(ascii: ",")) }
            output.append(UInt8(ascii: "{"))
            for (position, field) in line.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                JSONWriter.appendString(header[position] ?? "NULL", to: &output)
                output.append(UInt8(ascii: ":"))
                if let field {
                    JSONWriter.appendString(field, to: &output)
                } else {
                    output += Array("null".utf8)
                }
            }
            output.append(UInt8(ascii: "}"))
        }
        output.append(UInt8(ascii: "]"))
        return String(decoding: output, as: UTF8.self)
    }

    /// The body's lines, each its fields (`nil`: an unquoted `NULL`); a
    /// final line break ends the last line rather than starting one, and a
    /// blank line is skipped.
    static func records(_ body: [UInt8]) throws(HTTPError) -> [[String?]] {
        var lines: [[String?]] = []
        var line: [String?] = []
        var field: [UInt8] = []
        var quoted = false
        var index = 0
        func endField() {
            let text = String(decoding: field, as: UTF8.self)
            line.append(!quoted && text == "NULL" ? nil : text)
            field.removeAll(keepingCapacity: true)
            quoted = false
        }
        while index < body.count {
            let byte = body[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\"") where field.isEmpty && !quoted:
                // A quoted field: up to the quote not doubled.
                quoted = true
                var closed = false
                while index < body.count {
                    let inner = body[index]
                    index += 1
                    if inner == UInt8(ascii: "\"") {
                        if index < body.count, body[index] == UInt8(ascii: "\"") {
                            field.append(inner)
                            index += 1
                        } else {
                            closed = true
                            break
                        }
                    } else {
                        field.append(inner)
                    }
                }
                guard closed else {
                    throw HTTPError(.badRequest, detail: "Empty or invalid CSV: a quoted field is not closed.", code: "PGRST102")
                }
            case UInt8(ascii: ","):
                endField()
            case UInt8(ascii: "\n"):
                // A blank line holds no row.
                guard !line.isEmpty || !field.isEmpty || quoted else { continue }
                endField()
                lines.append(line)
                line.removeAll()
            case UInt8(ascii: "\r") where index == body.count || body[index] == UInt8(ascii: "\n"):
                continue
            default:
                guard !quoted else {
                    throw HTTPError(
                        .badRequest, detail: "Empty or invalid CSV: text after a quoted field's closing quote.", code: "PGRST102")
                }
                field.append(byte)
            }
        }
        if !field.isEmpty || quoted || !line.isEmpty {
            endField()
            lines.append(line)
        }
        return lines
    }
}
