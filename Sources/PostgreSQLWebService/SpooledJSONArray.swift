import HTTPServer

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
            for byte in piece where isValid {
                if phase == .element {
                    current.append(byte)
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
                    current.append(byte)
                case (.after, UInt8(ascii: ",")): phase = .next
                default: isValid = false
                }
            }
        }
        return isValid && phase == .end
    }

    /// `element` as one row of one column in `COPY … FROM STDIN`'s text
    /// format: the backslashes and the whitespace COPY reads as separators
    /// escaped.
    static func appendCopyRow(_ element: [UInt8], to data: inout [UInt8]) {
        for byte in element {
            switch byte {
            case UInt8(ascii: "\\"): data.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: data.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: data.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: data.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            default: data.append(byte)
            }
        }
        data.append(0x0A)
    }
}
