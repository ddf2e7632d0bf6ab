/// Restores the spelling of column aliases that PostgreSQL folds to lower case.
///
/// PostgreSQL lower-cases unquoted identifiers, so `emp_no AS employeeNumber`
/// comes back labelled `employeenumber`. JSON keys and the parameter names
/// of attached subqueries are written in camel case, so the labels are
/// given back the spelling of the SQL text: every unquoted identifier after
/// `AS` that has capitals maps from its lower-cased form to itself.
/// Quoted aliases (`AS "name.first"`) keep their case in PostgreSQL already.
///
/// ```swift
/// SQLTokens.aliases(in: "SELECT emp_no AS employeeNumber FROM employees")
/// // ["employeenumber": "employeeNumber"]
/// ```
extension SQLTokens {
    /// Lower-cased aliases → their spelling in the SQL text.
    package static func aliases(in sql: String) -> [String: String] {
        var aliases: [String: String] = [:]
        var previousWordWasAS = false
        SQLTokens.scan(sql) { token, text in
            switch token {
            case .word:
                let word = String(decoding: text, as: UTF8.self)
                let lowered = word.lowercased()
                if previousWordWasAS, word != lowered { aliases[lowered] = word }
                previousWordWasAS = lowered == "as"
            case .space, .comment:
                break
            case .other, .positionalParameter:
                previousWordWasAS = false
            }
        }
        return aliases
    }
}

/// A minimal pass over SQL text that tells words, whitespace and `$n`
/// placeholders apart from what must be left alone: quoted strings and
/// identifiers, dollar-quoted strings and comments (all reported as `.other`).
package enum SQLTokens {
    package enum Token {
        case word
        case space
        case positionalParameter(Int)
        case comment
        case other
    }

    /// Calls `body` for each token with its bytes, in order; the bytes of
    /// all tokens together are the whole input.
    package static func scan(_ sql: String, _ body: (Token, ArraySlice<UInt8>) -> Void) {
        let bytes = Array(sql.utf8)
        var index = 0

        func skip(until terminator: [UInt8], from start: Int) -> Int {
            var position = start
            while position < bytes.count {
                if bytes[position...].starts(with: terminator) { return position + terminator.count }
                position += 1
            }
            return position
        }

        while index < bytes.count {
            let byte = bytes[index]
            let start = index
            var token = Token.other
            switch byte {
            case UInt8(ascii: "'"), UInt8(ascii: "\""):
                // Backslashes escape only in `E'...'` strings: in a standard
                // string (`'\'`) a backslash is itself.
                let escapes =
                    byte == UInt8(ascii: "'") && index >= 1 && bytes[index - 1] | 0x20 == UInt8(ascii: "e")
                    && (index == 1 || !isWordByte(bytes[index - 2]))
                index = skipQuoted(bytes, from: index + 1, quote: byte, backslashEscapes: escapes)
            case UInt8(ascii: "-") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "-"):
                // Up to the end of the line, which PostgreSQL's scanner
                // ends at a line feed or a carriage return alone
                // (`newline [\n\r]` in scan.l): a statement after a lone
                // `\r` is code, and must not pass for a comment here.
                token = .comment
                index += 2
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n"), bytes[index] != UInt8(ascii: "\r") { index += 1 }
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
                token = .comment
                index = skipBlockComment(bytes, from: index + 2)
            case UInt8(ascii: "$"):
                var end = index + 1
                if end < bytes.count, isDigit(bytes[end]) {
                    var number = 0
                    while end < bytes.count, isDigit(bytes[end]) {
                        number = number * 10 + Int(bytes[end] - UInt8(ascii: "0"))
                        end += 1
                    }
                    token = .positionalParameter(number)
                    index = end
                } else {
                    while end < bytes.count, isWordByte(bytes[end]) { end += 1 }
                    if end < bytes.count, bytes[end] == UInt8(ascii: "$") {
                        index = skip(until: Array(bytes[index...end]), from: end + 1)
                    } else {
                        index += 1
                    }
                }
            case _ where isWordStart(byte):
                var end = index + 1
                while end < bytes.count, isWordByte(bytes[end]) || bytes[end] == UInt8(ascii: "$") { end += 1 }
                token = .word
                index = end
            case _ where isSpace(byte):
                token = .space
                index += 1
            default:
                index += 1
            }
            body(token, bytes[start..<index])
        }
    }

    // MARK: - Bytes

    private static func skipQuoted(_ bytes: [UInt8], from start: Int, quote: UInt8, backslashEscapes: Bool) -> Int {
        var position = start
        while position < bytes.count {
            if bytes[position] == quote {
                if position + 1 < bytes.count, bytes[position + 1] == quote {
                    position += 2
                    continue
                }
                return position + 1
            }
            if backslashEscapes, bytes[position] == UInt8(ascii: "\\") {
                position += 2
                continue
            }
            position += 1
        }
        return position
    }

    private static func skipBlockComment(_ bytes: [UInt8], from start: Int) -> Int {
        var depth = 1
        var position = start
        while position < bytes.count, depth > 0 {
            if bytes[position] == UInt8(ascii: "/"), position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "*") {
                depth += 1
                position += 2
            } else if bytes[position] == UInt8(ascii: "*"), position + 1 < bytes.count,
                bytes[position + 1] == UInt8(ascii: "/")
            {
                depth -= 1
                position += 2
            } else {
                position += 1
            }
        }
        return position
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func isWordStart(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || byte == UInt8(ascii: "_") || byte >= 0x80
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        isWordStart(byte) || isDigit(byte)
    }
}
