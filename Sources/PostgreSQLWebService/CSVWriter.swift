import JSONStreaming
import PostgreSQL
/// Rows as RFC 4180 CSV: fields separated by commas, lines ended by CRLF,
/// a field quoted (its quotes doubled) when it holds a comma, a quote, a
/// line break or leading or trailing space. Values are PostgreSQL's text
/// format, with booleans as `true` and `false`; NULL is an empty field.
enum CSVWriter {
    static func appendHeader<Output: JSONOutput>(_ columns: [Column], to output: inout Output) {
        for (index, column) in columns.enumerated() {
            if column.label == ObjectTemplate.hiddenColumnsMarker { break }
            if index > 0 { output.append(UInt8(ascii: ",")) }
            var label = column.label == ObjectTemplate.valueMarker ? "value" : column.label
            label.withUTF8 { appendField(UnsafeRawBufferPointer($0), to: &output) }
        }
        output.append(0x0D)
        output.append(0x0A)
    }

    static func appendRow<Output: JSONOutput>(_ row: Row, to output: inout Output) {
        let columns = row.layout.columns
        for index in columns.indices {
            if columns[index].label == ObjectTemplate.hiddenColumnsMarker { break }
            if index > 0 { output.append(UInt8(ascii: ",")) }
            guard let bytes = row.bytes(index) else { continue }
            if columns[index].type == .bool, bytes.count == 1 {
                JSONWriter.appendBool(bytes[0] == UInt8(ascii: "t"), to: &output)
            } else {
                appendField(bytes, to: &output)
            }
        }
        output.append(0x0D)
        output.append(0x0A)
    }

    private static func appendField<Output: JSONOutput>(_ bytes: UnsafeRawBufferPointer, to output: inout Output) {
        let needsQuotes =
            bytes.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }
            || bytes.first == UInt8(ascii: " ") || bytes.last == UInt8(ascii: " ")
        guard needsQuotes else { return JSONWriter.appendRaw(bytes, to: &output) }
        output.append(UInt8(ascii: "\""))
        for byte in bytes {
            if byte == UInt8(ascii: "\"") { output.append(byte) }
            output.append(byte)
        }
        output.append(UInt8(ascii: "\""))
    }
}
