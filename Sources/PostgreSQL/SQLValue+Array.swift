// MARK: - Arrays

extension Array: SQLValueConvertible where Element: SQLValueConvertible {
    /// A PostgreSQL array literal, for `= ANY(:ids)` and array columns.
    /// Every element is double-quoted (with `"` and `\` escaped), so text
    /// elements with commas, braces, quotes or the word NULL stay intact;
    /// `nil` elements are `NULL`; nested arrays are sub-arrays.
    ///
    /// ```swift
    /// [1, 2, 3].sqlValue              // .text(#"{"1","2","3"}"#)
    /// ["a,b", nil].sqlValue           // .text(#"{"a,b",NULL}"#)
    /// [[1, 2], [3, 4]].sqlValue       // .text(#"{{"1","2"},{"3","4"}}"#)
    /// ```
    public var sqlValue: SQLValue {
        var literal = ""
        appendArrayLiteral(to: &literal)
        return .text(literal)
    }
}

/// Arrays, whose literals nest unquoted inside an enclosing array literal.
protocol PostgresArrayLiteralConvertible {
    func appendArrayLiteral(to literal: inout String)
}

extension Array: PostgresArrayLiteralConvertible where Element: SQLValueConvertible {
    func appendArrayLiteral(to literal: inout String) {
        literal.append("{")
        for (index, element) in enumerated() {
            if index > 0 { literal.append(",") }
            if let nested = element as? any PostgresArrayLiteralConvertible {
                nested.appendArrayLiteral(to: &literal)
                continue
            }
            switch element.sqlValue {
            case .null:
                literal.append("NULL")
            case .text(let text):
                literal.append("\"")
                for character in text.unicodeScalars {
                    if character == "\"" || character == "\\" { literal.append("\\") }
                    literal.unicodeScalars.append(character)
                }
                literal.append("\"")
            }
        }
        literal.append("}")
    }
}
