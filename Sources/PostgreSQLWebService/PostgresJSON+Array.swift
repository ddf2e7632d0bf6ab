import JSONStreaming
import PostgreSQL

// MARK: - Arrays

extension PostgresJSON {
    /// PostgreSQL array text as a JSON array, each element written by its
    /// type: `{1,2,NULL}` → `[1,2,null]`, `{{"a b","c\"d"},{e,NULL}}` →
    /// `[["a b","c\"d"],["e",null]]`. A lower-bound decoration
    /// (`[0:1]={7,8}`) is dropped. Text that is not a well-formed array is
    /// written as a string.
    static func appendArray<Output: JSONOutput>(
        _ value: UnsafeRawBufferPointer, elementKind: Format.Kind, delimiter: UInt8, to output: inout Output, options: JSONRenderingOptions
    ) {
        let start = output.count
        if !appendArrayElements(value, elementKind: elementKind, delimiter: delimiter, to: &output, options: options) {
            output.truncate(to: start)
            JSONWriter.appendString(utf8: value, to: &output)
        }
    }

    /// What the array's text may hold next.
    private enum ArrayToken { case array, elementOrEnd, element, delimiterOrEnd, nothing }

    /// Returns `false`, with partial output, when the text is malformed.
    private static func appendArrayElements<Output: JSONOutput>(
        _ value: UnsafeRawBufferPointer, elementKind: Format.Kind, delimiter: UInt8, to output: inout Output, options: JSONRenderingOptions
    ) -> Bool {
        var index = 0
        if value.first == UInt8(ascii: "[") {
            guard let equals = value.firstIndex(of: UInt8(ascii: "=")) else { return false }
            index = equals + 1
        }
        var expected = ArrayToken.array
        var depth = 0
        while index < value.count {
            let byte = value[index]
            if isArrayWhitespace(byte) {
                index += 1
                continue
            }
            switch byte {
            case UInt8(ascii: "{"):
                guard expected == .array || expected == .elementOrEnd || expected == .element else { return false }
                output.append(UInt8(ascii: "["))
                depth += 1
                index += 1
                expected = .elementOrEnd
            case UInt8(ascii: "}"):
                guard expected == .elementOrEnd || expected == .delimiterOrEnd else { return false }
                output.append(UInt8(ascii: "]"))
                depth -= 1
                index += 1
                expected = depth == 0 ? .nothing : .delimiterOrEnd
            case delimiter:
                guard expected == .delimiterOrEnd else { return false }
                output.append(UInt8(ascii: ","))
                index += 1
                expected = .element
            default:
                guard expected == .elementOrEnd || expected == .element else { return false }
                if byte == UInt8(ascii: "\"") {
                    guard let end = appendQuotedElement(value, from: index, kind: elementKind, to: &output, options: options) else {
                        return false
                    }
                    index = end
                } else {
                    index = appendUnquotedElement(
                        value, from: index, kind: elementKind, delimiter: delimiter, to: &output, options: options)
                }
                expected = .delimiterOrEnd
            }
        }
        return expected == .nothing
    }

    /// An element in double quotes, with `\` escaping the next character.
    /// Returns the index after the closing quote, or `nil` if there is none.
    private static func appendQuotedElement<Output: JSONOutput>(
        _ value: UnsafeRawBufferPointer, from start: Int, kind: Format.Kind, to output: inout Output, options: JSONRenderingOptions
    ) -> Int? {
        var end = start + 1
        var escapes = 0
        while end < value.count && value[end] != UInt8(ascii: "\"") {
            if value[end] == UInt8(ascii: "\\") {
                end += 1
                escapes += 1
            }
            end += 1
        }
        guard end < value.count else { return nil }
        let content = UnsafeRawBufferPointer(rebasing: value[(start + 1)..<end])
        if escapes == 0 {
            appendScalar(content, kind: kind, to: &output, options: options)
        } else {
            withUnsafeTemporaryAllocation(byteCount: content.count - escapes, alignment: 1) { buffer in
                var written = 0
                var index = 0
                while index < content.count {
                    if content[index] == UInt8(ascii: "\\") { index += 1 }
                    buffer[written] = content[index]
                    written += 1
                    index += 1
                }
                appendScalar(UnsafeRawBufferPointer(buffer), kind: kind, to: &output, options: options)
            }
        }
        return end + 1
    }

    /// An unquoted element, up to the delimiter or `}`; `NULL` is null.
    /// Returns the index after it.
    private static func appendUnquotedElement<Output: JSONOutput>(
        _ value: UnsafeRawBufferPointer, from start: Int, kind: Format.Kind, delimiter: UInt8, to output: inout Output,
        options: JSONRenderingOptions
    ) -> Int {
        var end = start
        while end < value.count, value[end] != delimiter, value[end] != UInt8(ascii: "}"), value[end] != UInt8(ascii: "{") {
            end += 1
        }
        var contentEnd = end
        while contentEnd > start && isArrayWhitespace(value[contentEnd - 1]) { contentEnd -= 1 }
        let content = UnsafeRawBufferPointer(rebasing: value[start..<contentEnd])
        if content.count == 4, content.elementsEqual("NULL".utf8, by: { $0 | 0x20 == $1 | 0x20 }) {
            JSONWriter.appendNull(to: &output)
        } else {
            appendScalar(content, kind: kind, to: &output, options: options)
        }
        return end
    }

    private static func isArrayWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n")
            || byte == UInt8(ascii: "\r") || byte == 0x0B || byte == 0x0C
    }
}
