import HTTPServer
import Locking

/// A reference to the ``WebServiceRouter`` that answers requests, which
/// another router can replace while the server runs: services reloaded
/// from files, say. Each request is answered whole by the router that was
/// current when it arrived; requests in flight finish on the old one.
///
/// ```swift
/// let router = SwappableRouter(try WebServiceRouter(services: try loadServices(), runners: [runner]))
/// let server = HTTPServer(configuration: configuration) { router.respond(to: $0) }
/// // later, on SIGHUP:
/// router.swap(to: try WebServiceRouter(services: try loadServices(), runners: [runner]))
/// ```
public final class SwappableRouter: Sendable {
    private let current: Locked<WebServiceRouter>

    /// A reference to `router`.
    public init(_ router: WebServiceRouter) {
        current = Locked(router)
    }

    /// The router that answers new requests.
    public var router: WebServiceRouter {
        current.withLock { $0 }
    }

    /// Makes `router` answer the requests that arrive from now on.
    public func swap(to router: WebServiceRouter) {
        current.withLock { $0 = router }
    }

    /// Answers one request with the current router (see ``WebServiceRouter/respond(to:)``).
    public func respond(to request: consuming HTTPRequest) -> HTTPResponse {
        router.respond(to: request)
    }
}
