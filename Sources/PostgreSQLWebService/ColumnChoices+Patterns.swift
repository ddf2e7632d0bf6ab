import WebService

// MARK: - The documented form of a filter

extension ColumnChoices {
    /// The regular expression of a column's filter argument, for the
    /// `pattern` of its documentation: every operator, with the values the
    /// column's type reads (`eq.` and the others that compare, each item of
    /// `in.(…)`), any text after `like.` and `ilike.` (which compare the
    /// column as text), `is.null`, and `is.true`, `is.false` and
    /// `is.unknown` on a boolean.
    ///
    /// Integers (within the column's range), booleans, UUIDs, enumerations
    /// and texts (without NUL, which no query argument may hold) are stated
    /// exactly as their conversion reads them; calendar
    /// days but February 29th, and numbers by their form; other types
    /// (timestamps, for one) as any text, whose fields the server checks.
    ///
    /// ```swift
    /// ColumnChoices.filterPattern(for: .init("employeeNumber", as: Int.self))
    /// ```
    public static func filterPattern(for column: Column) -> String {
        let value = valuePattern(column.type, constraints: column.constraints)
        let item = column.type == .string ? quotedListItem : "(?:\(value)|\"\(value)\")"
        let truths = column.type == .boolean ? "null|true|false|unknown" : "null"
        return
            "^(?:not\\.)?(?:(?:eq|neq|gt|gte|lt|lte)\\.\(value)|i?like\\.\(anyText)|in\\.\\((?:\(item)(?:,\(item))*)?\\)|is\\.(?:\(truths)))$"
    }

    /// An item of `in.(…)` for a text column, as ``ColumnFilter/listItems(_:)``
    /// reads it: unquoted up to the next comma, or double-quoted (commas
    /// inside, `\` escaping the next character) and then unquoted.
    private static let quotedListItem = #"(?:[^,"\x00][^,\x00]*|"(?:[^"\\\x00]|\\[^\x00])*"[^,\x00]*|)"#

    /// Any text without a NUL, which no query argument may hold.
    private static let anyText = #"[^\x00]*"#

    /// The texts of one value of `type`.
    static func valuePattern(_ type: ValueType, constraints: ArgumentConstraints) -> String {
        switch type {
        case .integer, .long:
            return ArgumentConstraints.integerPattern((constraints.minimum ?? Int.min)...(constraints.maximum ?? Int.max))
        case .boolean:
            return "(?:true|false|1|0)"
        case .uuid:
            let hex = "[0-9a-fA-F]"
            return "\(hex){8}-\(hex){4}-\(hex){4}-\(hex){4}-\(hex){12}"
        case .enumeration(_, let values):
            return "(?:" + values.map(patternEscaped).joined(separator: "|") + ")"
        case .date:
            // Year 0001 to 9999; February 29th left out, as not every year has it.
            let year = "(?:[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])"
            let day = "(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)"
            return year + "-" + day
        case .double:
            // Two exponent digits at most: a larger exponent may overflow the column's type.
            return #"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,2})?"#
        default:
            return anyText
        }
    }
}
