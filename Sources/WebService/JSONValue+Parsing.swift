extension JSONValue {
    /// The deepest nesting of arrays and objects a request body may have.
    static let maximumDepth = 512

    /// Why a document is not acceptable JSON.
    package struct ParseError: Error, Sendable, CustomStringConvertible {
        var reason: String
        var offset: Int

        package var description: String { "\(reason) at byte \(offset)" }
    }

    /// Parses a JSON document strictly (RFC 8259): one value with optional
    /// whitespace around it, no trailing commas, comments, `NaN` or leading
    /// zeros, valid UTF-8, escapes that form whole characters, no
    /// duplicate object member, nesting at most ``maximumDepth`` deep.
    /// A NUL character (`\u0000`) is refused too, as in query strings and
    /// forms: C-based code (libpq, `strtod`) would cut the string there.
    /// An integer that does not fit `Int64` becomes a `.number`; a number
    /// too large for a `Double` is an error.
    ///
    /// ```swift
    /// try JSONValue.parse(Array(#"{"values":[1,2.5]}"#.utf8))   // .object(["values": .array([.integer(1), .number(2.5)])])
    /// try JSONValue.parse(Array("[1,]".utf8))                    // throws
    /// ```
    package static func parse(_ bytes: [UInt8]) throws(ParseError) -> JSONValue {
        var parser = Parser(bytes: bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.index = 3 }
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.error("unexpected data after the document") }
        return value
    }

    /// The elements of a document that is an array, parsed one at a time
    /// as they are asked for, each as strictly as ``parse(_:)`` parses a
    /// document (an element is nested one level deep): reading them costs
    /// the memory of one element, never of the whole array.
    ///
    /// ```swift
    /// var elements = JSONValue.ArrayElements(Array("[1, {\"a\": 2}]".utf8))
    /// try elements?.next()   // .integer(1)
    /// try elements?.next()   // .object(["a": 2])
    /// try elements?.next()   // nil: the end, after checking that nothing follows the array
    /// ```
    package struct ArrayElements: Sendable {
        private var parser: Parser
        private var isFirst = true
        private var isFinished = false
        private var failure: ParseError?

        /// The elements of `bytes`; `nil` when the document does not begin
        /// with `[` (after a byte-order mark and whitespace).
        package init?(_ bytes: [UInt8]) {
            parser = Parser(bytes: bytes)
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.index = 3 }
            parser.skipWhitespace()
            guard parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: "[") else { return nil }
            parser.index += 1
        }

        /// The next element; `nil` after the last. Throws where the
        /// document stops being acceptable JSON, and again on every later call.
        package mutating func next() throws(ParseError) -> JSONValue? {
            if let failure { throw failure }
            do {
                return try read()
            } catch {
                failure = error
                throw error
            }
        }

        private mutating func read() throws(ParseError) -> JSONValue? {
            guard !isFinished else { return nil }
            if isFirst {
                isFirst = false
                parser.skipWhitespace()
                if parser.index < parser.bytes.count, parser.bytes[parser.index] == UInt8(ascii: "]") {
                    parser.index += 1
                    try finish()
                    return nil
                }
            }
            let element = try parser.value(depth: 1)
            parser.skipWhitespace()
            guard parser.index < parser.bytes.count else { throw parser.error("unterminated array") }
            let byte = parser.bytes[parser.index]
            parser.index += 1
            if byte == UInt8(ascii: "]") {
                try finish()
            } else if byte != UInt8(ascii: ",") {
                parser.index -= 1
                throw parser.error("expected \",\" or \"]\"")
            }
            return element
        }

        private mutating func finish() throws(ParseError) {
            parser.skipWhitespace()
            guard parser.index == parser.bytes.count else { throw parser.error("unexpected data after the document") }
            isFinished = true
        }
    }

    /// A recursive descent over the bytes; the recursion is bounded by
    /// ``maximumDepth``, and every byte is looked at a bounded number of times.
    fileprivate struct Parser: Sendable {
        let bytes: [UInt8]
        var index = 0

        func error(_ reason: String) -> ParseError {
            ParseError(reason: reason, offset: index)
        }

        mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func expect(_ literal: String, _ value: JSONValue) throws(ParseError) -> JSONValue {
            let utf8 = Array(literal.utf8)
            guard bytes[index...].starts(with: utf8) else { throw error("invalid literal") }
            index += utf8.count
            return value
        }

        mutating func value(depth: Int) throws(ParseError) -> JSONValue {
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of the document") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object(depth: depth + 1)
            case UInt8(ascii: "["): return try array(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): return try expect("true", .bool(true))
            case UInt8(ascii: "f"): return try expect("false", .bool(false))
            case UInt8(ascii: "n"): return try expect("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            default: throw error("unexpected character")
            }
        }

        // MARK: - Containers

        mutating func array(depth: Int) throws(ParseError) -> JSONValue {
            guard depth <= JSONValue.maximumDepth else { throw error("nested more than \(JSONValue.maximumDepth) deep") }
            index += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                elements.append(try value(depth: depth))
                skipWhitespace()
                guard index < bytes.count else { throw error("unterminated array") }
                let byte = bytes[index]
                index += 1
                if byte == UInt8(ascii: "]") { return .array(elements) }
                guard byte == UInt8(ascii: ",") else { throw error("expected \",\" or \"]\"") }
            }
        }

        mutating func object(depth: Int) throws(ParseError) -> JSONValue {
            guard depth <= JSONValue.maximumDepth else { throw error("nested more than \(JSONValue.maximumDepth) deep") }
            index += 1
            var members = Members()
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name") }
                let name = try string()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected \":\"") }
                index += 1
                let member = try value(depth: depth)
                guard members.add(name, member) else { throw error("duplicate member \"\(name)\"") }
                skipWhitespace()
                guard index < bytes.count else { throw error("unterminated object") }
                let byte = bytes[index]
                index += 1
                if byte == UInt8(ascii: "}") { return .object(members) }
                guard byte == UInt8(ascii: ",") else { throw error("expected \",\" or \"}\"") }
            }
        }

        // MARK: - Scalars

        mutating func number() throws(ParseError) -> JSONValue {
            let start = index
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            let integerStart = index
            skipDigits()
            guard index > integerStart else { throw error("expected a digit") }
            guard bytes[integerStart] != UInt8(ascii: "0") || index - integerStart == 1 else { throw error("leading zero") }
            var isInteger = true
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                isInteger = false
                index += 1
                let fractionStart = index
                skipDigits()
                guard index > fractionStart else { throw error("expected a digit after \".\"") }
            }
            if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
                isInteger = false
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                let exponentStart = index
                skipDigits()
                guard index > exponentStart else { throw error("expected a digit in the exponent") }
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            if isInteger, let integer = Int64(text) { return .integer(integer) }
            guard let number = Double(text), number.isFinite else {
                index = start
                throw error("number out of range")
            }
            return .number(number)
        }

        mutating func skipDigits() {
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        }

        mutating func string() throws(ParseError) -> String {
            index += 1
            var decoded: [UInt8] = []
            while true {
                guard index < bytes.count else { throw error("unterminated string") }
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    guard let text = String(validating: decoded, as: UTF8.self) else { throw error("invalid UTF-8 in a string") }
                    return text
                case UInt8(ascii: "\\"):
                    index += 1
                    try escape(into: &decoded)
                case 0..<0x20:
                    throw error("unescaped control character in a string")
                default:
                    decoded.append(byte)
                    index += 1
                }
            }
        }

        mutating func escape(into decoded: inout [UInt8]) throws(ParseError) {
            guard index < bytes.count else { throw error("unterminated escape") }
            let byte = bytes[index]
            index += 1
            let simple: UInt8? =
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): byte
                case UInt8(ascii: "b"): 0x08
                case UInt8(ascii: "f"): 0x0C
                case UInt8(ascii: "n"): 0x0A
                case UInt8(ascii: "r"): 0x0D
                case UInt8(ascii: "t"): 0x09
                default: nil
                }
            if let simple {
                decoded.append(simple)
                return
            }
            guard byte == UInt8(ascii: "u") else { throw error("invalid escape") }
            var scalar = try hexQuad()
            guard scalar != 0 else { throw error("a NUL character (\\u0000), which no argument may hold,") }
            if (0xD800..<0xDC00).contains(scalar) {
                guard bytes[index...].starts(with: [UInt8(ascii: "\\"), UInt8(ascii: "u")]) else { throw error("lone surrogate") }
                index += 2
                let low = try hexQuad()
                guard (0xDC00..<0xE000).contains(low) else { throw error("lone surrogate") }
                scalar = 0x10000 + (scalar - 0xD800) << 10 + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw error("lone surrogate")
            }
            // Every scalar here is one: below the surrogates, above them,
            // or a pair's, which is at most 0x10FFFF.
            guard let character = Unicode.Scalar(scalar) else { throw error("invalid \\u escape") }
            decoded.append(contentsOf: String(Character(character)).utf8)
        }

        mutating func hexQuad() throws(ParseError) -> UInt32 {
            guard index + 4 <= bytes.count else { throw error("short \\u escape") }
            var value: UInt32 = 0
            for byte in bytes[index..<(index + 4)] {
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw error("invalid \\u escape")
                }
                value = value << 4 | UInt32(digit)
            }
            index += 4
            return value
        }
    }
}
