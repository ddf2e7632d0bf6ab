import FoundationEssentials
import HTTPServer
import Logging

/// Something a route's handler receives: a ``Parameter``, a ``PathVariable``,
/// a ``Body`` or the ``Request`` itself. Each input both produces its
/// handler argument and describes itself for `?api`.
public protocol RouteInput<Value>: Sendable {
    associatedtype Value
    /// What `?api` and the overload choice know about this input.
    var declaration: InputDeclaration { get }
    /// Produces the handler's argument for one request.
    func value(in context: RouteContext) throws -> Value
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
        case runtimeArgument(name: String, type: ValueType, defaultText: String?, required: Bool, pattern: String?)
    }

    let kind: Kind
    let description: String
    /// What the input's values must be beyond their type, as it enforces them.
    var constraints: ArgumentConstraints = .none
}

/// What a request supplies to the inputs of the route chosen for it.
public struct RouteContext: Sendable {
    /// The request being answered.
    public let request: HTTPRequest
    /// The chosen route's path pattern and the request's path below the
    /// service, which hold the values of the path variables.
    let pattern: RoutePattern
    let path: ArraySlice<String>
    let arguments: [String: [ArgumentInput]]
    /// The runner the route's ``RunnableResult`` needs, found when the route was mounted.
    @usableFromInline let runner: (any Sendable)?
    /// The route's parameters that take lists of enumeration values.
    let detailParameters: [String]
    /// The route's `Cache-Control`.
    let cacheControl: String?
    let logger: Logger
    /// What one request may ask for (the router's).
    let limits: RequestLimits

    /// What a ``RunnableResult`` reports its errors with.
    @usableFromInline var runRequest: RunRequest {
        RunRequest(
            method: request.method, path: request.rawPath, query: request.rawQuery, headers: request.headers,
            detailParameters: detailParameters, cacheControl: cacheControl, logger: logger, role: request.role, limits: limits)
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

    public var declaration: InputDeclaration {
        InputDeclaration(
            kind: .argument(name: name, type: Value.self, defaultTexts: defaultValue?.argumentTexts, exampleTexts: example?.argumentTexts),
            description: description, constraints: constraints
        )
    }

    public func value(in context: RouteContext) throws -> Value {
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

    public var declaration: InputDeclaration {
        InputDeclaration(kind: .pathVariable(index: index, type: Value.self), description: description)
    }

    public func value(in context: RouteContext) throws -> Value {
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

    public var declaration: InputDeclaration {
        InputDeclaration(kind: .body(type: Value.self), description: description)
    }

    public func value(in context: RouteContext) throws -> Value {
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

    public var declaration: InputDeclaration {
        InputDeclaration(kind: .request, description: "")
    }

    public func value(in context: RouteContext) -> HTTPRequest {
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
