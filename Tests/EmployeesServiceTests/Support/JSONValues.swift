import Foundation

/// Helpers to compare JSON from the API with rows from the database.
enum JSONValues {
    /// A JSON scalar as the text PostgreSQL would print for it (`10004`, `Ilse`).
    static func text(_ value: Any?) -> String? {
        switch value {
        case let string as String: string
        case let number as NSNumber: number.stringValue
        default: nil
        }
    }

    /// The members `keys` of every object, as texts.
    static func table(_ objects: [[String: Any]], _ keys: [String]) -> [[String?]] {
        objects.map { object in keys.map { text(object[$0]) } }
    }

    /// The keys of a JSON object in the order they appear in `json` (a
    /// flat object, as the services write them).
    static func keyOrder(ofObject json: String) -> [String] {
        var keys: [String] = []
        let pattern = /[{,]"([A-Za-z]+)":/
        var depth = 0
        var index = json.startIndex
        while index < json.endIndex {
            let character = json[index]
            if character == "[" { depth += 1 }
            if character == "]" { depth -= 1 }
            if depth == 0, character == "{" || character == ",",
               let match = json[index...].prefixMatch(of: pattern) {
                keys.append(String(match.1))
            }
            index = json.index(after: index)
        }
        return keys
    }

    struct NotAnArray: Error, CustomStringConvertible {
        var description: String
    }

    /// Calls `body` with each element of the JSON array `json`, parsed on
    /// its own: a huge array is checked without holding all its objects at
    /// once. Throws if the text is not one well-formed array.
    static func forEachElement(ofArray json: [UInt8], _ body: (Any) throws -> Void) throws {
        var index = 0
        func skipSpace() {
            while index < json.count, [0x20, 0x0A, 0x0D, 0x09].contains(json[index]) { index += 1 }
        }
        skipSpace()
        guard index < json.count, json[index] == UInt8(ascii: "[") else { throw NotAnArray(description: "no opening [") }
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
                guard index < json.count else { throw NotAnArray(description: "unterminated array") }
                let element = try JSONSerialization.jsonObject(with: Data(json[start..<index]), options: [.fragmentsAllowed])
                try body(element)
                let separator = json[index]
                index += 1
                if separator == UInt8(ascii: "]") { break }
                guard separator == UInt8(ascii: ",") else { throw NotAnArray(description: "unexpected byte \(separator)") }
            }
        }
        skipSpace()
        guard index == json.count else { throw NotAnArray(description: "text after the array") }
    }
}
