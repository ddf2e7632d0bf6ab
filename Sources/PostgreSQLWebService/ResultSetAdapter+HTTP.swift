import HTTPServer
import Logging
import PostgreSQL
import WebService

extension ResultSetAdapter {
    /// The response of an object adapter run without blocking (see
    /// ``ResultSetAdapter/start(completion:)``): `200` with the row as a
    /// JSON object, `notFound()`'s problem when there is no row, the
    /// failure's otherwise. For a handler of a `Route.nonBlocking()` route.
    ///
    /// `notFound`, `path` and the logger are evaluated only when needed:
    /// nothing of them is built for a row that is found.
    ///
    /// ```swift
    /// Route(.get, "/?:employeeNumber", returns: Employee.self, Parameter<Int>("employeeNumber")) { number in
    ///     ResultSetAdapter(pool, sql: sql, arguments: ["employeeNumber": number], shape: .object)
    ///         .objectResponse(path: "/employees/\(number)") {
    ///             HTTPError(.notFound, detail: "There is no employee number \(number).")
    ///         }
    /// }.nonBlocking()
    /// ```
    public func objectResponse(
        method: HTTPMethod = .get, path: @escaping @autoclosure () -> String = "", logger: Logger? = nil,
        notFound: @escaping () -> HTTPError
    ) -> HTTPResponse {
        HTTPResponse.later { promise in
            self.start { outcome in
                // On the pool's pipeline thread: the object is written already.
                defer { self.close() }
                do {
                    guard try outcome.get() else { return promise.succeed(notFound().response) }
                    var object: [UInt8] = []
                    _ = try self.write(into: &object)
                    promise.succeed(HTTPResponse(json: object))
                } catch {
                    promise.succeed(HTTPError.response(
                        for: error, method: method, path: path(), logger: logger ?? Logger(label: "web")))
                }
            }
        }
    }
}
