/// Told of each request it answered once the request is over (body sent or
/// connection gone): a router's record of one route, for metrics. A
/// response carries it (``HTTPResponse/observer``); the server calls it on
/// the connection's event loop, so it must be quick and must not block.
///
/// ```swift
/// final class Tally: RequestObserver {
///     let count = Atomic<Int>(0)
///     func requestCompleted(_ request: CompletedRequest) { count.add(1, ordering: .relaxed) }
/// }
/// var response = HTTPResponse(text: "hello")
/// response.observer = tally
/// ```
public protocol RequestObserver: AnyObject, Sendable {
    /// Called once per request answered with a response that carried this observer.
    func requestCompleted(_ request: CompletedRequest)
    /// The pattern of the route that answered, as OpenAPI writes it
    /// (`/employees/{employeeNumber}`), when the observer knows one: the
    /// request's span is named after it.
    var routePattern: String? { get }
}

extension RequestObserver {
    /// No route known.
    public var routePattern: String? { nil }
}

/// What the server tells a ``RequestObserver`` of a request that is over.
public struct CompletedRequest: Sendable {
    /// The status sent; 0 when none was (the client went away first).
    public let status: Int
    /// The body bytes sent (for a HEAD request, none).
    public let bytesSent: Int
    /// Whether the body was streamed (chunked) rather than sent whole.
    public let isStreamed: Bool
    /// From the request line's arrival to the end of the response.
    public let duration: Duration
}
