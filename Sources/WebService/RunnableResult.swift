import HTTPServer
import Logging

/// A description of work that a route's handler returns and the router
/// runs: a database query, say. The handler says *what* to run; the runner,
/// which the router was given, decides *how* (on which thread or loop,
/// with which connection), so that a service never chooses threads.
///
/// A library defines the value and its runner once; services only return
/// values:
///
/// ```swift
/// Route(.get, "/?:id", returns: Product.self, Parameter<Int>("id")) { id in
///     Query.object("SELECT ... WHERE id = :id", ["id": id], notFound: "No product \(id).")
/// }
///
/// let router = try WebServiceRouter(services: [ProductsService()], runners: [QueryRunner(pool: pool)])
/// ```
public protocol RunnableResult: Sendable {
    /// What runs values of this type; one instance is given to the router.
    associatedtype Runner: Sendable

    /// The response for this value. Called on the server's event loop: it
    /// must not block. Work that blocks goes into an `HTTPResponse.blocking`
    /// response; work that completes elsewhere into `HTTPResponse.later`.
    func response(runner: Runner, request: RunRequest) -> HTTPResponse
}

/// The request a ``RunnableResult`` is run for: what its errors are
/// reported and logged with.
///
/// A class, not a structure: runners capture it in the closures of
/// deferred responses, and a copy of a structure with a dozen strings and
/// arrays would retain each of them, several times per request.
public final class RunRequest: Sendable {
    /// The request's method.
    public let method: HTTPMethod
    /// The request's path, as sent.
    public let path: String
    /// The request's query string, as sent, without `?`; `nil` without one.
    public let query: String?
    /// The request's header fields.
    public let headers: HTTPHeaders
    /// The route's parameters that take a list of enumeration values (a
    /// `CommaList` such as `details`): what asks for nested details.
    public let detailParameters: [String]
    /// The `Cache-Control` the route declares for its successful `GET` responses.
    public let cacheControl: String?
    /// The router's logger.
    public let logger: Logger
    /// The role the request acts as (see `HTTPRequest.role`); `nil`: the server's own.
    public let role: String?
    /// What the request may ask for (the router's ``RequestLimits``): a
    /// runner refuses a request past them before it runs anything.
    public let limits: RequestLimits

    /// Whether the request only reads: a `GET` or a `HEAD`. Runners may
    /// send it to a replica, or run it in a read-only transaction.
    public var isRead: Bool { method == .get || method == .head }

    /// A request to run for; the router makes them.
    ///
    /// ```swift
    /// RunRequest(method: .get, path: "/products", query: "limit=10", headers: [:], detailParameters: ["details"], logger: logger)
    /// RunRequest(method: .get, path: "/products", query: nil, headers: [:], logger: logger, role: "payroll")
    /// ```
    public init(
        method: HTTPMethod, path: String, query: String?, headers: HTTPHeaders, detailParameters: [String] = [],
        cacheControl: String? = nil, logger: Logger, role: String? = nil, limits: RequestLimits = RequestLimits()
    ) {
        self.role = role
        self.limits = limits
        self.cacheControl = cacheControl
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.detailParameters = detailParameters
        self.logger = logger
    }

    /// The problem response for `error`: its own status when it has one
    /// (``HTTPErrorConvertible``), else 500, logged with an error id.
    ///
    /// ```swift
    /// promise.succeed(request.response(for: error))
    /// ```
    public func response(for error: any Error) -> HTTPResponse {
        HTTPError.response(for: error, method: method, path: path, logger: logger)
    }

    /// `response` with the route's `Cache-Control` and, when its body is
    /// whole, its `ETag`; `304` when the request already holds it (see
    /// `HTTPResponse.validated(for:headers:cacheControl:)`).
    ///
    /// ```swift
    /// promise.succeed(request.validated(HTTPResponse(json: object)))
    /// ```
    public func validated(_ response: consuming HTTPResponse) -> HTTPResponse {
        response.validated(for: method, headers: headers, cacheControl: cacheControl)
    }
}
