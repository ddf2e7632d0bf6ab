/// SQL written with named parameters (`:name`), turned into the positional
/// placeholders libpq expects (`$1`, `$2`, ...).
///
/// ```swift
/// let query = Parameters.parse("SELECT * FROM employees WHERE emp_no = :employeeNumber OR manager = :employeeNumber")
/// query.sql    // "SELECT * FROM employees WHERE emp_no = $1 OR manager = $1"
/// query.names  // ["employeeNumber"]
/// ```
///
/// The scanner follows PostgreSQL's lexer, so these are left untouched:
/// `::` casts, single-quoted strings (`''` and, in `E'...'` strings,
/// backslash escapes), double-quoted identifiers (`"a:b"`), dollar-quoted
/// strings (`$$...$$`, `$tag$...$tag$`; `$1` stays a positional parameter),
/// `--` line comments and nested `/* /* */ */` comments.
///
/// A name starts with a letter, an underscore or a non-ASCII character and
/// continues with those or digits, as PostgreSQL identifiers do (without `$`).
///
/// Inside square brackets a colon that follows an operand is an array slice
/// separator, not a parameter: `a[lo:hi]`, `a[1:n]`, `a[f(x) :hi]` keep their
/// colon, while `a[:i]`, `a[1 : :hi]` and `ARRAY[:x, :y]` take parameters.
/// (For a slice with an omitted lower bound and a column as upper bound,
/// write `a[: hi]`; a colon followed by a space is never a parameter.)
/// Outside brackets `:name` is always a parameter; when it directly follows
/// an identifier or number (`LIMIT:n`) a space is inserted so that the
/// placeholder stays a token of its own (`LIMIT $1`).
public struct Parameters: Sendable, Hashable {
    /// The SQL text for libpq, with `$1`, `$2`, ... in place of the names.
    public let sql: String
    /// The distinct parameter names in order of first appearance:
    /// `names[i]` is bound to `$(i + 1)`. A repeated name reuses its placeholder.
    public let names: [String]

    /// Parses SQL with named parameters. Never fails: text that is not a
    /// parameter is copied as it is, and PostgreSQL reports any syntax error.
    ///
    /// ```swift
    /// Parameters.parse("SELECT :a::int, ':b', \"c:d\"").sql   // "SELECT $1::int, ':b', \"c:d\""
    /// ```
    public static func parse(_ sql: String) -> Parameters {
        var scanner = ParameterScanner(input: Array(sql.utf8))
        scanner.scan()
        return Parameters(sql: String(decoding: scanner.output, as: UTF8.self), names: scanner.names)
    }
}

// MARK: - Scanner

/// A single pass over the UTF-8 bytes of the SQL text. Every delimiter the
/// scanner looks for is ASCII, so multi-byte characters are copied whole.
private struct ParameterScanner {
    let input: [UInt8]
    var position = 0
    var output: [UInt8] = []
    var names: [String] = []
    var numberByName: [String: Int] = [:]
    var bracketDepth = 0
    /// Whether the last token (ignoring whitespace and comments) ends an
    /// operand: decides whether a colon inside brackets is a slice separator.
    var followsOperand = false

    package init(input: [UInt8]) {
        self.input = input
        output.reserveCapacity(input.count + 8)
    }

    package mutating func scan() {
        while position < input.count {
            let byte = input[position]
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), 0x0B, 0x0C:
                copy(1)
            case UInt8(ascii: "'"):
                copyQuoted(by: byte, backslashEscapes: false)
            case UInt8(ascii: "\""):
                copyQuoted(by: byte, backslashEscapes: false)
            case UInt8(ascii: "-") where peek(1) == UInt8(ascii: "-"):
                copyLineComment()
            case UInt8(ascii: "/") where peek(1) == UInt8(ascii: "*"):
                copyBlockComment()
            case UInt8(ascii: "$"):
                scanDollar()
            case UInt8(ascii: ":"):
                scanColon()
            case UInt8(ascii: "["):
                bracketDepth += 1
                copy(1)
                followsOperand = false
            case UInt8(ascii: "]"):
                bracketDepth = max(0, bracketDepth - 1)
                copy(1)
                followsOperand = true
            case UInt8(ascii: ")"):
                copy(1)
                followsOperand = true
            default:
                if Self.isWordByte(byte) {
                    scanWord()
                } else {
                    copy(1)
                    followsOperand = false
                }
            }
        }
    }

    // MARK: - Tokens

    /// An identifier, keyword or number (`emp_no`, `foo$bar`, `12`, `E`).
    /// `E'...'` starts a string with backslash escapes.
    mutating func scanWord() {
        let start = position
        while position < input.count, Self.isWordByte(input[position]) {
            position += 1
        }
        output.append(contentsOf: input[start..<position])
        followsOperand = true
        if position - start == 1, input[start] | 0x20 == UInt8(ascii: "e"), peek(0) == UInt8(ascii: "'") {
            copyQuoted(by: UInt8(ascii: "'"), backslashEscapes: true)
        }
    }

    /// A quoted string or identifier; a doubled quote is part of the text.
    mutating func copyQuoted(by quote: UInt8, backslashEscapes: Bool) {
        copy(1)
        while position < input.count {
            let byte = input[position]
            if backslashEscapes && byte == UInt8(ascii: "\\") {
                copy(min(2, input.count - position))
            } else if byte == quote {
                if peek(1) == quote {
                    copy(2)
                } else {
                    copy(1)
                    break
                }
            } else {
                copy(1)
            }
        }
        followsOperand = true
    }

    mutating func copyLineComment() {
        while position < input.count, input[position] != UInt8(ascii: "\n"), input[position] != UInt8(ascii: "\r") {
            copy(1)
        }
    }

    /// `/* ... */`, nested as PostgreSQL nests them.
    mutating func copyBlockComment() {
        var depth = 0
        while position < input.count {
            if input[position] == UInt8(ascii: "/"), peek(1) == UInt8(ascii: "*") {
                depth += 1
                copy(2)
            } else if input[position] == UInt8(ascii: "*"), peek(1) == UInt8(ascii: "/") {
                depth -= 1
                copy(2)
                if depth == 0 { return }
            } else {
                copy(1)
            }
        }
    }

    /// `$1` (a positional parameter), `$$...$$` or `$tag$...$tag$`
    /// (dollar-quoted strings), or a lone `$`.
    mutating func scanDollar() {
        followsOperand = true
        guard let next = peek(1) else {
            copy(1)
            return
        }
        if Self.isDigit(next) {
            copy(1)
            while let byte = peek(0), Self.isDigit(byte) { copy(1) }
            return
        }
        var tagEnd = position + 1
        if Self.isNameStart(next) {
            while tagEnd < input.count, Self.isNameByte(input[tagEnd]) { tagEnd += 1 }
        }
        guard tagEnd < input.count, input[tagEnd] == UInt8(ascii: "$") else {
            copy(1)
            return
        }
        let delimiter = input[position...tagEnd]
        copy(delimiter.count)
        while position < input.count {
            if input[position] == UInt8(ascii: "$"), input[position...].starts(with: delimiter) {
                copy(delimiter.count)
                return
            }
            copy(1)
        }
    }

    /// `::` (a cast), `:name` (a parameter), or a colon of another kind.
    mutating func scanColon() {
        if peek(1) == UInt8(ascii: ":") {
            copy(2)
            followsOperand = false
            return
        }
        guard let next = peek(1), Self.isNameStart(next), !(bracketDepth > 0 && followsOperand) else {
            copy(1)
            followsOperand = false
            return
        }
        let start = position + 1
        var end = start
        while end < input.count, Self.isNameByte(input[end]) { end += 1 }
        let name = String(decoding: input[start..<end], as: UTF8.self)
        let number: Int
        if let existing = numberByName[name] {
            number = existing
        } else {
            names.append(name)
            number = names.count
            numberByName[name] = number
        }
        if let last = output.last, Self.isWordByte(last) {
            output.append(UInt8(ascii: " "))
        }
        output.append(UInt8(ascii: "$"))
        output.append(contentsOf: String(number).utf8)
        position = end
        followsOperand = true
    }

    // MARK: - Bytes

    mutating func copy(_ count: Int) {
        output.append(contentsOf: input[position..<(position + count)])
        position += count
    }

    func peek(_ offset: Int) -> UInt8? {
        position + offset < input.count ? input[position + offset] : nil
    }

    package static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// A letter, underscore or byte of a non-ASCII character.
    static func isNameStart(_ byte: UInt8) -> Bool {
        let lower = byte | 0x20
        return (lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "z")) || byte == UInt8(ascii: "_") || byte >= 0x80
    }

    static func isNameByte(_ byte: UInt8) -> Bool {
        isNameStart(byte) || isDigit(byte)
    }

    /// Bytes of identifiers and numbers; PostgreSQL identifiers may contain `$`.
    static func isWordByte(_ byte: UInt8) -> Bool {
        isNameByte(byte) || byte == UInt8(ascii: "$")
    }
}
