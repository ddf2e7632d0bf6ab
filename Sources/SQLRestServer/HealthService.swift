import PostgreSQL
import PostgreSQLWebService
import WebService

/// Liveness and readiness for load balancers and orchestrators;
/// ``SQLRestServer`` mounts it beside the program's services.
///
/// ```
/// GET /health/live    204 while the process serves requests
/// GET /health/ready   204 while the database answers, else 503 with Retry-After
/// ```
public struct HealthService: WebService {
    public let path = "/health"
    public let description = "Liveness and readiness probes."

    private let pool: ConnectionPool

    public init(pool: ConnectionPool) {
        self.pool = pool
    }

    public var routes: [Route] {
        Route(.get, "/live", description: "Answers 204 as long as the service is running.") { () -> Void in }

        Route(.get, "/ready", description: "Answers 204 when the database answers a query, 503 otherwise.") { () throws -> Void in
            do {
                _ = try pool.withConnection { try $0.execute("SELECT 1") }
            } catch {
                // Whatever went wrong, the answer is "not ready, ask again".
                if let problem = (error as? any HTTPErrorConvertible)?.httpError,
                   problem.status == .serviceUnavailable, problem.headers["Retry-After"] != nil {
                    throw problem
                }
                throw HTTPError(.serviceUnavailable, detail: "The database is not ready.", headers: ["Retry-After": "1"])
            }
        }
    }
}
