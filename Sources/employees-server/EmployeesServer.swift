import ArgumentParser
import EmployeesService
import Foundation
import Logging
import PostgreSQL
import WebService

/// Serves the employees sample database over HTTP.
///
/// ```
/// employees-server --port 8080 --database-url postgresql:///employees
/// ```
@main
struct EmployeesServer: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "employees-server",
        abstract: "Serves the employees sample database as a REST API.",
        discussion: """
            The database is reached through --database-url, else the DATABASE_URL environment \
            variable, else libpq's PG* variables (PGHOST, PGPORT, PGDATABASE, PGUSER, ...). \
            Every option can also be given in the environment (EMPLOYEES_PORT, EMPLOYEES_HOST, ...).
            """
    )

    enum DateFormat: String, ExpressibleByArgument, CaseIterable {
        case iso8601 = "iso8601"
        case epochMilliseconds = "epoch-milliseconds"
    }

    @Option(help: "Address to listen on (env EMPLOYEES_HOST).")
    var host: String = environment("EMPLOYEES_HOST") ?? "127.0.0.1"

    @Option(help: "Port to listen on (env EMPLOYEES_PORT).")
    var port: Int = environment("EMPLOYEES_PORT").flatMap { Int($0) } ?? 8080

    @Option(help: "libpq connection string or postgresql:// URL (env DATABASE_URL; default: the PG* variables).")
    var databaseURL: String = environment("DATABASE_URL") ?? ""

    @Option(help: "Most database connections open at once (env EMPLOYEES_POOL_SIZE).")
    var poolSize: Int = environment("EMPLOYEES_POOL_SIZE").flatMap { Int($0) } ?? 16

    @Option(help: "Seconds a request waits for a free database connection before 503 (env EMPLOYEES_ACQUIRE_TIMEOUT).")
    var acquireTimeout: Double = environment("EMPLOYEES_ACQUIRE_TIMEOUT").flatMap { Double($0) } ?? 5

    @Option(help: "Seconds a query may run before it is cancelled and answered 504; 0 for no limit (env EMPLOYEES_STATEMENT_TIMEOUT).")
    var statementTimeout: Double = environment("EMPLOYEES_STATEMENT_TIMEOUT").flatMap { Double($0) } ?? 30

    @Option(help: "How dates are written: iso8601 (\"1995-12-01\") or epoch-milliseconds, as HTTP-RPC did (env EMPLOYEES_DATE_FORMAT).")
    var dateFormat: DateFormat = environment("EMPLOYEES_DATE_FORMAT").flatMap { DateFormat(rawValue: $0) } ?? .iso8601

    @Option(help: "Most client connections at once (env EMPLOYEES_MAX_CONNECTIONS).")
    var maxConnections: Int = environment("EMPLOYEES_MAX_CONNECTIONS").flatMap { Int($0) } ?? 512

    @Option(help: "Seconds a client connection may stay idle, or take to send a request's header fields, before it is closed (env EMPLOYEES_CONNECTION_TIMEOUT).")
    var connectionTimeout: Int = environment("EMPLOYEES_CONNECTION_TIMEOUT").flatMap { Int($0) } ?? 30

    @Option(help: "Seconds a stop (SIGTERM, SIGINT) lets requests in flight finish (env EMPLOYEES_SHUTDOWN_TIMEOUT).")
    var shutdownTimeout: Double = environment("EMPLOYEES_SHUTDOWN_TIMEOUT").flatMap { Double($0) } ?? 10

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical (env LOG_LEVEL).")
    var logLevel: String = environment("LOG_LEVEL") ?? "info"

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0 to 65535.") }
        guard poolSize >= 1 else { throw ValidationError("--pool-size must be at least 1.") }
        guard acquireTimeout > 0 else { throw ValidationError("--acquire-timeout must be more than 0.") }
        guard statementTimeout >= 0 else { throw ValidationError("--statement-timeout must be 0 or more.") }
        guard connectionTimeout >= 1 else { throw ValidationError("--connection-timeout must be at least 1.") }
        guard shutdownTimeout >= 0 else { throw ValidationError("--shutdown-timeout must be 0 or more.") }
        guard maxConnections >= 1 else { throw ValidationError("--max-connections must be at least 1.") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level \(logLevel) is not a log level.") }
    }

    func run() throws {
        LoggingSystem.bootstrap(StandardErrorLogHandler.init)
        var logger = Logger(label: "employees-server")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info

        let pool = ConnectionPool(ConnectionPool.Configuration(
            conninfo: databaseURL,
            size: poolSize,
            acquireTimeout: .milliseconds(Int(acquireTimeout * 1000)),
            statementTimeout: statementTimeout > 0 ? .milliseconds(Int(statementTimeout * 1000)) : nil
        ))
        let options = JSONRenderingOptions(dateFormat: dateFormat == .iso8601 ? .iso8601 : .epochMilliseconds)
        let router = WebServiceRouter(services: [
            EmployeesService(pool: pool, options: options),
            DepartmentsService(pool: pool, options: options),
            HealthService(pool: pool),
            MathService(),
        ], logger: logger)

        var configuration = HTTPServer.Configuration()
        configuration.host = host
        configuration.port = port
        configuration.maximumConnections = maxConnections
        configuration.connectionTimeout = connectionTimeout
        configuration.shutdownTimeout = shutdownTimeout
        let server = HTTPServer(configuration: configuration, logger: logger) { router.respond(to: $0) }
        try server.start()
        logger.info("Serving http://\(host):\(server.port)/ (pool of \(poolSize) connections)")
        server.runUntilSignalled()
        pool.close()
        logger.info("Stopped")
    }
}

private func environment(_ name: String) -> String? {
    guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { return nil }
    return value
}
