import Foundation

/// What a caller asks of a list that takes filters, an order and a choice
/// of columns (a `sql-rest` file with `@filter` and `@order`, or any
/// PostgREST-style endpoint): built typed, sent in PostgREST's syntax, so
/// that an app never writes `lastName=eq.Facello` by hand. The REST form of
/// the OData query options (`$filter`, `$orderby`, `$select`, `$top`,
/// `$skip`, `$count`) ROADWebService's client offered.
///
/// ```swift
/// let query = ListQuery()
///     .where("lastName", .eq("Facello"))
///     .where("hireDate", .gte("1990-01-01"))
///     .where("gender", .not(.in(["X", "Y"])))
///     .ordered(by: "hireDate", .descending)
///     .selecting("employeeNumber", "lastName")
///     .page(limit: 20, offset: 40)
/// let page: ListPage<Employee> = try await client.list("/employees", query, counted: true)
/// ```
public struct ListQuery: Sendable {
    /// A condition on one column, as PostgREST writes it after the `=`.
    public struct Condition: Sendable, Hashable {
        /// `eq`, `neq`, `gt`, `gte`, `lt`, `lte`, `like`, `ilike`, `in` or `is`.
        public var operation: String
        /// The operand as sent (`Facello`, `(a,b)`, `null`).
        public var operand: String
        /// Whether `not.` precedes it.
        public var isNegated = false

        /// `operation.operand`, with `not.` before it when negated.
        public var text: String { (isNegated ? "not." : "") + operation + "." + operand }

        static func comparing(_ operation: String, _ value: some RequestArgument) -> Condition {
            Condition(operation: operation, operand: value.argumentValue.texts.first ?? "")
        }

        /// Equal to `value`.
        public static func eq(_ value: some RequestArgument) -> Condition { comparing("eq", value) }
        /// Not equal to `value`.
        public static func neq(_ value: some RequestArgument) -> Condition { comparing("neq", value) }
        /// Greater than `value`.
        public static func gt(_ value: some RequestArgument) -> Condition { comparing("gt", value) }
        /// Greater than or equal to `value`.
        public static func gte(_ value: some RequestArgument) -> Condition { comparing("gte", value) }
        /// Less than `value`.
        public static func lt(_ value: some RequestArgument) -> Condition { comparing("lt", value) }
        /// Less than or equal to `value`.
        public static func lte(_ value: some RequestArgument) -> Condition { comparing("lte", value) }
        /// Matches `pattern`, where `*` matches any run of characters.
        public static func like(_ pattern: String) -> Condition { comparing("like", pattern) }
        /// Matches `pattern` whatever the case, where `*` matches any run of characters.
        public static func ilike(_ pattern: String) -> Condition { comparing("ilike", pattern) }
        /// One of `values`.
        public static func `in`<Value: RequestArgument>(_ values: [Value]) -> Condition {
            let items = values.map { quotedListItem($0.argumentValue.texts.first ?? "") }
            return Condition(operation: "in", operand: "(" + items.joined(separator: ",") + ")")
        }
        /// SQL `NULL`.
        public static let isNull = Condition(operation: "is", operand: "null")
        /// `true`.
        public static let isTrue = Condition(operation: "is", operand: "true")
        /// `false`.
        public static let isFalse = Condition(operation: "is", operand: "false")
        /// The opposite of `condition`.
        public static func not(_ condition: Condition) -> Condition {
            var negated = condition
            negated.isNegated.toggle()
            return negated
        }

        /// A value of an `in.(…)` list: double-quoted, with `\` before `"`
        /// and `\`, when it holds what the list's syntax reads
        /// (`,`, `(`, `)`, `"`, `\`, a space at either end) or is empty.
        static func quotedListItem(_ value: String) -> String {
            let needsQuotes = value.isEmpty || value.contains { ",()\"\\".contains($0) } || value.first == " " || value.last == " "
            guard needsQuotes else { return value }
            return "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
    }

    /// The direction of an order.
    public enum Direction: String, Sendable {
        case ascending = "asc"
        case descending = "desc"
    }

    /// Where rows whose column is `NULL` go.
    public enum Nulls: String, Sendable {
        case first = "nullsfirst"
        case last = "nullslast"
    }

    /// The conditions, all of which a row must meet, in the order given.
    public private(set) var conditions: [(column: String, condition: Condition)] = []
    /// The order, `column.direction[.nulls]` each; empty: the list's own.
    public private(set) var order: [String] = []
    /// The columns wanted, in order; empty: every column.
    public private(set) var columns: [String] = []
    /// The page: at most `limit` rows, from `offset`.
    public private(set) var limit: Int?
    public private(set) var offset: Int?

    public init() {}

    /// The query with rows kept only where `column` meets `condition` too.
    public func `where`(_ column: String, _ condition: Condition) -> ListQuery {
        var query = self
        query.conditions.append((column, condition))
        return query
    }

    /// The query ordered by `column` after the orders given before.
    public func ordered(by column: String, _ direction: Direction = .ascending, nulls: Nulls? = nil) -> ListQuery {
        var query = self
        query.order.append([column, direction.rawValue, nulls?.rawValue].compactMap { $0 }.joined(separator: "."))
        return query
    }

    /// The query answering only `columns`, in that order.
    public func selecting(_ columns: String...) -> ListQuery {
        var query = self
        query.columns = columns
        return query
    }

    /// The query answering at most `limit` rows, from `offset`.
    public func page(limit: Int, offset: Int = 0) -> ListQuery {
        var query = self
        query.limit = limit
        query.offset = offset
        return query
    }

    /// The query's arguments, in PostgREST's syntax: `column=op.value` per
    /// condition, `order`, `select`, `limit` and `offset`.
    ///
    /// ```swift
    /// ListQuery().where("lastName", .eq("Facello")).arguments   // lastName=eq.Facello
    /// ```
    public var arguments: RequestArguments {
        var elements: [(name: String, value: RequestArgumentValue)] = conditions.map { ($0.column, .string($0.condition.text)) }
        if !order.isEmpty { elements.append(("order", .string(order.joined(separator: ",")))) }
        if !columns.isEmpty { elements.append(("select", .string(columns.joined(separator: ",")))) }
        if let limit { elements.append(("limit", limit.argumentValue)) }
        if let offset, offset > 0 { elements.append(("offset", offset.argumentValue)) }
        return RequestArguments(elements)
    }
}

/// One page of a list, and how many rows the whole list has when asked.
public struct ListPage<Element: Sendable>: Sendable {
    /// The rows of the page.
    public var elements: [Element]
    /// The rows of the whole list, filters applied, from `Content-Range`
    /// (asked with `Prefer: count=exact`); `nil` when not asked or not told.
    public var total: Int?
}

extension WebServiceClient {
    /// `GET path` with `query` (and any other `arguments`), the answer's
    /// array decoded; `counted` asks the server for the whole list's count.
    ///
    /// ```swift
    /// let page = try await client.list("/employees", ListQuery().where("lastName", .eq("Facello")), counted: true, as: Employee.self)
    /// print(page.elements.count, "of", page.total ?? 0)
    /// ```
    public func list<Element: Decodable & Sendable>(
        _ path: String, _ query: ListQuery, arguments: RequestArguments = [:], counted: Bool = false,
        headers: [String: String] = [:], as type: Element.Type = Element.self
    ) async throws -> ListPage<Element> {
        var all = query.arguments
        all.elements += arguments.elements
        var headers = headers
        if counted { headers.addPreferences(["count=exact"]) }
        let response = try await send(WebServiceRequest(.get, path, arguments: all, headers: headers))
        return ListPage(elements: try response.decode([Element].self), total: response.contentRangeTotal)
    }
}
