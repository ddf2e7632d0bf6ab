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
}
