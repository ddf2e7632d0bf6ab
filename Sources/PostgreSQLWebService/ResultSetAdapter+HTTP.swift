import HTTPServer
import Logging
import PostgreSQL
import WebService

extension ResultSetAdapter {
    /// The response of an object adapter run without blocking (see
    /// ``ResultSetAdapter/start(completion:)``): `200` with the row as a
    /// JSON object, `notFound`'s problem when there is no row, the
    /// failure's otherwise. For a handler of a ``Route/nonBlocking()``
    /// route.
    ///
    /// ```swift
    /// Route(.get, "/?:employeeNumber", returns: Employee.self, Parameter<Int>("employeeNumber")) { number in
    ///     ResultSetAdapter(pool, sql: sql, arguments: ["employeeNumber": number], shape: .object)
    ///         .objectResponse(notFound: HTTPError(.notFound, detail: "There is no employee number \(number)."))
    /// }.nonBlocking()
    /// ```
    public func objectResponse(notFound: HTTPError, method: HTTPMethod = .get, path: String = "", logger: Logger = Logger(label: "web")) -> HTTPResponse {
        HTTPResponse.later { promise in
            self.start { outcome in
                // On the pool's pipeline thread: the object is written already.
                switch outcome {
                case .success(true):
                    var object: [UInt8] = []
                    let written = Result { try self.write(into: &object) }
                    self.close()
                    if case .failure(let error) = written {
                        return promise.succeed(HTTPError.response(for: error, method: method, path: path, logger: logger))
                    }
                    promise.succeed(HTTPResponse(json: object))
                case .success(false):
                    self.close()
                    promise.succeed(notFound.response)
                case .failure(let error):
                    self.close()
                    promise.succeed(HTTPError.response(for: error, method: method, path: path, logger: logger))
                }
            }
        }
    }
}
