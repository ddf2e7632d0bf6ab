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
    /// The values by parameter name.
    public var values: [String: SQLValue]

    /// Arguments from a dictionary of values.
    ///
    /// ```swift
    /// let arguments = SQLArguments(["employeeNumber": 10004])
    /// ```
    public init(_ values: [String: (any SQLValueConvertible)?] = [:]) {
        self.values = values.mapValues { $0?.sqlValue ?? .null }
    }

    /// Arguments from a literal; a repeated name keeps its last value.
    public init(dictionaryLiteral elements: (String, (any SQLValueConvertible)?)...) {
        // Straight into the dictionary: no array of pairs to build and merge.
        values = Dictionary(minimumCapacity: elements.count)
        for (name, value) in elements {
            values[name] = value?.sqlValue ?? .null
        }
    }

    /// The value for `name`; setting `nil` removes the argument (to bind
    /// SQL `NULL`, set `SQLValue.null`).
    ///
    /// ```swift
    /// var arguments: SQLArguments = [:]
    /// arguments["name"] = "bal%"
    /// ```
    public subscript(name: String) -> (any SQLValueConvertible)? {
        get { values[name] }
        set { values[name] = newValue.map { $0.sqlValue } }
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
        if arguments.values.count > names.count || names.contains(where: { arguments.values[$0] == nil }) {
            if let unknown = unknownName(in: arguments) { throw ParameterError(.unknown, name: unknown) }
        }
        return try bind { arguments.values[$0] }
    }

    /// The first name, in sorted order, of the arguments that has no parameter.
    func unknownName(in arguments: SQLArguments) -> String? {
        let known = Set(names)
        return arguments.values.keys.sorted().first { !known.contains($0) }
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
