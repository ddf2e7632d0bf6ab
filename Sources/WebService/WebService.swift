import HTTPServer

/// A group of routes mounted under one path, in the style of HTTP-RPC's
/// `WebService`: the declaration is at once the dispatch table and the
/// `?api` documentation.
///
/// ```swift
/// struct MathService: WebService {
///     let path = "/math"
///     let description = "Math operations."
///
///     var routes: [Route] {
///         Route(.get, "/sum", description: "Returns the sum of two numbers.",
///               Parameter<Double>("a", description: "The first number."),
///               Parameter<Double>("b", description: "The second number.")) { a, b in a + b }
///         Route(.get, "/sum", description: "Returns the sum of a list of numbers.",
///               Parameter<[Double]>("values")) { values in values.reduce(0, +) }
///     }
/// }
/// ```
public protocol WebService: Sendable {
    /// Where the service is mounted (`/math`); not `/`, which lists the services.
    var path: String { get }
    /// What the service does, shown by `?api`.
    var description: String { get }
    /// The service's routes, relative to `path`. Read once, when the
    /// router is created.
    @RoutesBuilder var routes: [Route] { get }
}

/// Collects the routes of a ``WebService`` written one per line, with
/// `if`, `switch` and `for` allowed.
///
/// ```swift
/// var routes: [Route] {
///     Route(.get, "/") { "root" }
///     if allowsDeletion { Route(.delete, "/?:id", Parameter<Int>("id")) { id in try delete(id) } }
/// }
/// ```
@resultBuilder
public enum RoutesBuilder {
    public static func buildExpression(_ route: Route) -> [Route] { [route] }
    public static func buildExpression(_ routes: [Route]) -> [Route] { routes }
    public static func buildBlock(_ parts: [Route]...) -> [Route] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [Route]?) -> [Route] { part ?? [] }
    public static func buildEither(first part: [Route]) -> [Route] { part }
    public static func buildEither(second part: [Route]) -> [Route] { part }
    public static func buildArray(_ parts: [[Route]]) -> [Route] { parts.flatMap { $0 } }
}

/// An error that knows which HTTP error it should be reported as.
///
/// Lower layers conform their error types so that a handler can simply
/// `throw` them; the router asks for ``httpError`` and sends its response.
/// `nil` means the error is unexpected: the router answers 500 with a
/// generic detail and an error id, and logs the error under that id.
///
/// ```swift
/// extension DatabaseError: HTTPErrorConvertible {
///     public var httpError: HTTPError {
///         isUniqueViolation ? HTTPError(.conflict, detail: "The record already exists.")
///                           : HTTPError(.internalServerError, detail: "A database error occurred.")
///     }
/// }
/// ```
public protocol HTTPErrorConvertible: Error {
    /// The error to report to the client. It must not reveal internal details.
    var httpError: HTTPError? { get }
}

extension HTTPError: HTTPErrorConvertible {
    public var httpError: HTTPError? { self }
}

// A service declaration needs the HTTP types (`HTTPError`, `HTTPResponse`,
// `UploadedFile`) and `StreamingBody`; `import WebService` brings them.
@_exported import HTTPServer
@_exported import JSONStreaming
