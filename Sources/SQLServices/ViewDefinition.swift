/// A view's stored query (`pg_rewrite.ev_action`, PostgreSQL's node
/// text), read for one thing: where each column of the view comes from.
/// Each entry of the top query's target list says it, as the parser
/// marked it (`:resorigtbl` and `:resorigcol`, zero for an expression):
///
/// ```
/// ({QUERY … :targetList ({TARGETENTRY :expr {VAR …} :resno 1 :resname id … :resorigtbl 16385 :resorigcol 1 :resjunk false} …) …})
/// ```
///
/// Entries of nested queries (subqueries, `WITH`, sublinks) lie deeper in
/// braces and are skipped; so are a `UNION`'s, whose top entries have no
/// origin. Strings in the text escape their braces, parentheses and
/// spaces with `\`, and double-quoted ones are skipped whole.
enum ViewDefinition {
    /// A column of the view: its number, and the relation and column it shows.
    struct TargetEntry: Equatable {
        var number: Int
        var table: UInt32
        var column: Int
    }

    /// The view's columns whose origin the stored query `text` records.
    static func targetEntries(of text: String) -> [TargetEntry] {
        let bytes = Array(text.utf8)
        var entries: [TargetEntry] = []
        var depth = 0
        var index = 0
        var inTargetList = false
        // The words of the entry being read, at its own depth only.
        var words: [String]?
        var word: [UInt8] = []
        func endWord() {
            if !word.isEmpty, words != nil { words!.append(String(decoding: word, as: UTF8.self)) }
            word.removeAll(keepingCapacity: true)
        }
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\\"):
                if index < bytes.count, depth == 2 { word.append(bytes[index]) }
                index += 1
            case UInt8(ascii: "\""):
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                index += 1
            case UInt8(ascii: "{"):
                endWord()
                depth += 1
                if depth == 2, inTargetList { words = [] }
            case UInt8(ascii: "}"):
                endWord()
                if depth == 2, let entryWords = words {
                    if let entry = entry(entryWords) { entries.append(entry) }
                    words = nil
                }
                depth -= 1
                if depth <= 0 { return entries }
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "("), UInt8(ascii: ")"):
                endWord()
            default:
                if depth == 1 {
                    // A key of the top query: the target list starts at its own, ends at the next.
                    if byte == UInt8(ascii: ":") {
                        var end = index
                        while end < bytes.count, bytes[end] != UInt8(ascii: " ") { end += 1 }
                        inTargetList = bytes[index..<end].elementsEqual("targetList".utf8)
                        index = end
                    }
                } else if depth == 2, words != nil {
                    word.append(byte)
                }
            }
        }
        return entries
    }

    /// The entry of `words` (`TARGETENTRY :expr :resno 1 :resname id …`),
    /// unless it is junk: each key's value is the first word after it that
    /// reads as one (a column may be named `:resno`, but not a number).
    private static func entry(_ words: [String]) -> TargetEntry? {
        guard words.first == "TARGETENTRY" else { return nil }
        func value(_ key: String) -> String? {
            for index in words.indices.dropLast() where words[index] == key {
                let next = words[index + 1]
                if Int(next) != nil || next == "true" || next == "false" { return next }
            }
            return nil
        }
        guard value(":resjunk") == "false", let number = value(":resno").flatMap({ Int($0) }),
            let table = value(":resorigtbl").flatMap({ UInt32($0) }), let column = value(":resorigcol").flatMap({ Int($0) })
        else { return nil }
        return TargetEntry(number: number, table: table, column: column)
    }
}
