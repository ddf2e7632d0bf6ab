import PostgreSQL
import WebService

// MARK: - The documented arguments of a resource's route

extension Resource {
    /// The arguments a route reading this resource documents, which its
    /// ``ReadArguments`` (or a `RuntimeParameter.readingOtherArguments`)
    /// reads: `select`, `order` among the orderable columns, `or` and
    /// `and`, and a filter per filterable column, each with the pattern of
    /// the values the server takes for it, leaving out the names in
    /// `taken` (the route's own arguments). A filter is documented for a
    /// column whose values a pattern states exactly (numbers, texts, dates,
    /// times, booleans, UUIDs, enumerations); the others take filters all
    /// the same, as any other argument.
    ///
    /// ```swift
    /// let documented: [RuntimeParameter<Void>] = resource.documentedArguments(taken: ["limit", "offset"], value: ())
    /// ```
    public func documentedArguments<Value: Sendable>(taken: Set<String> = [], value: Value) -> [RuntimeParameter<Value>] {
        var parameters: [RuntimeParameter<Value>] = []
        let plain = columns.filter { Self.isPlainName($0.label) }
        let reserved: Set<String> = ["select", "order", "limit", "offset", "or", "and", "not"]
        for column in columns where column.isFilterable && !taken.contains(column.label) && !reserved.contains(column.label) {
            // A dot starts an embedded resource's path, an arrow a JSON path: such a name is not the column's alone.
            guard !column.label.contains("."), !column.label.contains("->") else { continue }
            guard let pattern = Self.filterPattern(for: column) else { continue }
            var parameter = RuntimeParameter<Value>.documenting(
                column.label, type: .string,
                description: "Rows whose \(column.label) (\(column.valueType.name)) passes the filter: `eq.VALUE`, `gt.VALUE`, …",
                pattern: pattern, value: value)
            parameter.filteredType = column.valueType
            parameters.append(parameter)
        }
        let orderable = plain.filter(\.isOrderable).map(\.label)
        if !orderable.isEmpty, !taken.contains("order") {
            let alternatives = orderable.map(Self.patternEscaped).joined(separator: "|")
            let item = "(\(alternatives))(\\.(asc|desc))?(\\.(nullsfirst|nullslast))?"
            parameters.append(
                .documenting(
                    "order", type: .string,
                    description: "The order of the rows, instead of the operation's own: `COLUMN[.asc|.desc][.nullsfirst|.nullslast]`, "
                        + "comma-separated, among " + orderable.joined(separator: ", ")
                        + " (`embed(COLUMN)` orders by a column of an embedded to-one resource).",
                    pattern: "^\(item)(,\(item))*$", value: value))
        }
        let logicItems = plain.filter(\.isFilterable).compactMap(Self.logicItemPattern)
        if !logicItems.isEmpty {
            let item = "(?:" + logicItems.joined(separator: "|") + ")"
            for name in ["or", "and"] where !taken.contains(name) {
                parameters.append(
                    .documenting(
                        name, type: .string,
                        description: "Rows for which \(name == "or" ? "any" : "every") condition holds: "
                            + "`(COLUMN.OPERATOR.VALUE,…)`, nesting `and(…)`, `or(…)` and `not.`.",
                        pattern: "^\\(\(item)(,\(item))*\\)$", value: value))
            }
        }
        if !taken.contains("select") {
            let labels = plain.map(\.label)
            let alternatives = labels.map(Self.patternEscaped).joined(separator: "|")
            let embeds = Array(Set(relationships.map(\.name))).sorted()
            var parameter = RuntimeParameter<Value>.documenting(
                "select", type: .string,
                description: "The members to return, comma-separated, among " + labels.joined(separator: ", ")
                    + " (`*`: all; `alias:column`, `column::type`, `column->key`)"
                    + (embeds.isEmpty ? "" : ", and the resources to embed: " + embeds.map { "`\($0)(*)`" }.joined(separator: ", ")) + ".",
                pattern: labels.isEmpty ? "^\\*?$" : "^\\*?$|^(\(alternatives))(,(\(alternatives)))*$", value: value)
            parameter.choosesMembers = true
            parameters.append(parameter)
        }
        return parameters
    }

    /// Whether `label` can be written in `select`, `order` and `or` as it
    /// is, without double quotes: the documents state those only.
    static func isPlainName(_ label: String) -> Bool {
        guard let first = label.unicodeScalars.first, !("0"..."9").contains(first), label != "or", label != "and", label != "not"
        else { return false }
        return label.unicodeScalars.allSatisfy {
            $0 == "_" || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
        }
    }

    // MARK: - Patterns

    /// The regular expression of a filter argument on `column`: every
    /// operator the pattern can state values for (`eq`, `neq`, `gt`, `gte`,
    /// `lt`, `lte`, `isdistinct` with the values its type reads, each item
    /// of `in.(…)`), any text after `like.` and `ilike.` (which compare the
    /// column as text), `is.null` and `is.not_null`, and `is.true`,
    /// `is.false` and `is.unknown` on a boolean; `nil` for a type whose
    /// values no pattern states.
    ///
    /// ```swift
    /// Resource.filterPattern(for: .init("employeeNumber", type: .int4))
    /// ```
    public static func filterPattern(for column: Column) -> String? {
        guard let value = valuePattern(of: column) else { return nil }
        let item = column.valueType == .string ? quotedListItem : "(?:\(value)|\"\(value)\")"
        let truths = column.valueType == .boolean ? "null|not_null|true|false|unknown" : "null|not_null"
        return "^(?:not\\.)?(?:(?:eq|neq|gt|gte|lt|lte|isdistinct)\\.\(value)|i?like\\.\(anyText)|in\\.\\((?:\(item)(?:,\(item))*)?\\)"
            + "|is\\.(?:\(truths)))$"
    }

    /// One condition of `or=(…)` on `column` (`lastName.eq.Facello`), whose
    /// value ends at a comma or parenthesis; `nil` when none can be stated.
    static func logicItemPattern(_ column: Column) -> String? {
        guard var value = valuePattern(of: column) else { return nil }
        if column.valueType == .string { value = #"[^,()\[\]{}"\\\x00]*"# }
        if case .enumeration(_, let values) = column.valueType,
            values.contains(where: { $0.contains(where: { ",()[]{}\"\\".contains($0) }) })
        {
            return nil
        }
        let truths = column.valueType == .boolean ? "null|not_null|true|false|unknown" : "null|not_null"
        let text = #"[^,()\[\]{}"\\\x00]*"#
        return patternEscaped(column.label)
            + "\\.(?:not\\.)?(?:(?:eq|neq|gt|gte|lt|lte|isdistinct)\\.\(value)|i?like\\.\(text)|is\\.(?:\(truths)))"
    }

    /// An item of `in.(…)` for a text column, as the list is read: unquoted
    /// up to the next comma or the closing parenthesis, or double-quoted
    /// (commas and parentheses inside, `\` escaping the next character) and
    /// then unquoted.
    private static let quotedListItem = #"(?:[^,")\x00][^,)\x00]*|"(?:[^"\\\x00]|\\[^\x00])*"[^,)\x00]*|)"#

    /// Any text without a NUL, which no query argument may hold.
    private static let anyText = #"[^\x00]*"#

    /// The texts of one value of `column`'s type, where a pattern states
    /// them: integers within the type's range, booleans, UUIDs,
    /// enumerations, texts (without NUL), calendar days but February 29th,
    /// times of day on them, and numbers by their form.
    static func valuePattern(of column: Column) -> String? {
        switch column.valueType {
        case .integer, .long:
            let range: ClosedRange<Int> =
                switch column.type {
                case .int2: Int(Int16.min)...Int(Int16.max)
                case .int4: Int(Int32.min)...Int(Int32.max)
                case .int8: Int.min...Int.max
                default: 0...0
                }
            return range == 0...0 ? nil : ArgumentConstraints.integerPattern(range)
        case .boolean:
            return "(?:true|false|1|0)"
        case .uuid:
            let hex = "[0-9a-fA-F]"
            return "\(hex){8}-\(hex){4}-\(hex){4}-\(hex){4}-\(hex){12}"
        case .enumeration(_, let values):
            return values.isEmpty ? nil : "(?:" + values.map(patternEscaped).joined(separator: "|") + ")"
        case .date:
            return column.type == .date ? datePattern : nil
        case .dateTime:
            guard column.type == .timestamp || column.type == .timestamptz else { return nil }
            let time = "(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\\.[0-9]{1,6})?)?"
            let zone = "(?:Z|[+-](?:0[0-9]|1[0-3])(?::?[0-5][0-9])?)?"
            return datePattern + "T" + time + zone
        case .double:
            guard [.float4, .float8, .numeric].contains(column.type) else { return nil }
            // Two exponent digits at most, and one for float4: a larger exponent may overflow the column's type.
            let exponent = column.type == .float4 ? "[0-9]" : "[0-9]{1,2}"
            return #"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?"# + exponent + ")?"
        case .string:
            return [.text, .varchar, .bpchar, .name].contains(column.type) ? anyText : nil
        default:
            return nil
        }
    }

    /// Year 0001 to 9999; February 29th left out, as not every year has it.
    private static let datePattern: String = {
        let year = "(?:[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])"
        let day = "(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)"
        return year + "-" + day
    }()

    /// `label` with the characters a regular expression reads as its own escaped.
    static func patternEscaped(_ label: String) -> String {
        var escaped = ""
        for character in label {
            if "\\^$.|?*+()[]{}".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}
