import PostgreSQL
import WebService

/// The result columns of a query that a request may filter, order by and
/// select, in PostgREST's syntax, so that its clients work unchanged:
///
/// - a filter is a query argument named after a column's label:
///   `?lastName=eq.Facello` (`eq`, `neq`, `gt`, `gte`, `lt`, `lte`, `like`,
///   `ilike` with `*` for any run, `in.(a,b,"c,d")`, `is.null`, `is.true`,
///   `is.false`, `is.unknown`), `not.` before any of them; several are ANDed;
/// - `?order=hireDate.desc,lastName.asc.nullslast` (`nullsfirst` too);
/// - `?select=employeeNumber,lastName`: only those members, in that order.
///
/// Its ``parameters(filters:order:select:_:)`` are the route's; their
/// values, gathered in a ``ChosenColumns``, go to
/// ``Query/choosing(_:)``, which binds every value and takes identifiers
/// only from the labels declared here.
///
/// ```swift
/// static let columns = ColumnChoices([
///     .init("employeeNumber", as: Int.self), .init("lastName", as: String.self),
/// ])
/// Route(.get, "/", parameters: Self.columns.parameters { $0 }, returns: summaries) { chosen in
///     Query.list("SELECT emp_no AS \"employeeNumber\", last_name AS \"lastName\" FROM employees ORDER BY emp_no")
///         .choosing(ChosenColumns(chosen))
/// }
/// ```
public struct ColumnChoices: Sendable {
    /// A result column, by its label, and how a filter's value is read for it.
    public struct Column: Sendable {
        /// The label, as in the JSON answer and the query arguments.
        public let label: String
        /// The type a filter's value is read as (`?api` and the 400 name it).
        public let type: ValueType
        /// Whether a request may filter on it (`?label=eq.value`).
        public let isFilterable: Bool
        /// Whether a request may order by it (`?order=label.desc`).
        public let isOrderable: Bool
        /// The range `convert` holds an integer to, which the filter's documented pattern states.
        public let constraints: ArgumentConstraints
        let convert: @Sendable ([ArgumentInput]) throws(ArgumentConversionError) -> SQLValue

        /// A column whose filter values `convert` reads (a value that does
        /// not convert is a 400 naming the column and `type`), within
        /// `constraints` when it holds integers to a range.
        ///
        /// ```swift
        /// ColumnChoices.Column("hireDate", type: .date) { inputs throws(ArgumentConversionError) in .text(try CalendarDate.convert(inputs).description) }
        /// ```
        public init(
            _ label: String, type: ValueType, filterable: Bool = true, orderable: Bool = true, constraints: ArgumentConstraints = .none,
            convert: @escaping @Sendable ([ArgumentInput]) throws(ArgumentConversionError) -> SQLValue
        ) {
            self.label = label
            self.type = type
            self.isFilterable = filterable
            self.isOrderable = orderable
            self.constraints = constraints
            self.convert = convert
        }

        /// A column whose filter values are read as the Swift type `T` reads
        /// an argument; an integer within `constraints` (the range of the
        /// column's type, say), as the filter's documented pattern states.
        ///
        /// ```swift
        /// ColumnChoices.Column("employeeNumber", as: Int.self, constraints: .range(Int(Int32.min)...Int(Int32.max)))
        /// ```
        public init<T: ArgumentValue & SQLValueConvertible>(
            _ label: String, as _: T.Type, filterable: Bool = true, orderable: Bool = true, constraints: ArgumentConstraints = .none
        ) {
            self.init(label, type: T.valueType, filterable: filterable, orderable: orderable, constraints: constraints) {
                inputs throws(ArgumentConversionError) in
                let value = try T.convert(inputs)
                if !constraints.isEmpty, let integer = value as? Int { try constraints.check(integer, received: inputs[0].received) }
                return value.sqlValue
            }
        }
    }

    /// Every column a request may select, in the result's order.
    public let columns: [Column]
    /// The table the list reads and its key's columns, by which the list
    /// is followed live (`Accept: text/event-stream`); `nil`: it is not.
    public let key: ListKey?

    /// The columns of a result that requests may choose among; with
    /// `key`, the list they choose from can be followed live.
    ///
    /// ```swift
    /// ColumnChoices([.init("departmentNumber", as: String.self), .init("departmentName", as: String.self)],
    ///               key: ListKey(table: "departments", columns: ["departmentNumber"]))
    /// ```
    public init(_ columns: [Column], key: ListKey? = nil) {
        self.columns = columns
        self.key = key
    }

    /// The operators of a filter, in the order the problems list them.
    public static let operators = ["eq", "neq", "gt", "gte", "lt", "lte", "like", "ilike", "in", "is"]

    /// One parameter's value: what the handler receives for each of ``parameters(filters:order:select:_:)``.
    public enum Chosen: Sendable {
        /// The conditions of one column's argument (empty when absent).
        case filters([ColumnFilter])
        /// `order`, `nil` when absent.
        case order([ColumnOrder]?)
        /// `select`, `nil` when absent.
        case select([String]?)
    }

    /// The route's parameters: one per filterable column (named by its
    /// label, in the columns' order), then `order` when some column is
    /// orderable and `order` is true, then `select` when `select` is true;
    /// each value made with `transform`.
    ///
    /// ```swift
    /// Route(.get, "/", parameters: columns.parameters { $0 }) { chosen in Query.list(sql).choosing(ChosenColumns(chosen)) }
    /// ```
    public func parameters<Value: Sendable>(
        filters: Bool = true, order: Bool = true, select: Bool = true,
        _ transform: @escaping @Sendable (Chosen) -> Value
    ) -> [RuntimeParameter<Value>] {
        var parameters: [RuntimeParameter<Value>] = []
        if filters {
            for column in columns where column.isFilterable {
                // The operators are said once per operation (`OperationDocumentation.filterSyntax`).
                var parameter = RuntimeParameter(
                    column.label, type: .string,
                    description: "Rows whose \(column.label) (\(column.type.name)) passes the filter: `eq.VALUE`, `gt.VALUE`, …",
                    whenAbsent: transform(.filters([])), pattern: Self.filterPattern(for: column), constraints: column.constraints
                ) { inputs throws(ArgumentConversionError) in
                    var filters: [ColumnFilter] = []
                    for input in inputs { filters.append(try ColumnFilter(parsing: input, column: column)) }
                    return transform(.filters(filters))
                }
                parameter.filteredType = column.type
                parameters.append(parameter)
            }
        }
        let orderable = columns.filter(\.isOrderable).map(\.label)
        if order, !orderable.isEmpty {
            let alternatives = orderable.map(Self.patternEscaped).joined(separator: "|")
            let item = "(\(alternatives))(\\.(asc|desc))?(\\.(nullsfirst|nullslast))?"
            parameters.append(
                RuntimeParameter(
                    "order", type: .string,
                    description: "The order of the rows, instead of the operation's own: `COLUMN[.asc|.desc][.nullsfirst|.nullslast]`, "
                        + "comma-separated, among " + orderable.joined(separator: ", ") + ".",
                    whenAbsent: transform(.order(nil)), pattern: "^\(item)(,\(item))*$"
                ) { inputs throws(ArgumentConversionError) in
                    transform(.order(try ColumnOrder.parse(inputs, columns: orderable)))
                })
        }
        if select {
            let labels = columns.map(\.label)
            let alternatives = labels.map(Self.patternEscaped).joined(separator: "|")
            var parameter = RuntimeParameter(
                "select", type: .string,
                description: "Only these members, in this order, comma-separated, among " + labels.joined(separator: ", ")
                    + " (`*`: all).",
                whenAbsent: transform(.select(nil)), pattern: "^\\*$|^(\(alternatives))(,(\(alternatives)))*$"
            ) { inputs throws(ArgumentConversionError) in
                transform(.select(try Self.selected(inputs, labels: labels)))
            }
            parameter.choosesMembers = true
            parameters.append(parameter)
        }
        return parameters
    }

    /// The same parameters as one input of a typed route, whose handler
    /// receives the request's ``ChosenColumns``.
    ///
    /// ```swift
    /// Route(.get, "/", returns: [Department].self, Self.columns.chosen()) { chosen in
    ///     Query.list("SELECT dept_no AS \"departmentNumber\" FROM departments ORDER BY dept_no").choosing(chosen)
    /// }
    /// ```
    public func chosen(filters: Bool = true, order: Bool = true, select: Bool = true) -> ParameterGroup<Chosen, ChosenColumns> {
        let key = key
        return ParameterGroup(parameters(filters: filters, order: order, select: select) { $0 }) { values in
            var chosen = ChosenColumns(values)
            chosen.key = key
            return chosen
        }
    }

    /// The labels of `select`: comma-separated, repeated arguments joined,
    /// duplicates kept once; `nil` for `*` (every column, as PostgREST's clients send by default).
    static func selected(_ inputs: [ArgumentInput], labels: [String]) throws(ArgumentConversionError) -> [String]? {
        if inputs.count == 1, inputs[0].scalarText == "*" { return nil }
        var chosen: [String] = []
        for input in inputs {
            guard let text = input.scalarText else {
                throw ArgumentConversionError(expected: .enumeration(name: "column", values: labels), received: input.received)
            }
            for part in text.split(separator: ",", omittingEmptySubsequences: false) {
                let name = String(part.trimmingSpaces())
                guard labels.contains(name) else {
                    throw ArgumentConversionError(expected: .enumeration(name: "column", values: labels), received: "\"\(name)\"")
                }
                if !chosen.contains(name) { chosen.append(name) }
            }
        }
        return chosen
    }

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

/// The choices of one request, gathered from the values of
/// ``ColumnChoices/parameters(filters:order:select:_:)``, for ``Query/choosing(_:)``.
///
/// ```swift
/// Query.list(sql).choosing(ChosenColumns(values))
/// ```
public struct ChosenColumns: Sendable {
    /// Every condition, all of which a row must meet.
    public var filters: [ColumnFilter] = []
    /// The order asked for; `nil`: the statement's own.
    public var order: [ColumnOrder]?
    /// The members asked for, in order; `nil`: every column.
    public var select: [String]?
    /// The table and key the list is followed live by (``ColumnChoices/key``).
    public var key: ListKey?

    /// Nothing chosen: the statement as it is.
    public init() {}

    /// The choices the parameters' values hold.
    public init(_ values: some Sequence<ColumnChoices.Chosen>) {
        for value in values { add(value) }
    }

    /// Adds the choice of one parameter's value.
    ///
    /// ```swift
    /// chosen.add(.order([ColumnOrder(column: "hireDate", isDescending: true)]))
    /// ```
    public mutating func add(_ value: ColumnChoices.Chosen) {
        switch value {
        case .filters(let filters): if !filters.isEmpty { self.filters += filters }
        case .order(let order): if let order { self.order = order }
        case .select(let select): if let select { self.select = select }
        }
    }

    /// Whether nothing is chosen.
    public var isEmpty: Bool { filters.isEmpty && order == nil && select == nil }
}

extension Substring {
    /// Without leading and trailing spaces (`select=a, b`).
    fileprivate func trimmingSpaces() -> Substring {
        var text = self
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return text
    }
}
