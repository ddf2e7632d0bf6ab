import HTTPServer

/// A named argument of a route whose name and type are known only when the
/// program runs (read from a file, or from a database's description of a
/// statement), rather than declared as a Swift type: see
/// ``Route/init(_:_:description:parameters:returns:handler:)``.
///
/// It converts what the request supplies with `convert`, into a `Value` of
/// the program's choosing, and reports a bad value exactly as a typed
/// ``Parameter`` does (`400`, `The parameter "limit" expects an integer;
/// received "ten".`, naming the parameter).
///
/// ```swift
/// RuntimeParameter("limit", as: Int?.self, description: "At most this many rows.") { $0.map(String.init) ?? "" }
/// RuntimeParameter("code", type: .string, whenAbsent: "d001", defaultText: "d001") { inputs throws(ArgumentConversionError) in
///     try String.convert(inputs)
/// }
/// ```
public struct RuntimeParameter<Value: Sendable>: Sendable {
    /// The argument's name: a query or form field, a JSON body member, or the path variable `?:name`.
    public let name: String
    /// Its type, as `?api` and the error messages name it.
    public let type: ValueType
    /// What it means, shown by `?api`.
    public let description: String
    /// The value taken when the request does not supply it, as `?api` shows it.
    public let defaultText: String?
    /// A regular expression every text of the argument matches, for the
    /// OpenAPI document (the conversion enforces it); `nil`: none stated.
    public let pattern: String?
    /// What its values must be beyond their type, for the documentation
    /// (`minimum`, `maximum`, `minItems`); the conversion enforces them.
    public let constraints: ArgumentConstraints
    /// A typical value as a request sends it (a list's values
    /// comma-separated), for `?api`'s example request and the OpenAPI
    /// document; `nil`: the default, else a sample of the type.
    ///
    /// ```swift
    /// var number = RuntimeParameter("employeeNumber", as: Int.self) { $0 }
    /// number.example = "10004"
    /// ```
    public var example: String?
    /// For a filter on a result column (`lastName=eq.Facello`), the
    /// column's type, which `?api` shows instead of the argument's text
    /// type and explains the operators of once per operation; `nil` for
    /// any other parameter.
    public var filteredType: ValueType?
    /// Whether the argument chooses which members each element of the
    /// result holds (`select`): the documentation then requires none.
    public var choosesMembers = false
    /// The value taken when the request does not supply it; `nil` when the argument is required.
    let valueWhenAbsent: Value?
    let convert: @Sendable ([ArgumentInput]) throws(ArgumentConversionError) -> Value
    /// For a parameter made by ``readingOtherArguments(description:readsBody:read:)``: what it reads.
    private let readRequest: (@Sendable (RoutedRequest) throws(HTTPError) -> Value)?
    /// Whether it only documents an argument read by the route's ``readingOtherArguments(description:readsBody:read:)`` parameter.
    private var isDocumentation = false
    /// Whether its route takes the body as it is (``readingOtherArguments(description:readsBody:read:)``).
    private var readsBody = false

    /// A parameter of type `type`, converted by `convert` from every value
    /// the request supplied for the name (at least one). Without
    /// `whenAbsent` it is required: a request without it gets a 400.
    ///
    /// ```swift
    /// RuntimeParameter("id", type: .integer) { inputs throws(ArgumentConversionError) in try Int.convert(inputs) }
    /// ```
    public init(
        _ name: String, type: ValueType, description: String = "", whenAbsent: Value? = nil, defaultText: String? = nil,
        example: String? = nil, pattern: String? = nil, constraints: ArgumentConstraints = .none,
        convert: @escaping @Sendable ([ArgumentInput]) throws(ArgumentConversionError) -> Value
    ) {
        self.name = name
        self.example = example
        self.type = type
        self.description = description
        self.valueWhenAbsent = whenAbsent
        self.defaultText = defaultText
        self.pattern = pattern
        self.constraints = constraints
        self.convert = convert
        self.readRequest = nil
    }

    private init(description: String, read: @escaping @Sendable (RoutedRequest) throws(HTTPError) -> Value) {
        self.name = ""
        self.type = .any
        self.description = description
        self.defaultText = nil
        self.pattern = nil
        self.constraints = .none
        self.valueWhenAbsent = nil
        self.convert = { _ throws(ArgumentConversionError) in
            throw ArgumentConversionError(expected: .any, received: "an argument")
        }
        self.readRequest = read
    }

    /// A parameter that only documents `name`, an argument the route's
    /// ``readingOtherArguments(description:readsBody:read:)`` parameter reads (as
    /// one of the others: this one takes no part in it); its handler value is always `value`.
    ///
    /// ```swift
    /// RuntimeParameter.documenting("select", type: .string, description: "The columns to return.", value: .none)
    /// ```
    public static func documenting(
        _ name: String, type: ValueType, description: String, pattern: String? = nil, value: Value
    ) -> RuntimeParameter {
        var parameter = RuntimeParameter(name, type: type, description: description, whenAbsent: value, pattern: pattern) {
            _ throws(ArgumentConversionError) in value
        }
        parameter.isDocumentation = true
        return parameter
    }

    /// A parameter that reads the arguments no other parameter of its route
    /// names (``RoutedRequest/otherArguments``): the route then takes
    /// arguments of any name, which `read` refuses with a 400 of its own
    /// when it cannot use them. It is not an argument itself: `?api`
    /// documents the others.
    ///
    /// ```swift
    /// RuntimeParameter.readingOtherArguments { request throws(HTTPError) in try filters(request.otherArguments) }
    /// ```
    /// With `readsBody`, the route also takes the request's body as it
    /// is: no member of it is read as an argument.
    public static func readingOtherArguments(
        description: String = "", readsBody: Bool = false, read: @escaping @Sendable (RoutedRequest) throws(HTTPError) -> Value
    ) -> RuntimeParameter {
        var parameter = RuntimeParameter(description: description, read: read)
        parameter.readsBody = readsBody
        return parameter
    }

    /// A parameter read as the Swift type `T` reads it (same type name,
    /// same conversion, same messages), then turned into a `Value`. Absent,
    /// it takes `default`, else `T`'s value when absent (`nil` for an
    /// optional, `[]` for an array), else it is required. A value that
    /// breaks `constraints` is refused as one not of the type is.
    ///
    /// ```swift
    /// RuntimeParameter("offset", as: Int.self, default: 0, constraints: .atLeast(0)) { SQLValue.text(String($0)) }
    /// ```
    public init<T: ParameterValue>(
        _ name: String, as _: T.Type, description: String = "", default: T? = nil, example: T? = nil,
        constraints: ArgumentConstraints = .none, transform: @escaping @Sendable (T) -> Value
    ) {
        let absent = `default` ?? (constraints.requiresValues ? nil : T.valueWhenAbsent)
        self.init(
            name, type: T.valueType, description: description, whenAbsent: absent.map(transform),
            defaultText: `default`.map { value in (value as? any RawRepresentable).map { "\($0.rawValue)" } ?? "\(value)" },
            example: example.map { $0.argumentTexts.joined(separator: ",") }, constraints: constraints
        ) { inputs throws(ArgumentConversionError) in
            let value = try T.convert(inputs)
            try constraints.check(value)
            return transform(value)
        }
    }

    /// A list of names among `values`, given by repeating the argument or
    /// separating names by commas (or both), read as a ``CommaList`` reads
    /// them: duplicates dropped, order of first appearance kept, an unknown
    /// name a 400 that lists the allowed ones under the enumeration's name.
    /// Absent, the list is empty.
    ///
    /// ```swift
    /// RuntimeParameter.names("details", enumeration: "EmployeeDetail", values: ["titles", "salaries"]) { $0 }
    /// ```
    public static func names(
        _ name: String, enumeration: String, values: [String], description: String = "",
        transform: @escaping @Sendable ([String]) -> Value
    ) -> RuntimeParameter {
        let type = ValueType.array(.enumeration(name: enumeration, values: values))
        return RuntimeParameter(name, type: type, description: description, whenAbsent: transform([])) {
            inputs throws(ArgumentConversionError) in
            transform(
                try CommaSeparatedNames.chosen(in: inputs, names: values, type: .enumeration(name: enumeration, values: values)).map {
                    values[$0]
                })
        }
    }

    /// The value of an argument whose texts are `texts`, converted as a
    /// request's would be: how a program confirms an example it was given.
    ///
    /// ```swift
    /// try RuntimeParameter("limit", as: Int.self) { $0 }.value(ofTexts: ["10"])   // 10
    /// ```
    public func value(ofTexts texts: [String]) throws(ArgumentConversionError) -> Value {
        try convert(texts.map(ArgumentInput.text))
    }

    /// The argument's value for one request: from the path variable of its
    /// name, else from the request's arguments, else its value when absent.
    @usableFromInline
    func value(in context: RoutedRequest) throws(HTTPError) -> Value {
        if let readRequest { return try readRequest(context) }
        if isDocumentation { return valueWhenAbsent.unsafelyUnwrapped }
        let inputs: [ArgumentInput]
        if let pathValue = context.pattern.value(named: name, in: context.path) {
            inputs = [.text(pathValue)]
        } else {
            inputs = context.arguments.isEmpty ? [] : context.arguments[name] ?? []
        }
        if inputs.isEmpty { return try absentValue() }
        do {
            return try convert(inputs)
        } catch {
            throw HTTPError.invalidArgument(error, parameter: name)
        }
    }

    /// The value when absent, or a 400.
    ///
    /// Apart from `value(in:)`, which runs unspecialized: code that handles
    /// a `Value?` there looks up the metadata of `Optional<Value>` on every
    /// call, even when the argument is present.
    @inline(never)
    private func absentValue() throws(HTTPError) -> Value {
        guard let valueWhenAbsent else { throw HTTPError.missingArgument(name, type: type) }
        return valueWhenAbsent
    }

    /// How the parameter presents itself to the router and the
    /// documentation: what a ``RouteInput`` that reads it (or only
    /// documents it) declares.
    ///
    /// ```swift
    /// public var declarations: [InputDeclaration] { documented.map(\.declaration) + [.otherArguments()] }
    /// ```
    public var declaration: InputDeclaration {
        guard readRequest == nil else {
            return InputDeclaration(kind: .request, description: description, acceptsOtherArguments: true, readsBody: readsBody)
        }
        return InputDeclaration(
            kind: .runtimeArgument(
                .init(
                    name: name, type: type, defaultText: defaultText, exampleText: example, required: valueWhenAbsent == nil,
                    pattern: pattern, filteredType: filteredType, choosesMembers: choosesMembers)),
            description: description, constraints: constraints, isReadAsOtherArgument: isDocumentation)
    }
}

// MARK: - The problems of arguments

extension HTTPError {
    /// `400`: a required argument is missing (typed and runtime parameters alike).
    static func missingArgument(_ name: String, type: ValueType) -> HTTPError {
        HTTPError(.badRequest, detail: "The required parameter \"\(name)\" (\(type.name)) is missing.", parameter: name)
    }

    /// `400`: an argument's value could not be converted; an enumeration's
    /// values are listed in `allowedValues`.
    static func invalidArgument(_ error: ArgumentConversionError, parameter: String) -> HTTPError {
        var extensions: [(name: String, value: ProblemValue)] = []
        if case .enumeration(_, let values) = error.expected {
            extensions.append(("allowedValues", .strings(values)))
        }
        let requirement = error.requirement.map { " " + $0 } ?? ""
        return HTTPError(
            .badRequest,
            detail: "The parameter \"\(parameter)\" expects \(error.expected.nameWithArticle)\(requirement); received \(error.received).",
            parameter: parameter,
            extensions: extensions
        )
    }
}
