import HTTPServer

// MARK: - Routes declared at run time

extension Route {
    /// A route whose parameters and result are known only when the program
    /// runs (a service read from files, say), and whose handler returns a
    /// ``RunnableResult`` that the router runs with its runner, as for a
    /// typed route.
    ///
    /// The handler receives the parameters' values in the order of
    /// `parameters`. Each is converted, or reported as a 400, exactly as a
    /// typed ``Parameter`` would be; `?api` documents the parameters and
    /// `returns`, whose structures join the service's.
    ///
    /// ```swift
    /// Route(.get, "/?:id", description: "One product.",
    ///       parameters: [RuntimeParameter("id", as: Int.self) { $0 }],
    ///       returns: ResultDescription(.structure("Product"), structures: [product])) { values in
    ///     Query.object("SELECT id, name FROM products WHERE id = :id", ["id": values[0]], notFound: "No product.")
    /// }
    /// ```
    ///
    /// Inlinable, as the typed routes' initialisers are: specialised in the
    /// module that declares `Value` and `Result`, the handler's closure
    /// finds their types' metadata (of `[Value]`, of `Result.Runner` for
    /// the cast) at compile time, where unspecialised code looks each up
    /// in the runtime's tables on every request.
    @inlinable
    public init<Value: Sendable, Result: RunnableResult>(
        _ method: HTTPMethod, _ path: String, description: String = "",
        parameters: [RuntimeParameter<Value>], returns: ResultDescription? = nil,
        handler: @escaping @Sendable ([Value]) throws -> Result
    ) {
        // Each parameter read through a closure of its own: reading it
        // from the array would copy it (and retain and release every
        // string and closure it holds) on every request.
        let readers = parameters.map { parameter in
            { @Sendable (context: RoutedRequest) throws -> Value in try parameter.value(in: context) }
        }
        self.init(
            method, path, description: description, inputs: parameters.map(\.declaration),
            result: .described(returns), execution: .eventLoop, runnerType: Result.Runner.self
        ) { context in
            var values: [Value] = []
            values.reserveCapacity(readers.count)
            for index in readers.indices { values.append(try readers[index](context)) }
            let result = try handler(values)
            // The router checked, when it mounted the route, that it holds a
            // runner of this type. Unwrapped before the cast: a cast from the
            // optional existential takes the runtime's slower general path.
            return result.response(runner: context.runner.unsafelyUnwrapped as! Result.Runner, request: context)
        }
    }
}

/// What a route declared at run time returns, for `?api`: its type and the
/// structures and enumerations the type names.
///
/// ```swift
/// let product = StructureDocumentation("Product", fields: [
///     .init("id", type: .integer, required: true),
///     .init("name", type: .string, required: false),
/// ])
/// ResultDescription(.array(.structure("Product")), structures: [product], streamed: true)
/// ```
public struct ResultDescription: Sendable {
    /// The result's type (`Product`, `[Product]`); `nil` when there is no body (204).
    public var type: ValueType?
    /// The structures the type refers to, nested ones included.
    public var structures: [StructureDocumentation]
    /// The enumerations the structures refer to.
    public var enumerations: [EnumerationDocumentation]
    /// Whether the result is streamed (a list of rows).
    public var streamed: Bool

    /// A description of a result of `type` (`nil`: none, 204).
    public init(
        _ type: ValueType?, structures: [StructureDocumentation] = [], enumerations: [EnumerationDocumentation] = [],
        streamed: Bool = false
    ) {
        self.type = type
        self.structures = structures
        self.enumerations = enumerations
        self.streamed = streamed
    }
}

// MARK: - Documentation values made at run time

extension StructureDocumentation {
    /// A structure with `fields`, in order.
    ///
    /// ```swift
    /// StructureDocumentation("Title", fields: [.init("title", type: .string, required: true)])
    /// ```
    public init(_ name: String, fields: [Field], membersChosen: Bool = false) {
        self.name = name
        self.fields = fields
        self.membersChosen = membersChosen
    }
}

extension StructureDocumentation.Field {
    /// A field; `required: false` when it may be null or absent.
    ///
    /// ```swift
    /// StructureDocumentation.Field("toDate", type: .date, required: false)
    /// ```
    public init(_ name: String, type: ValueType, required: Bool) {
        self.name = name
        self.type = type
        self.required = required
    }
}

extension EnumerationDocumentation {
    /// An enumeration's allowed values, in order.
    ///
    /// ```swift
    /// EnumerationDocumentation("Gender", values: ["M", "F"])
    /// ```
    public init(_ name: String, values: [String]) {
        self.name = name
        self.values = values
    }
}
