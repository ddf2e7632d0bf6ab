import HTTPServer
import WebService

/// The elements of a JSON array body held in a file (``SpooledBody``), read
/// one at a time, piece by piece: a bulk insert of any size holds one
/// element in memory, never the body. The array's own structure is checked
/// here (brackets, separators, strings that end); each element must be an
/// object, whose member names ``JSONObjectKeys`` reads and whose values
/// PostgreSQL reads as `json`.
///
/// ```swift
/// let isArray = try SpooledJSONArray.forEachElement(of: spooled) { element in rows += 1 }
/// ```
enum SpooledJSONArray {
    private enum Phase { case start, first, next, element, after, end }

    /// Calls `element` with each element's bytes, in order; `false` when the
    /// body is not a JSON array of objects (an element that is not an
    /// object, a missing bracket or comma, text after the array).
    static func forEachElement(of body: SpooledBody, _ element: ([UInt8]) throws -> Void) throws -> Bool {
        var phase = Phase.start
        var current: [UInt8] = []
        var depth = 0
        var inString = false
        var escaped = false
        var isValid = true
        try body.forEachPiece { piece in
            let bytes = piece.bindMemory(to: UInt8.self)
            var index = 0
            // Where the element's bytes in this piece begin: they go to `current` as one slice.
            var start = 0
            while index < bytes.count, isValid {
                let byte = bytes[index]
                index += 1
                if phase == .element {
                    if inString {
                        if escaped {
                            escaped = false
                        } else if byte == UInt8(ascii: "\\") {
                            escaped = true
                        } else if byte == UInt8(ascii: "\"") {
                            inString = false
                        }
                    } else if byte == UInt8(ascii: "\"") {
                        inString = true
                    } else if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                        depth += 1
                    } else if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
                        depth -= 1
                        if depth == 0 {
                            current.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                            try element(current)
                            current.removeAll(keepingCapacity: true)
                            phase = .after
                        }
                    }
                    continue
                }
                if byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { continue }
                switch (phase, byte) {
                case (.start, UInt8(ascii: "[")): phase = .first
                case (.first, UInt8(ascii: "]")), (.after, UInt8(ascii: "]")): phase = .end
                case (.first, UInt8(ascii: "{")), (.next, UInt8(ascii: "{")):
                    phase = .element
                    depth = 1
                    start = index - 1
                case (.after, UInt8(ascii: ",")): phase = .next
                default: isValid = false
                }
            }
            if phase == .element { current.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<bytes.count])) }
        }
        return isValid && phase == .end
    }

    /// `element` as one row of one column in `COPY … FROM STDIN`'s text
    /// format: the backslashes and the whitespace COPY reads as separators
    /// escaped.
    static func appendCopyRow(_ element: [UInt8], to data: inout [UInt8]) {
        element.withUnsafeBufferPointer { bytes in
            var start = 0
            for index in bytes.indices {
                let escape: UInt8
                switch bytes[index] {
                case UInt8(ascii: "\\"): escape = UInt8(ascii: "\\")
                case 0x0A: escape = UInt8(ascii: "n")
                case 0x0D: escape = UInt8(ascii: "r")
                case 0x09: escape = UInt8(ascii: "t")
                default: continue
                }
                data.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                data.append(UInt8(ascii: "\\"))
                data.append(escape)
                start = index + 1
            }
            data.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        data.append(0x0A)
    }
}

// MARK: - Values as the columns' text

extension SpooledJSONArray {
    /// `element`, an object, as one row of `COPY … FROM STDIN` for
    /// `columns`: each column's `member` as ``appendField(_:_:isJSON:to:)``
    /// writes it, NULL when the object has none.
    static func appendCopyRow(
        _ element: [UInt8], columns: [(column: TableWrite.Column, member: String)], to data: inout [UInt8]
    ) throws(HTTPError) {
        guard let members = JSONObjectKeys.members(element) else { throw invalid }
        for (position, (column, name)) in columns.enumerated() {
            if position > 0 { data.append(0x09) }
            if let member = members.last(where: { $0.name == name }) {
                try appendField(element, member.value, isJSON: column.isJSON, to: &data)
            } else {
                data.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "N")])
            }
        }
        data.append(0x0A)
    }

    /// The value whose JSON text is `bytes[range]` as one field of a COPY
    /// row for a column: the text the column's type reads, as
    /// `json_populate_record` gives it (a string's characters, a number or
    /// `true` as written, `null` as NULL); for a `json` or `jsonb` column
    /// (`isJSON`), the value's JSON text itself (a string read and written
    /// again, as PostgreSQL writes it), whose escapes must be characters of
    /// PostgreSQL's text (``readsEscapes(_:)``). 400 for what is not JSON,
    /// and for an object or an array, which only a JSON column takes this way.
    static func appendField(_ bytes: [UInt8], _ range: Range<Int>, isJSON: Bool, to data: inout [UInt8]) throws(HTTPError) {
        let value = bytes[range]
        if value.elementsEqual("null".utf8) {
            data.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "N")])
            return
        }
        if isJSON {
            guard readsEscapes(value) else { throw invalid }
            // A string is read and written again, as PostgreSQL gives a string to a JSON column (`"\u00e9"` as `"é"`).
            if value.first == UInt8(ascii: "\""), value.contains(UInt8(ascii: "\\")) {
                guard case .string(let text)? = try? JSONValue.parse(Array(value)) else { throw invalid }
                appendEscaped(ArraySlice(jsonString(text)), to: &data)
            } else {
                appendEscaped(value, to: &data)
            }
            return
        }
        switch value.first {
        case UInt8(ascii: "\""):
            try appendString(value.dropFirst().dropLast(), to: &data)
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            guard value.elementsEqual("true".utf8) || value.elementsEqual("false".utf8) else { throw invalid }
            data.append(contentsOf: value)
        default:
            guard isNumber(value) else { throw invalid }
            data.append(contentsOf: value)
        }
    }

    private static let invalid = HTTPError(.badRequest, detail: "Empty or invalid json.", code: "PGRST102")

    /// `bytes` with COPY's separators and backslashes escaped.
    private static func appendEscaped(_ bytes: ArraySlice<UInt8>, to data: inout [UInt8]) {
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\\"): data.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: data.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: data.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: data.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            default: data.append(byte)
            }
        }
    }

    /// A JSON string's contents (between its quotes), its escapes read, as COPY text.
    private static func appendString(_ text: ArraySlice<UInt8>, to data: inout [UInt8]) throws(HTTPError) {
        var index = text.startIndex
        func hex() throws(HTTPError) -> UInt32 {
            guard let value = hexQuad(text, at: index) else { throw invalid }
            index += 4
            return value
        }
        while index < text.endIndex {
            let byte = text[index]
            index += 1
            guard byte == UInt8(ascii: "\\") else {
                // A control character is no JSON inside a string (and so none needs COPY's escape here).
                guard byte >= 0x20 else { throw invalid }
                data.append(byte)
                continue
            }
            guard index < text.endIndex else { throw invalid }
            let escape = text[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "/"): data.append(escape)
            case UInt8(ascii: "\\"): data.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "b"): data.append(0x08)
            case UInt8(ascii: "f"): data.append(0x0C)
            case UInt8(ascii: "n"): data.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "r"): data.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "t"): data.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case UInt8(ascii: "u"):
                var scalar = try hex()
                if (0xD800..<0xDC00).contains(scalar) {
                    // A high surrogate takes the low one that must follow it.
                    guard index + 2 <= text.endIndex, text[index] == UInt8(ascii: "\\"), text[index + 1] == UInt8(ascii: "u") else {
                        throw invalid
                    }
                    index += 2
                    let low = try hex()
                    guard (0xDC00..<0xE000).contains(low) else { throw invalid }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                // NUL is no character of PostgreSQL's text, as json_populate_record refuses it too.
                guard scalar != 0, let character = Unicode.Scalar(scalar) else { throw invalid }
                appendEscaped(ArraySlice(Array(String(Character(character)).utf8)), to: &data)
            default:
                throw invalid
            }
        }
    }

    /// Whether the `\u` escapes of JSON text are all characters of PostgreSQL's
    /// text, as it requires of every string of a body it reads into records
    /// (`json` itself keeps them unread): no `\u0000`, and each surrogate in
    /// a pair, high then low. Other faults are left to `json` to refuse.
    static func readsEscapes(_ text: ArraySlice<UInt8>) -> Bool {
        var index = text.startIndex
        var awaitsLow = false
        while index < text.endIndex {
            guard text[index] == UInt8(ascii: "\\"), index + 1 < text.endIndex else {
                if awaitsLow { return false }
                index += 1
                continue
            }
            guard text[index + 1] == UInt8(ascii: "u"), let scalar = hexQuad(text, at: index + 2) else {
                if awaitsLow { return false }
                index += 2
                continue
            }
            switch scalar {
            case 0xD800..<0xDC00:
                if awaitsLow { return false }
                awaitsLow = true
            case 0xDC00..<0xE000:
                if !awaitsLow { return false }
                awaitsLow = false
            default:
                if awaitsLow || scalar == 0 { return false }
            }
            index += 6
        }
        return !awaitsLow
    }

    /// `text` as a JSON string as PostgreSQL writes one (`escape_json`): a
    /// quote, a backslash and the control characters escaped, nothing else.
    static func jsonString(_ text: String) -> [UInt8] {
        var bytes = [UInt8(ascii: "\"")]
        for byte in text.utf8 {
            switch byte {
            case 0x08: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case 0x0C: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case 0x0A: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), byte]
            case 0..<0x20:
                let digits = Array("0123456789abcdef".utf8)
                bytes += Array("\\u00".utf8) + [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
        return bytes
    }

    /// The four hexadecimal digits of a `\u` escape at `index`, or `nil`.
    private static func hexQuad(_ text: ArraySlice<UInt8>, at index: Int) -> UInt32? {
        guard index + 4 <= text.endIndex else { return nil }
        var value: UInt32 = 0
        for byte in text[index..<(index + 4)] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// Whether `text` is a JSON number (`-12`, `0.5`, `1e-3`).
    private static func isNumber(_ text: ArraySlice<UInt8>) -> Bool {
        var index = text.startIndex
        func digits() -> Int {
            let start = index
            while index < text.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(text[index]) { index += 1 }
            return index - start
        }
        if index < text.endIndex, text[index] == UInt8(ascii: "-") { index += 1 }
        let whole = index
        let count = digits()
        guard count > 0, count == 1 || text[whole] != UInt8(ascii: "0") else { return false }
        if index < text.endIndex, text[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { return false }
        }
        if index < text.endIndex, text[index] == UInt8(ascii: "e") || text[index] == UInt8(ascii: "E") {
            index += 1
            if index < text.endIndex, text[index] == UInt8(ascii: "+") || text[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { return false }
        }
        return index == text.endIndex
    }
}
