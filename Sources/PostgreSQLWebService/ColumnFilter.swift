import PostgreSQL
import WebService

/// One condition of a request on a column, read from PostgREST's syntax:
/// `eq.Facello`, `not.in.(d001,d002)`, `is.null`, `ilike.*son`.
///
/// ```swift
/// let filter = try ColumnFilter(parsing: .text("gte.1990-01-01"), column: hireDate)
/// ```
public struct ColumnFilter: Sendable, Equatable {
    /// How the column is compared.
    public enum Comparison: Sendable, Equatable {
        case equal, notEqual, greater, greaterOrEqual, less, lessOrEqual
        /// `LIKE`, `*` read as `%`.
        case like
        /// `ILIKE`, `*` read as `%`.
        case caseInsensitiveLike
        /// `= ANY(…)`: one of the values.
        case oneOf
        /// `IS NULL`, `IS TRUE`, `IS FALSE`, `IS UNKNOWN`.
        case isNull, isTrue, isFalse, isUnknown
    }

    /// The column's label.
    public let column: String
    public let comparison: Comparison
    /// Whether `not.` negates the condition.
    public let isNegated: Bool
    /// The value bound (a list for ``Comparison/oneOf``; `.null` for the `is` comparisons).
    public let value: SQLValue
    /// How many values the condition compares with: the items of an
    /// `in.()` list read from a request, one otherwise (``RequestLimits/listItems``).
    var itemCount = 1

    /// A condition made in code rather than read from a request.
    ///
    /// ```swift
    /// ColumnFilter(column: "employeeNumber", comparison: .equal, value: .text("10004"))
    /// ```
    public init(column: String, comparison: Comparison, isNegated: Bool = false, value: SQLValue = .null) {
        self.column = column
        self.comparison = comparison
        self.isNegated = isNegated
        self.value = value
    }

    /// Reads one argument of a filterable column; a malformed one, an
    /// unknown operator or a value not of the column's type is an
    /// `ArgumentConversionError` (a 400 naming the column).
    public init(parsing input: ArgumentInput, column: ColumnChoices.Column) throws(ArgumentConversionError) {
        let operators = ValueType.enumeration(name: "filter", values: ColumnChoices.operators.map { $0 + "." })
        guard let text = input.scalarText else { throw ArgumentConversionError(expected: operators, received: input.received) }
        // Read by Unicode scalars, not characters: a combining mark after a
        // dot, a parenthesis or a quote must not hide it, as PostgREST reads bytes.
        var rest = Substring(text).unicodeScalars
        isNegated = rest.starts(with: "not.".unicodeScalars)
        if isNegated { rest = rest.dropFirst(4) }
        guard let dot = rest.firstIndex(of: ".") else { throw ArgumentConversionError(expected: operators, received: input.received) }
        let name = String(rest[..<dot])
        let operandScalars = rest[rest.index(after: dot)...]
        let operand = String(operandScalars)
        self.column = column.label
        func read(_ text: String) throws(ArgumentConversionError) -> SQLValue {
            try column.convert([.text(text)])
        }
        switch name {
        case "eq": (comparison, value) = (.equal, try read(operand))
        case "neq": (comparison, value) = (.notEqual, try read(operand))
        case "gt": (comparison, value) = (.greater, try read(operand))
        case "gte": (comparison, value) = (.greaterOrEqual, try read(operand))
        case "lt": (comparison, value) = (.less, try read(operand))
        case "lte": (comparison, value) = (.lessOrEqual, try read(operand))
        case "like": (comparison, value) = (.like, .text(operand.replacing("*", with: "%")))
        case "ilike": (comparison, value) = (.caseInsensitiveLike, .text(operand.replacing("*", with: "%")))
        case "in":
            guard operandScalars.first == "(", operandScalars.last == ")", operandScalars.count >= 2,
                let items = Self.listItems(Substring(operandScalars.dropFirst().dropLast()))
            else {
                throw ArgumentConversionError(
                    expected: .string, received: input.received, requirement: "of the form in.(A,B,\"C,D\")")
            }
            var values: [SQLValue] = []
            for item in items { values.append(try read(item)) }
            (comparison, value) = (.oneOf, values.sqlValue)
            itemCount = values.count
        case "is":
            switch operand {
            case "null": comparison = .isNull
            case "true": comparison = .isTrue
            case "false": comparison = .isFalse
            case "unknown": comparison = .isUnknown
            default:
                throw ArgumentConversionError(
                    expected: .enumeration(name: "is", values: ["is.null", "is.true", "is.false", "is.unknown"]),
                    received: input.received)
            }
            if comparison != .isNull, column.type != .boolean {
                throw ArgumentConversionError(
                    expected: column.type, received: input.received, requirement: "(is.\(operand) compares booleans; is.null any column)")
            }
            value = .null
        default:
            throw ArgumentConversionError(expected: operators, received: input.received)
        }
    }

    /// The items of `a,b,"c,d"`: PostgREST's quoting, double quotes around
    /// an item holding commas or parentheses, `\` escaping the next
    /// character inside them; `nil` when a quote is not closed. Read by
    /// Unicode scalars, so that a combining mark never hides a quote or a comma.
    static func listItems(_ text: Substring) -> [String]? {
        guard !text.isEmpty else { return [] }
        let text = text.unicodeScalars
        var items: [String] = []
        var current = String.UnicodeScalarView()
        var index = text.startIndex
        var quoted = false
        var wasQuoted = false
        while index < text.endIndex {
            let character = text[index]
            if quoted {
                if character == "\\", text.index(after: index) < text.endIndex {
                    index = text.index(after: index)
                    current.append(text[index])
                } else if character == "\"" {
                    quoted = false
                } else {
                    current.append(character)
                }
            } else if character == "\"", current.isEmpty, !wasQuoted {
                quoted = true
                wasQuoted = true
            } else if character == "," {
                items.append(String(current))
                current = String.UnicodeScalarView()
                wasQuoted = false
            } else {
                current.append(character)
            }
            index = text.index(after: index)
        }
        guard !quoted else { return nil }
        items.append(String(current))
        return items
    }
}

/// One key of the order a request asks for: `hireDate.desc.nullslast`.
///
/// ```swift
/// let order = try ColumnOrder.parse([.text("hireDate.desc,lastName")], columns: ["hireDate", "lastName"])
/// ```
public struct ColumnOrder: Sendable, Equatable {
    /// Where NULLs go.
    public enum Nulls: Sendable, Equatable {
        case first, last
    }

    /// The column's label.
    public let column: String
    public let isDescending: Bool
    /// `nil`: PostgreSQL's default (last ascending, first descending).
    public let nulls: Nulls?

    /// A key made in code rather than read from a request.
    ///
    /// ```swift
    /// ColumnOrder(column: "hireDate", isDescending: true, nulls: .last)
    /// ```
    public init(column: String, isDescending: Bool = false, nulls: Nulls? = nil) {
        self.column = column
        self.isDescending = isDescending
        self.nulls = nulls
    }

    /// The keys of `order` arguments (comma-separated, repeated ones
    /// following), each `COLUMN[.asc|.desc][.nullsfirst|.nullslast]`
    /// among `columns`; anything else is an `ArgumentConversionError`
    /// that lists the columns.
    public static func parse(_ inputs: [ArgumentInput], columns: [String]) throws(ArgumentConversionError) -> [ColumnOrder] {
        var keys: [ColumnOrder] = []
        let expected = ValueType.enumeration(name: "order", values: columns)
        let requirement = "each optionally followed by .asc or .desc, then .nullsfirst or .nullslast"
        for input in inputs {
            guard let text = input.scalarText else { throw ArgumentConversionError(expected: expected, received: input.received) }
            for key in text.split(separator: ",", omittingEmptySubsequences: false) {
                var parts = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
                var nulls: Nulls?
                var isDescending = false
                if let last = parts.last, parts.count > 1, last == "nullsfirst" || last == "nullslast" {
                    nulls = last == "nullsfirst" ? .first : .last
                    parts.removeLast()
                }
                if let last = parts.last, parts.count > 1, last == "asc" || last == "desc" {
                    isDescending = last == "desc"
                    parts.removeLast()
                }
                let column = parts.joined(separator: ".")
                guard columns.contains(column) else {
                    throw ArgumentConversionError(expected: expected, received: "\"\(key)\"", requirement: requirement)
                }
                keys.append(ColumnOrder(column: column, isDescending: isDescending, nulls: nulls))
            }
        }
        return keys
    }
}
