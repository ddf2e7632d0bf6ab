/// SQL text read as PostgreSQL's lexer reads it, for tools that take SQL
/// files apart: the statements between top-level semicolons, and the line
/// comments. Semicolons and `--` inside quoted strings and identifiers,
/// dollar-quoted strings and block comments are left alone.
///
/// ```swift
/// SQLScript.statements(in: "INSERT INTO t VALUES (';'); -- done\nSELECT 1;").map(\.text)
/// // ["INSERT INTO t VALUES (';')", "-- done\nSELECT 1"]
/// ```
public enum SQLScript {
    /// A piece of the text and where it starts.
    public struct Piece: Sendable, Hashable {
        /// The piece's text.
        public var text: String
        /// Where it starts in the whole text, in UTF-8 bytes.
        public var utf8Offset: Int
    }

    /// The statements of `sql`: the text between top-level semicolons
    /// (without them), leaving out pieces that hold only blanks and
    /// comments. Each statement keeps its leading blanks and comments, so
    /// that its lines are the text's lines.
    ///
    /// ```swift
    /// SQLScript.statements(in: "SELECT 1; SELECT ';'").map(\.text)   // ["SELECT 1", " SELECT ';'"]
    /// ```
    public static func statements(in sql: String) -> [Piece] {
        var statements: [Piece] = []
        let bytes = Array(sql.utf8)
        var start = 0
        var hasCode = false
        func end(at index: Int) {
            if hasCode {
                statements.append(Piece(text: String(decoding: bytes[start..<index], as: UTF8.self), utf8Offset: start))
            }
            start = index + 1
            hasCode = false
        }
        SQLTokens.scan(sql) { token, text in
            switch token {
            case .space, .comment:
                break
            case .other where text.count == 1 && text.first == UInt8(ascii: ";"):
                end(at: text.startIndex)
            default:
                hasCode = true
            }
        }
        end(at: bytes.count)
        return statements
    }

    /// Calls `body` with the number and UTF-8 offset of each `$n`
    /// placeholder of `sql` outside strings, identifiers and comments.
    ///
    /// ```swift
    /// SQLScript.placeholders(in: "SELECT '$1', $2") { number, offset in print(number, offset) }   // 2 13
    /// ```
    public static func placeholders(in sql: String, _ body: (Int, Int) -> Void) {
        SQLTokens.scan(sql) { token, text in
            if case .positionalParameter(let number) = token { body(number, text.startIndex) }
        }
    }

    /// The `--` comments of `sql` outside strings, identifiers and block
    /// comments, each from its `--` to the end of its line (without the line break).
    ///
    /// ```swift
    /// SQLScript.lineComments(in: "SELECT '--' -- a note\n").map(\.text)   // ["-- a note"]
    /// ```
    public static func lineComments(in sql: String) -> [Piece] {
        var comments: [Piece] = []
        SQLTokens.scan(sql) { token, text in
            guard case .comment = token, text.starts(with: [UInt8(ascii: "-"), UInt8(ascii: "-")]) else { return }
            var line = text
            while let last = line.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { line.removeLast() }
            comments.append(Piece(text: String(decoding: line, as: UTF8.self), utf8Offset: text.startIndex))
        }
        return comments
    }
}

extension SQLTokens {
    /// Whether `sql` has a word that writes or locks rows (`INSERT`,
    /// `UPDATE`, `DELETE`, `MERGE`; `FOR UPDATE` and `FOR SHARE`) outside
    /// strings, quoted identifiers and comments.
    static func hasWritingWord(_ sql: String) -> Bool {
        var found = false
        var previousWasFor = false
        scan(sql) { token, text in
            switch token {
            case .word:
                let word = String(decoding: text, as: UTF8.self).lowercased()
                if ["insert", "update", "delete", "merge"].contains(word) || (previousWasFor && word == "share") { found = true }
                previousWasFor = word == "for"
            case .space, .comment:
                break
            default:
                previousWasFor = false
            }
        }
        return found
    }
}
