import FoundationEssentials
import HTTPServer
import Logging

/// Something a route's handler receives: a ``Parameter``, a ``PathVariable``,
/// a ``Body``, or the ``Request`` itself. Each input both produces its handler argument and
/// describes itself for `?api`.
public protocol RouteInput<Value>: Sendable {
    associatedtype Value
    /// What `?api` and the overload choice know about this input: one
    /// declaration per argument it reads.
    var declarations: [InputDeclaration] { get }
    /// Produces the handler's argument for one request.
    func value(in context: RoutedRequest) throws -> Value
}

/// How a ``RouteInput`` presents itself to the router and the documentation.
public struct InputDeclaration: Sendable {
    enum Kind: Sendable {
        /// A named argument, or a named path variable of the same name, with
        /// its default and example as a request would send them.
        case argument(name: String, type: any ParameterValue.Type, defaultTexts: [String]?, exampleTexts: [String]?)
        /// A positional path variable (`?`).
        case pathVariable(index: Int, type: any ParameterValue.Type)
        /// The whole request body as JSON.
        case body(type: Any.Type)
        /// Not an argument at all (the request).
        case request
        /// A named argument, or a named path variable of the same name, of
        /// a ``RuntimeParameter``: its type known only at run time.
        case runtimeArgument(RuntimeArgument)
    }

    /// A ``RuntimeParameter`` as the documentation sees it.
    struct RuntimeArgument: Sendable {
        let name: String
        let type: ValueType
        let defaultText: String?
        let exampleText: String?
        let required: Bool
        let pattern: String?
        /// The type of the column a filter compares, for a filter (``RuntimeParameter/filteredType``).
        let filteredType: ValueType?
        /// Whether it chooses the result's members (``RuntimeParameter/choosesMembers``).
        let choosesMembers: Bool
    }

    let kind: Kind
    let description: String
    /// What the input's values must be beyond their type, as it enforces them.
    var constraints: ArgumentConstraints = .none
    /// Whether the input reads the arguments no other input of its route
    /// names (a query language's: ``RoutedRequest/otherArguments``), so
    /// that the route takes arguments of any name.
    var acceptsOtherArguments = false
    /// Whether the argument it names is read by the route's input that
    /// accepts other arguments (a query language's `select`, say), not by
    /// this input, which only documents it.
    var isReadAsOtherArgument = false
    /// Whether the input reads the request's body as it is, so that no
    /// member of it is an argument.
    var readsBody = false

    /// The declaration of an input that reads the arguments no other input
    /// of its route names (``RoutedRequest/otherArguments``): not an
    /// argument itself, it lets the route take arguments of any name.
    ///
    /// ```swift
    /// public var declarations: [InputDeclaration] { [.otherArguments(description: "Filters in PostgREST's syntax.")] }
    /// ```
    public static func otherArguments(description: String = "") -> InputDeclaration {
        InputDeclaration(kind: .request, description: description, acceptsOtherArguments: true)
    }
}

/// A request matched to a route: what the route's inputs read their
/// values from, and what a ``RunnableResult`` is run for (its runner
/// answers with it, reports its errors with it, and reads its role, its
/// event loop and its header fields from it).
///
/// A class: runners capture it in the closures of deferred responses, and
/// a structure of this size would retain each of its strings and arrays,
/// several times per request.
public final class RoutedRequest: Sendable {
    /// The request being answered.
    public let request: HTTPRequest
    /// The chosen route's path pattern and the request's path below the
    /// service, which hold the values of the path variables.
    let pattern: RoutePattern
    let path: ArraySlice<String>
    let arguments: [String: [ArgumentInput]]
    /// The runner the route's ``RunnableResult`` needs, found when the route was mounted.
    @usableFromInline let runner: (any Sendable)?
    /// The route's parameters that take a list of enumeration values (a
    /// `CommaList` such as `details`): what asks for nested details.
    public let detailParameters: [String]
    /// The `Cache-Control` the route declares for its successful `GET` responses.
    public let cacheControl: String?
    /// The router's logger.
    public let logger: Logger
    /// The names of the arguments the route's inputs declare.
    let declaredNames: Set<String>
    /// What the request may ask for (the router's ``RequestLimits``): a
    /// runner refuses a request past them before it runs anything.
    public let limits: RequestLimits

    init(
        request: consuming HTTPRequest, pattern: RoutePattern, path: ArraySlice<String>, arguments: [String: [ArgumentInput]],
        runner: (any Sendable)?, detailParameters: [String], cacheControl: String?, logger: Logger, declaredNames: Set<String> = [],
        limits: RequestLimits = RequestLimits()
    ) {
        self.declaredNames = declaredNames
        self.limits = limits
        self.request = request
        self.pattern = pattern
        self.path = path
        self.arguments = arguments
        self.runner = runner
        self.detailParameters = detailParameters
        self.cacheControl = cacheControl
        self.logger = logger
    }

    /// A request routed to nothing in particular, for running a
    /// ``RunnableResult`` outside a router (tests, tools).
    ///
    /// ```swift
    /// let routed = RoutedRequest(HTTPRequest(method: .get, rawPath: "/products", pathSegments: ["products"]))
    /// let response = query.response(runner: runner, request: routed)
    /// ```
    public convenience init(_ request: HTTPRequest, logger: Logger = Logger(label: "web")) {
        self.init(
            request: request, pattern: RoutePattern("/"), path: [], arguments: [:], runner: nil, detailParameters: [],
            cacheControl: nil, logger: logger)
    }

    /// The request's method.
    public var method: HTTPMethod { request.method }
    /// The request's path, as sent.
    public var rawPath: String { request.rawPath }
    /// The request's query string, as sent, without `?`; `nil` without one.
    public var rawQuery: String? { request.rawQuery }
    /// The request's header fields.
    public var headers: HTTPHeaders { request.headers }
    /// The role the request acts as (see `HTTPRequest.role`); `nil`: the server's own.
    public var role: String? { request.role }

    /// The query string's arguments that no input of the route declares,
    /// by name in the order their names first appear, each with its
    /// values in order: what an input that accepts other arguments reads
    /// (a query language's filters, say).
    ///
    /// ```swift
    /// // GET /people?age=gte.18&order=age&age=lt.65   (order declared)
    /// routed.otherArguments   // [("age", ["gte.18", "lt.65"])]
    /// ```
    public var otherArguments: [(name: String, values: [String])] {
        var arguments: [(name: String, values: [String])] = []
        var positions: [String: Int] = [:]
        for item in request.queryItems where !declaredNames.contains(item.name) {
            if let position = positions[item.name] {
                arguments[position].values.append(item.value)
            } else {
                positions[item.name] = arguments.count
                arguments.append((item.name, [item.value]))
            }
        }
        return arguments
    }

    /// Whether the request only reads: a `GET` or a `HEAD`. Runners run
    /// its statements read-only, and may send them to a replica.
    public var isRead: Bool { request.method == .get || request.method == .head }

    /// The problem response for `error`: its own status when it has one
    /// (``HTTPErrorConvertible``), else 500, logged with an error id.
    ///
    /// ```swift
    /// promise.succeed(request.response(for: error))
    /// ```
    public func response(for error: any Error) -> HTTPResponse {
        HTTPError.response(for: error, method: request.method, path: request.rawPath, logger: logger)
    }

    /// `response` with the route's `Cache-Control` and, when its body is
    /// whole, its `ETag`; `304` when the request already holds it (see
    /// `HTTPResponse.validated(for:headers:cacheControl:)`).
    ///
    /// ```swift
    /// promise.succeed(request.validated(HTTPResponse(json: object)))
    /// ```
    public func validated(_ response: consuming HTTPResponse) -> HTTPResponse {
        response.validated(for: request.method, headers: request.headers, cacheControl: cacheControl)
    }
}

// MARK: - Parameter

/// A named argument of a route, from the query string, a form field, a
/// member of a JSON object body, or the path variable `?:name`.
///
/// ```swift
/// Parameter<Double>("a", description: "The first number.")
/// Parameter<Int>("limit", default: 100)
/// Parameter<[Detail]>("details")            // repeated names or a JSON array
/// Parameter<UploadedFile>("file")           // a multipart file part
/// Parameter<Int>("id", example: 10004)      // shown by ?api's example request and in OpenAPI
/// Parameter<Int>("places", default: 0, constraints: .range(0...10))   // refused outside, stated in OpenAPI
/// ```
///
/// The path variable `?:name` that ends a route's path may be left out when
/// its parameter is optional or has a default: `/?:id` with
/// `Parameter<Int?>("id")` also answers the path without it, where the
/// handler gets `nil`; the documentation shows both paths.
public struct Parameter<Value: ParameterValue>: RouteInput {
    public let name: String
    public let description: String
    /// What its values must be beyond their type: refused with a 400 and stated by the documentation.
    public let constraints: ArgumentConstraints
    private let defaultValue: Value?
    private let example: Value?

    /// A parameter that is required unless `Value` is an optional or array
    /// (a list that `constraints` asks values of is required too).
    /// `example` is a typical value, for the documentation.
    public init(_ name: String, example: Value? = nil, constraints: ArgumentConstraints = .none, description: String = "") {
        self.name = name
        self.description = description
        self.constraints = constraints
        self.defaultValue = nil
        self.example = example
    }

    /// An optional parameter that takes `default` when absent.
    public init(_ name: String, default: Value, example: Value? = nil, constraints: ArgumentConstraints = .none, description: String = "") {
        self.name = name
        self.description = description
        self.constraints = constraints
        self.defaultValue = `default`
        self.example = example
    }

    public var declarations: [InputDeclaration] {
        [
            InputDeclaration(
                kind: .argument(
                    name: name, type: Value.self, defaultTexts: defaultValue?.argumentTexts, exampleTexts: example?.argumentTexts),
                description: description, constraints: constraints
            )
        ]
    }

    public func value(in context: RoutedRequest) throws -> Value {
        let inputs: [ArgumentInput]
        if let pathValue = context.pattern.value(named: name, in: context.path) {
            inputs = [.text(pathValue)]
        } else {
            inputs = context.arguments.isEmpty ? [] : context.arguments[name] ?? []
        }
        if inputs.isEmpty { return try valueWhenAbsent() }
        let value: Value = try convert(inputs, parameter: name)
        if !constraints.isEmpty {
            do {
                try constraints.check(value)
            } catch {
                throw HTTPError.invalidArgument(error, parameter: name)
            }
        }
        return value
    }

    /// The default, or the type's value when absent, or a 400.
    ///
    /// Apart from `value(in:)`, which runs unspecialized: code that handles
    /// a `Value?` there looks up the metadata of `Optional<Value>` on every
    /// call, even when the argument is present.
    @inline(never)
    private func valueWhenAbsent() throws -> Value {
        if let defaultValue { return defaultValue }
        if !constraints.requiresValues, let value = Value.valueWhenAbsent { return value }
        throw HTTPError.missingArgument(name, type: Value.valueType)
    }
}

// MARK: - Path variable

/// A positional path variable (`?`) of the route's path, by index among the
/// path's variables.
///
/// ```swift
/// Route(.get, "/?/?", PathVariable<Int>(0), PathVariable<String>(1)) { year, name in ... }
/// ```
public struct PathVariable<Value: ParameterValue>: RouteInput {
    public let index: Int
    public let description: String

    public init(_ index: Int, description: String = "") {
        self.index = index
        self.description = description
    }

    public var declarations: [InputDeclaration] {
        [InputDeclaration(kind: .pathVariable(index: index, type: Value.self), description: description)]
    }

    public func value(in context: RoutedRequest) throws -> Value {
        guard let pathValue = context.pattern.value(at: index, in: context.path) else {
            // The route's code declares more variables than its path has:
            // a 500 (logged), never a trap, for whatever path was asked.
            throw RouteDeclarationError(description: "PathVariable(\(index)) is beyond the variables of the route's path")
        }
        return try convert([.text(pathValue)], parameter: "\(index)")
    }
}

/// A route whose inputs do not fit its path: answered 500 and logged.
struct RouteDeclarationError: Error, CustomStringConvertible {
    let description: String
}

// MARK: - Body

/// The whole request body, decoded from JSON (ISO 8601 dates).
///
/// A JSON body given to a route with a `Body` input is not split into
/// arguments; query-string parameters still work beside it.
///
/// ```swift
/// Route(.post, "/", Body<Employee>(description: "The new employee.")) { employee in try insert(employee) }
/// ```
public struct Body<Value: Decodable>: RouteInput {
    public let description: String

    public init(description: String = "") {
        self.description = description
    }

    public var declarations: [InputDeclaration] {
        [InputDeclaration(kind: .body(type: Value.self), description: description)]
    }

    public func value(in context: RoutedRequest) throws -> Value {
        let request = context.request
        guard !request.body.isEmpty else {
            throw HTTPError(.badRequest, detail: "A JSON body (\(String(describing: Value.self))) is required.")
        }
        if let contentType = request.contentType, contentType != "application/json", !contentType.hasSuffix("+json") {
            throw HTTPError(.unsupportedMediaType, detail: "The body must be application/json, not \(contentType).")
        }
        // Foundation's decoder is lenient (trailing commas, for one): the
        // body must first pass the strict parser.
        do {
            _ = try JSONValue.parse(request.body)
        } catch {
            throw HTTPError(.badRequest, detail: "The body is not valid JSON: \(error).")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = ISO8601.parse(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "Expected an ISO 8601 date, got \"\(text)\".")
            }
            return date
        }
        do {
            return try decoder.decode(Value.self, from: Data(request.body))
        } catch let error as DecodingError {
            throw HTTPError(.badRequest, detail: "The body is not a valid \(String(describing: Value.self)): \(error.summary)")
        }
    }
}

// MARK: - Request

/// The request itself, for a handler that reads headers or the raw body.
///
/// ```swift
/// Route(.get, "/agent", Request()) { request in request.headers["User-Agent"] ?? "" }
/// ```
public struct Request: RouteInput {
    public init() {}

    public var declarations: [InputDeclaration] {
        [InputDeclaration(kind: .request, description: "")]
    }

    public func value(in context: RoutedRequest) -> HTTPRequest {
        context.request
    }
}

// MARK: - Conversion

private func convert<Value: ParameterValue>(_ inputs: [ArgumentInput], parameter: String) throws(HTTPError) -> Value {
    do {
        return try Value.convert(inputs)
    } catch {
        throw HTTPError.invalidArgument(error, parameter: parameter)
    }
}

extension DecodingError {
    /// Where and why decoding failed, without the underlying error chain.
    var summary: String {
        func path(_ context: Context) -> String {
            context.codingPath.isEmpty
                ? "" : " at \(context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: "."))"
        }
        switch self {
        case .typeMismatch(let type, let context):
            return "expected \(type)\(path(context))."
        case .valueNotFound(let type, let context):
            return "missing \(type) value\(path(context))."
        case .keyNotFound(let key, let context):
            return "missing member \"\(key.stringValue)\"\(path(context))."
        case .dataCorrupted(let context):
            return context.debugDescription + path(context)
        @unknown default:
            return "invalid JSON."
        }
    }
}
