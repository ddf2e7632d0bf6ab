/// Values for the named parameters of a query, written as a dictionary literal.
///
/// ```swift
/// let arguments: SQLArguments = ["employeeNumber": 10004, "name": "bal%", "ids": [1, 2, 3], "until": nil]
/// let values = try Parameters.parse(sql).bind(arguments)
/// ```
///
/// Values are converted to ``SQLValue`` when the arguments are made, so
/// `SQLArguments` is `Sendable` whatever the Swift types were.
public struct SQLArguments: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    /// The values in the order their names were first given. A query has a
    /// handful of parameters, and names are short strings that compare
    /// quickly, so searching this list costs less than making a
    /// dictionary for every request and hashing every name into and out of
    /// it.
    private var entries: [(name: String, value: SQLValue)]
    /// The position of each name in `entries`, once there are more than
    /// `searchedEntries`: past them, a look-up costs the same whatever
    /// the count, so that binding many values (a request's filters) costs
    /// in step with their number.
    private var positions: [String: Int]?
    /// The most entries searched in order.
    private static let searchedEntries = 16

    /// Arguments from a dictionary of values.
    ///
    /// ```swift
    /// let arguments = SQLArguments(["employeeNumber": 10004])
    /// ```
    public init(_ values: [String: (any SQLValueConvertible)?] = [:]) {
        entries = values.map { (name: $0.key, value: $0.value?.sqlValue ?? .null) }
        if entries.count > Self.searchedEntries { indexEntries() }
    }

    /// Arguments from a literal; a repeated name keeps its last value.
    public init(dictionaryLiteral elements: (String, (any SQLValueConvertible)?)...) {
        entries = []
        entries.reserveCapacity(elements.count)
        for (name, value) in elements {
            self[value: name] = value?.sqlValue ?? .null
        }
    }

    /// The values by parameter name.
    ///
    /// ```swift
    /// let arguments: SQLArguments = ["a": 1, "b": nil]
    /// arguments.values    // ["a": .text("1"), "b": .null]
    /// ```
    public var values: [String: SQLValue] {
        get { Dictionary(uniqueKeysWithValues: entries) }
        set {
            entries = newValue.map { (name: $0.key, value: $0.value) }
            positions = nil
            if entries.count > Self.searchedEntries { indexEntries() }
        }
    }

    /// The number of arguments.
    public var count: Int { entries.count }

    /// The names of the arguments, in the order they were first given.
    public var names: [String] { entries.map(\.name) }

    /// The value for `name`; setting `nil` removes the argument (to bind
    /// SQL `NULL`, set `SQLValue.null`).
    ///
    /// ```swift
    /// var arguments: SQLArguments = [:]
    /// arguments["name"] = "bal%"
    /// ```
    public subscript(name: String) -> (any SQLValueConvertible)? {
        get { self[value: name] }
        set { self[value: name] = newValue.map { $0.sqlValue } }
    }

    /// The value for `name` as it is bound; setting `nil` removes the argument.
    ///
    /// ```swift
    /// arguments[value: "pageLimit"] = .null
    /// arguments[value: "employeeNumber"]    // .text("10004")
    /// ```
    public subscript(value name: String) -> SQLValue? {
        get {
            if let positions { return positions[name].map { entries[$0].value } }
            for entry in entries where entry.name == name { return entry.value }
            return nil
        }
        set {
            switch (position(of: name), newValue) {
            case (let index?, let value?): entries[index].value = value
            case (let index?, nil):
                entries.remove(at: index)
                if positions != nil { indexEntries() }
            case (nil, let value?):
                positions?[name] = entries.count
                entries.append((name: name, value: value))
                if positions == nil, entries.count > Self.searchedEntries { indexEntries() }
            case (nil, nil): break
            }
        }
    }

    private func position(of name: String) -> Int? {
        if let positions { return positions[name] }
        return entries.firstIndex { $0.name == name }
    }

    private mutating func indexEntries() {
        var positions: [String: Int] = [:]
        positions.reserveCapacity(entries.count)
        for (index, entry) in entries.enumerated() { positions[entry.name] = index }
        self.positions = positions
    }

    /// Equal when they hold the same values by name, in whatever order.
    public static func == (left: SQLArguments, right: SQLArguments) -> Bool {
        left.count == right.count && left.entries.allSatisfy { right[value: $0.name] == $0.value }
    }

    /// Hashes the values by name, in whatever order.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(values)
    }
}

/// A named parameter that could not be bound. Its description names the
/// parameter, never a value.
///
/// ```swift
/// do { _ = try query.bind([:]) } catch let error as ParameterError {
///     error.reason   // .missing
///     error.name     // "employeeNumber"
/// }
/// ```
public struct ParameterError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Why the parameter could not be bound.
    public struct Reason: Sendable, Hashable, CustomStringConvertible {
        /// A short description of the reason.
        public let description: String

        /// The query has the parameter but no value was given for it.
        public static let missing = Reason(description: "no value for SQL parameter")
        /// A value was given for a name the query does not have.
        public static let unknown = Reason(description: "no such SQL parameter")
        /// The value's text contains a NUL character, which PostgreSQL text cannot hold.
        public static let nulCharacter = Reason(description: "NUL character in the value of SQL parameter")
    }

    /// Why the parameter could not be bound.
    public let reason: Reason
    /// The parameter's name, without the colon.
    public let name: String

    /// An error for the parameter `name`.
    public init(_ reason: Reason, name: String) {
        self.reason = reason
        self.name = name
    }

    /// For example `no value for SQL parameter :employeeNumber`.
    public var description: String { "\(reason) :\(name)" }
}

// MARK: - Binding

extension Parameters {
    /// The values of the query's parameters in placeholder order
    /// (`values[0]` for `$1`). Every name must have a value and every
    /// value a name, so that a misspelt name is caught.
    ///
    /// ```swift
    /// let query = Parameters.parse("SELECT * FROM employees WHERE emp_no = :employeeNumber")
    /// try query.bind(["employeeNumber": 10004])   // [.text("10004")]
    /// try query.bind([:])                         // throws ParameterError(.missing, name: "employeeNumber")
    /// ```
    public func bind(_ arguments: SQLArguments) throws(ParameterError) -> [SQLValue] {
        try boundValues(arguments) { $0 }
    }

    /// Each parameter's value in `arguments`, checked as `bind(_:)` checks
    /// it and passed through `transform`. One look-up per name when all is
    /// well: a name the query does not have is looked for only when there
    /// are more arguments than parameters, or after a failure with a
    /// parameter left without a value, where it is the error that tells
    /// (a misspelt name, rather than the parameter it leaves empty).
    func boundValues<Value>(_ arguments: SQLArguments, _ transform: (SQLValue) -> Value) throws(ParameterError) -> [Value] {
        if arguments.count > names.count, let unknown = unknownName(in: arguments) {
            throw ParameterError(.unknown, name: unknown)
        }
        do {
            return try boundValues({ arguments[value: $0] }, transform)
        } catch {
            if names.contains(where: { arguments[value: $0] == nil }), let unknown = unknownName(in: arguments) {
                throw ParameterError(.unknown, name: unknown)
            }
            throw error
        }
    }

    /// The first name, in sorted order, of the arguments that has no parameter.
    func unknownName(in arguments: SQLArguments) -> String? {
        let known = Set(names)
        return arguments.names.sorted().first { !known.contains($0) }
    }

    /// The values of the query's parameters in placeholder order, looked up
    /// by name: for a child query bound from its parent row's columns.
    /// `lookup` returns `nil` when it has no value for the name (an error),
    /// and `SQLValue.null` for SQL `NULL`.
    ///
    /// ```swift
    /// let child = Parameters.parse("SELECT title FROM titles WHERE emp_no = :employeeNumber")
    /// try child.bind { name in name == "employeeNumber" ? .text("10004") : nil }
    /// ```
    public func bind(_ lookup: (String) throws(ParameterError) -> SQLValue?) throws(ParameterError) -> [SQLValue] {
        try boundValues(lookup) { $0 }
    }

    /// Each parameter's value from `lookup`, checked as `bind(_:)` checks
    /// it, in placeholder order and passed through `transform`.
    @inline(__always)
    func boundValues<Value>(
        _ lookup: (String) throws(ParameterError) -> SQLValue?, _ transform: (SQLValue) -> Value
    ) throws(ParameterError) -> [Value] {
        var values: [Value] = []
        values.reserveCapacity(names.count)
        for name in names {
            guard let value = try lookup(name) else {
                throw ParameterError(.missing, name: name)
            }
            if case .text(let text) = value, text.utf8.contains(0) {
                throw ParameterError(.nulCharacter, name: name)
            }
            values.append(transform(value))
        }
        return values
    }
}
