import Foundation

/// The one JSON reader of the tests: Foundation's `JSONSerialization`
/// (any top-level value, numbers as `NSNumber`, objects as `[String: Any]`),
/// plus what it cannot tell: the order of an object's keys, and an array
/// read element by element.
///
/// ```swift
/// let employee = JSONReader.object(reply.body)
/// #expect(JSONReader.keyOrder(ofObject: reply.text) == ["employeeNumber", "firstName"])
/// ```
public enum JSONReader {
    /// The text is not what the reader was asked to read.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The JSON value of `bytes` (any top-level value: object, array, string,
    /// number, `true`, `false`, `null` as `NSNull`); throws if they are not
    /// exactly one JSON value.
    ///
    /// ```swift
    /// let numbers = try JSONReader.value(reply.body) as? [Int]
    /// ```
    public static func value(_ bytes: some Sequence<UInt8>) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
    }

    /// The JSON object of `bytes`; empty when they are not one.
    public static func object(_ bytes: some Sequence<UInt8>) -> [String: Any] {
        ((try? value(bytes)) as? [String: Any]) ?? [:]
    }

    /// The JSON array of objects of `bytes`; empty when they are not one.
    public static func objects(_ bytes: some Sequence<UInt8>) -> [[String: Any]] {
        ((try? value(bytes)) as? [[String: Any]]) ?? []
    }

    /// A JSON scalar as the text PostgreSQL would print for it (`10004`,
    /// `Ilse`); `nil` for anything else.
    public static func text(_ value: Any?) -> String? {
        switch value {
        case let string as String: string
        case let number as NSNumber: number.stringValue
        default: nil
        }
    }

    /// The members `keys` of every object, as texts (see `text`): a table to
    /// compare with rows from the database.
    public static func table(_ objects: [[String: Any]], _ keys: [String]) -> [[String?]] {
        objects.map { object in keys.map { text(object[$0]) } }
    }

    /// The keys (letters only) of the JSON object `json` in the order they
    /// appear, for an object whose values are scalars or arrays, as the
    /// services write them: keys inside arrays are not counted, keys of a
    /// nested object outside an array would be.
    public static func keyOrder(ofObject json: String) -> [String] {
        var keys: [String] = []
        let pattern = /[{,]"([A-Za-z]+)":/
        var depth = 0
        var index = json.startIndex
        while index < json.endIndex {
            let character = json[index]
            if character == "[" { depth += 1 }
            if character == "]" { depth -= 1 }
            if depth == 0, character == "{" || character == ",",
                let match = json[index...].prefixMatch(of: pattern)
            {
                keys.append(String(match.1))
            }
            index = json.index(after: index)
        }
        return keys
    }

    /// Calls `body` with each element of the JSON array `json`, each parsed
    /// on its own with `value`: a huge array is checked without holding all
    /// its elements at once. Throws if the text is not one well-formed array
    /// (cut short, not an array, text after it, a malformed element).
    public static func forEachElement(ofArray json: [UInt8], _ body: (Any) throws -> Void) throws {
        var index = 0
        func skipSpace() {
            while index < json.count, [0x20, 0x0A, 0x0D, 0x09].contains(json[index]) { index += 1 }
        }
        skipSpace()
        guard index < json.count, json[index] == UInt8(ascii: "[") else { throw Failure(description: "no opening [") }
        index += 1
        skipSpace()
        if index < json.count, json[index] == UInt8(ascii: "]") {
            index += 1
        } else {
            while true {
                let start = index
                var depth = 0
                var inString = false
                while index < json.count {
                    let byte = json[index]
                    if inString {
                        if byte == UInt8(ascii: "\\") { index += 1 } else if byte == UInt8(ascii: "\"") { inString = false }
                    } else if byte == UInt8(ascii: "\"") {
                        inString = true
                    } else if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                        depth += 1
                    } else if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
                        if depth == 0 { break }
                        depth -= 1
                    } else if byte == UInt8(ascii: ","), depth == 0 {
                        break
                    }
                    index += 1
                }
                guard index < json.count else { throw Failure(description: "unterminated array") }
                try body(try value(json[start..<index]))
                let separator = json[index]
                index += 1
                if separator == UInt8(ascii: "]") { break }
                guard separator == UInt8(ascii: ",") else { throw Failure(description: "unexpected byte \(separator)") }
            }
        }
        skipSpace()
        guard index == json.count else { throw Failure(description: "text after the array") }
    }
}
