import HTTPServer
import PostgreSQL
import PostgreSQLWebService
import Synchronization
import WebService

/// Liveness and readiness for load balancers and orchestrators;
/// ``ServerProgram`` mounts it beside the program's services.
///
/// ```
/// GET /health/live    204 while the process serves requests
/// GET /health/ready   204 while the database answers, else 503 with Retry-After
/// ```
///
/// Readiness never waits in line for a connection: a probe must answer
/// within its own timeout even when every connection is busy. It runs
/// `SELECT 1` on a connection that is free (or can be opened) now; when
/// every connection is in use, the pool is working, and the server is
/// ready if one of them came back healthy within the acquire timeout
/// (else the database has stopped answering, and it is not). While the
/// server drains before a stop (``Drain``), readiness is 503 whatever the
/// database says, so that the load balancer sends the traffic elsewhere.
public struct HealthService: WebService {
    public let path = "/health"
    public let description = "Liveness and readiness probes."

    private let pool: ConnectionPool
    private let drain: Drain

    /// Probes of `pool`, not ready once `drain` has begun.
    ///
    /// ```swift
    /// let drain = HealthService.Drain()
    /// let health = HealthService(pool: pool, drain: drain)
    /// drain.begin()   // GET /health/ready answers 503 from now on
    /// ```
    public init(pool: ConnectionPool, drain: Drain = Drain()) {
        self.pool = pool
        self.drain = drain
    }

    public var routes: [Route] {
        Route(.get, "/live", description: "Answers 204 as long as the service is running.") { () -> Void in }

        Route(
            .get, "/ready",
            description:
                "Answers 204 when the database answers a query (or, every connection busy, has just answered one), 503 otherwise and while the server drains before a stop."
        ) { () throws -> Void in
            if drain.hasBegun {
                throw HTTPError(.serviceUnavailable, detail: "The server is stopping.")
            }
            do {
                if try pool.withConnectionIfAvailable({ try $0.execute("SELECT 1") }) != nil { return }
                let statistics = pool.statistics
                if let since = statistics.sinceLastRelease, since <= pool.configuration.acquireTimeout { return }
                throw HTTPError(
                    .serviceUnavailable,
                    detail: "Every database connection is busy and none has come back for a while.",
                    headers: ["Retry-After": "1"])
            } catch {
                // Whatever went wrong, the answer is "not ready, ask again".
                if let problem = (error as? HTTPError) ?? (error as? any HTTPErrorConvertible)?.httpError,
                    problem.status == .serviceUnavailable, problem.headers["Retry-After"] != nil
                {
                    throw problem
                }
                throw HTTPError(.serviceUnavailable, detail: "The database is not ready.", headers: ["Retry-After": "1"])
            }
        }
    }

    /// Whether the server has begun to drain before a stop: set once, by
    /// the server on SIGTERM (`--drain-seconds`), read by every readiness probe.
    public final class Drain: Sendable {
        private let begun = Atomic<Bool>(false)

        /// A drain not begun.
        public init() {}

        /// Turns readiness to 503 for good.
        public func begin() {
            begun.store(true, ordering: .relaxed)
        }

        /// Whether ``begin()`` was called.
        public var hasBegun: Bool {
            begun.load(ordering: .relaxed)
        }
    }
}
