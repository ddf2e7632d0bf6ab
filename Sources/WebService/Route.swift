import HTTPServer
import JSONStreaming

/// One operation of a ``WebService``: a verb, a resource path below the
/// service's path, the inputs its handler takes and what it returns.
///
/// The path may hold variables: `?:name` (bound to the ``Parameter`` of that
/// name) and `?` (bound to a ``PathVariable`` by position). The handler's
/// result decides the response:
///
/// - a ``RunnableResult`` such as a database query value: the router runs
///   it with the runner it was given, which decides how;
/// - an `Encodable` value: `200` with its JSON, keys in declaration order;
/// - nothing (`Void`): `204 No Content`;
/// - an `HTTPResponse`: sent as is (status, headers, raw bytes or text);
/// - a `StreamingBody`: streamed as `application/json`.
///
/// Where a handler runs follows from what it is, never from a marker: a
/// handler that returns a ``RunnableResult`` only describes work, and runs
/// on the event loop; any other synchronous handler may block, and runs on
/// a worker thread; an `async` handler runs as a task on the worker threads.
///
/// ```swift
/// Route(.get, "/?:employeeNumber", description: "Returns one employee.", returns: Employee.self,
///       Parameter<Int>("employeeNumber")) { number in
///     Query.object(employeeSQL, ["employeeNumber": number], notFound: "No employee \(number).")
/// }
/// Route(.get, "/sum", Parameter<Double>("a"), Parameter<Double>("b")) { a, b in a + b }
/// ```
public struct Route: Sendable {
    /// The HTTP verb.
    public let method: HTTPMethod
    /// The resource path below the service's path (`/sum`, `/?:id`, `/`).
    public let path: String
    /// What the operation does, shown by `?api`.
    public let description: String
    let inputs: [InputDeclaration]
    let result: ResultDeclaration
    let handler: @Sendable (RoutedRequest) throws -> HTTPResponse
    /// Where the handler runs; decided by the kind of handler.
    let execution: Execution
    /// The runner type a ``RunnableResult`` handler needs from the router.
    let runnerType: Any.Type?
    /// The `Cache-Control` of the route's successful `GET` responses.
    private(set) var cacheControl: String?

    /// Where a handler runs.
    @usableFromInline
    enum Execution: Sendable {
        /// On the event loop: the handler only describes work (a ``RunnableResult``).
        case eventLoop
        /// On a worker thread: a synchronous handler, which may block.
        case worker
        /// As a task: an `async` handler (its response is an `HTTPResponse.async`).
        case task
    }

    @usableFromInline
    init(
        _ method: HTTPMethod, _ path: String, description: String,
        inputs: [InputDeclaration], result: ResultDeclaration, execution: Execution = .worker, runnerType: Any.Type? = nil,
        handler: @escaping @Sendable (RoutedRequest) throws -> HTTPResponse
    ) {
        // A route's method is the code's (a service file's is one of these, parsed).
        precondition([.get, .post, .put, .patch, .delete].contains(method), "Routes take GET, POST, PUT, PATCH or DELETE, not \(method)")
        self.method = method
        self.path = path
        self.description = description
        self.inputs = inputs
        self.result = result
        self.execution = execution
        self.runnerType = runnerType
        self.handler = handler
    }

    /// The same route, whose successful `GET` responses carry
    /// `Cache-Control: value` (and, with it, their `ETag`), so that clients
    /// and caches may keep them.
    ///
    /// ```swift
    /// Route(.get, "/", returns: [Department].self) { Query.list(departmentsSQL) }.cacheControl("max-age=300")
    /// ```
    public func cacheControl(_ value: String) -> Route {
        var route = self
        route.cacheControl = value
        return route
    }

    /// The header fields of a streamed response, built once.
    @usableFromInline
    static let jsonHeaders: HTTPHeaders = ["Content-Type": HTTPResponse.jsonContentType]

    @usableFromInline
    static func declarations<each Input: RouteInput>(_ inputs: repeat each Input) -> [InputDeclaration] {
        var declarations: [InputDeclaration] = []
        for input in repeat each inputs { declarations += input.declarations }
        return declarations
    }

    // MARK: - Results

    /// A route whose handler returns a ``RunnableResult`` (a query value,
    /// say), which the router runs with its runner. `returns` documents
    /// what the result holds.
    @inlinable
    public init<each Input: RouteInput, Result: RunnableResult>(
        _ method: HTTPMethod, _ path: String, description: String = "", returns: Any.Type? = nil,
        _ inputs: repeat each Input,
        handler: @escaping @Sendable (repeat (each Input).Value) throws -> Result
    ) {
        self.init(
            method, path, description: description, inputs: Self.declarations(repeat each inputs),
            result: .runnable(returns), execution: .eventLoop, runnerType: Result.Runner.self
        ) { context in
            let result = try handler(repeat (each inputs).value(in: context))
            // The router checked, when it mounted the route, that it holds a
            // runner of this type. Unwrapped before the cast: a cast from the
            // optional existential takes the runtime's slower general path.
            return result.response(runner: context.runner.unsafelyUnwrapped as! Result.Runner, request: context)
        }
    }

    /// A route whose handler returns an `Encodable` value, sent as JSON.
    ///
    /// `returns` documents a result type other than the declared one
    /// (rarely needed for `Encodable` results).
    @inlinable
    public init<each Input: RouteInput, Result: Encodable & SendableMetatype>(
        _ method: HTTPMethod, _ path: String, description: String = "", returns: Any.Type? = nil,
        _ inputs: repeat each Input,
        handler: @escaping @Sendable (repeat (each Input).Value) throws -> Result
    ) {
        self.init(
            method, path, description: description, inputs: Self.declarations(repeat each inputs),
            result: .value(returns ?? Result.self)
        ) { context in
            let result = try handler(repeat (each inputs).value(in: context))
            return HTTPResponse(json: try OrderedJSONEncoder.encode(result))
        }
    }

    /// A route whose handler returns nothing: `204 No Content`.
    @inlinable
    public init<each Input: RouteInput>(
        _ method: HTTPMethod, _ path: String, description: String = "",
        _ inputs: repeat each Input,
        handler: @escaping @Sendable (repeat (each Input).Value) throws -> Void
    ) {
        self.init(
            method, path, description: description, inputs: Self.declarations(repeat each inputs),
            result: .none
        ) { context in
            try handler(repeat (each inputs).value(in: context))
            return HTTPResponse(status: .noContent)
        }
    }

    /// A route whose handler builds the whole response itself.
    @inlinable
    public init<each Input: RouteInput>(
        _ method: HTTPMethod, _ path: String, description: String = "", returns: Any.Type? = nil,
        _ inputs: repeat each Input,
        handler: @escaping @Sendable (repeat (each Input).Value) throws -> HTTPResponse
    ) {
        self.init(
            method, path, description: description, inputs: Self.declarations(repeat each inputs),
            result: .response(returns)
        ) { context in
            try handler(repeat (each inputs).value(in: context))
        }
    }

    /// A route whose handler returns a body streamed as `application/json`
    /// (a query result, say). `returns` documents what the stream holds.
    @inlinable
    public init<each Input: RouteInput, Result: StreamingBody & SendableMetatype>(
        _ method: HTTPMethod, _ path: String, description: String = "", returns: Any.Type? = nil,
        _ inputs: repeat each Input,
        handler: @escaping @Sendable (repeat (each Input).Value) throws -> Result
    ) {
        self.init(
            method, path, description: description, inputs: Self.declarations(repeat each inputs),
            result: .stream(returns)
        ) { context in
            let body = try handler(repeat (each inputs).value(in: context))
            return HTTPResponse(status: .ok, headers: Route.jsonHeaders, body: .stream(body))
        }
    }

    /// A route whose handler returns a body streamed as `application/json`,
    /// typed as `any StreamingBody`.
    @inlinable
    public init<each Input: RouteInput>(
        _ method: HTTPMethod, _ path: String, description: String = "", returns: Any.Type? = nil,
        _ inputs: repeat each Input,
        handler: @escaping @Sendable (repeat (each Input).Value) throws -> any StreamingBody
    ) {
        self.init(
            method, path, description: description, inputs: Self.declarations(repeat each inputs),
            result: .stream(returns)
        ) { context in
            let body = try handler(repeat (each inputs).value(in: context))
            return HTTPResponse(status: .ok, headers: Route.jsonHeaders, body: .stream(body))
        }
    }
}

/// What a route's handler returns, for the documentation.
@usableFromInline
enum ResultDeclaration: Sendable {
    /// A JSON value of this type.
    case value(Any.Type)
    /// Nothing (204).
    case none
    /// A response built by the handler, of this documented type if known.
    case response(Any.Type?)
    /// A stream of this documented type if known.
    case stream(Any.Type?)
    /// A ``RunnableResult``, of this documented type if known.
    case runnable(Any.Type?)
    /// A ``RunnableResult`` of a route declared at run time, described if known.
    case described(ResultDescription?)
}
