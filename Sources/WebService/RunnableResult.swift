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
    func response(runner: Runner, request: RoutedRequest) -> HTTPResponse
}
