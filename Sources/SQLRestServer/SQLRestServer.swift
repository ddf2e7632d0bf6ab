#if canImport(Glibc)
import Glibc
#endif
import HTTPServer
import Logging
import PostgreSQL
import PostgreSQLWebService
import WebService

/// A program that serves web services over a PostgreSQL database, whole:
/// its command-line and environment options, the log, the connection
/// pool, the query runner, the health routes, the HTTP server on event
/// loops, and a graceful stop on SIGINT or SIGTERM.
///
/// A program's `main` names itself, the prefix of its environment
/// variables and its services:
///
/// ```swift
/// @main
/// enum ProductsServer {
///     static func main() {
///         SQLRestServer(name: "products-server", overview: "Serves the products database.",
///                       environmentPrefix: "PRODUCTS_", services: [ProductsService()]).run()
///     }
/// }
/// ```
///
/// `products-server --help` then lists the options: `--port` (or
/// `PRODUCTS_PORT`), `--database-url` (or `DATABASE_URL`, else libpq's
/// `PG*` variables), `--log-level` (or `LOG_LEVEL`), and the others of
/// ``ServerOptions``. Besides the services, the server answers
/// `GET /health/live` and `GET /health/ready` (``HealthService``) and `GET /`,
/// the list of services.
public struct SQLRestServer {
    /// The program's name, in `--help`, in usage errors and on every log line.
    public let name: String
    /// One line on what the program serves, at the top of `--help`.
    public let overview: String
    /// The beginning of the option variables' names: `EMPLOYEES_` reads
    /// `EMPLOYEES_PORT`. `DATABASE_URL` and `LOG_LEVEL` have none.
    public let environmentPrefix: String
    private let makeServices: (ServerOptions, ConnectionPool) throws -> [any WebService]

    /// A server for `services`.
    ///
    /// ```swift
    /// SQLRestServer(name: "employees-server", overview: "Serves the employees sample database as a REST API.",
    ///               environmentPrefix: "EMPLOYEES_", services: [EmployeesService(), MathService()])
    /// ```
    public init(name: String, overview: String, environmentPrefix: String, services: [any WebService]) {
        self.init(name: name, overview: overview, environmentPrefix: environmentPrefix) { _, _ in services }
    }

    /// A server for the services that `services` makes, once the options
    /// are read and the pool exists (for services that depend on an option,
    /// or hold the pool); a thrown error stops the program before it serves.
    ///
    /// ```swift
    /// SQLRestServer(name: "reports", overview: "Serves reports.", environmentPrefix: "REPORTS_") { options, pool in
    ///     [ReportsService(pool: pool)]
    /// }
    /// ```
    public init(
        name: String, overview: String, environmentPrefix: String,
        services: @escaping (ServerOptions, ConnectionPool) throws -> [any WebService]
    ) {
        self.name = name
        self.overview = overview
        self.environmentPrefix = environmentPrefix
        self.makeServices = services
    }

    /// Reads the options, serves until SIGINT or SIGTERM, lets the requests
    /// in flight finish (`--shutdown-timeout`), and exits: 0 after a stop or
    /// `--help`, 64 (`EX_USAGE`) for a wrong option, 1 when the server
    /// cannot start (a port in use, say).
    ///
    /// - Parameters:
    ///   - arguments: the command line without the program's name.
    ///   - environment: the variables to read; `nil`, the process's own.
    ///
    /// ```swift
    /// server.run()                                            // the process's command line
    /// server.run(arguments: ["--port", "0"], environment: [:])  // no variables at all
    /// ```
    public func run(arguments: [String] = Array(CommandLine.arguments.dropFirst()), environment: [String: String]? = nil) -> Never {
        let command: ServerOptions.Command
        do {
            command = try ServerOptions.parse(arguments, environmentPrefix: environmentPrefix) { variable in
                guard let environment else { return processEnvironment(variable) }
                return environment[variable]
            }
        } catch {
            printError("Error: \(error)\nUsage: \(name) [--<option> <value>] ... (--help lists the options)")
            exit(64)  // EX_USAGE
        }
        switch command {
        case .help(let defaults):
            print(ServerOptions.help(defaults: defaults, program: name, overview: overview,
                                     environmentPrefix: environmentPrefix), terminator: "")
        case .serve(let options):
            do {
                try serve(options)
            } catch {
                printError("Error: \(error)")
                exit(1)
            }
        }
        exit(0)
    }

    // MARK: - Serving

    /// Serves with `options` until SIGINT or SIGTERM, then stops gracefully.
    private func serve(_ options: ServerOptions) throws {
        LoggingSystem.bootstrap(StandardErrorLogHandler.init)
        var logger = Logger(label: name)
        logger.logLevel = Logger.Level(rawValue: options.logLevel) ?? .info

        let pool = ConnectionPool(options.poolConfiguration)
        let services = try makeServices(options, pool) + [HealthService(pool: pool)]
        let runner = QueryRunner(pool: pool, options: JSONRenderingOptions(dateFormat: options.dateFormat), maxRows: options.maxRows)
        let router = WebServiceRouter(
            services: services, runners: [runner], logger: logger,
            openAPI: OpenAPIInfo(title: name, description: overview))
        let server = HTTPServer(configuration: options.serverConfiguration, logger: logger) { router.respond(to: $0) }

        try server.start()
        logger.info("Serving http://\(options.host):\(server.port)/ (pool of \(options.poolSize) connections)")
        StandardErrorOutput.shared.flush()  // Scripts wait for this line; the access log may wait.
        server.runUntilSignalled()  // Stops accepting, and lets the requests in flight finish.
        pool.close()
        logger.info("Stopped")
        StandardErrorOutput.shared.flush()
    }
}

/// The value of one environment variable, `nil` when unset or empty.
/// `getenv` rather than `ProcessInfo.processInfo.environment`, which copies
/// the whole environment into a dictionary on every call.
private func processEnvironment(_ name: String) -> String? {
    guard let value = getenv(name), value.pointee != 0 else { return nil }
    return String(cString: value)
}

/// Writes one line to standard error, after the log lines waiting to be written.
private func printError(_ line: String) {
    StandardErrorOutput.shared.flush()
    var text = line + "\n"
    text.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
}
