import EmployeesService
#if canImport(Glibc)
import Glibc
#endif
import Logging
import PostgreSQL
import PostgreSQLWebService
import WebService

/// Serves the employees sample database over HTTP.
///
/// ```
/// employees-server --port 8080 --database-url postgresql:///employees
/// ```
@main
enum EmployeesServer {
    static func main() {
        let command: ServerOptions.Command
        do {
            command = try ServerOptions.parse(Array(CommandLine.arguments.dropFirst()), environment: environment)
        } catch {
            printError("Error: \(error)\nUsage: employees-server [--<option> <value>] ... (--help lists the options)")
            exit(64)  // EX_USAGE
        }
        switch command {
        case .help(let defaults):
            print(ServerOptions.help(defaults: defaults), terminator: "")
        case .serve(let options):
            do {
                try run(options)
            } catch {
                printError("Error: \(error)")
                exit(1)
            }
        }
    }

    static func run(_ options: ServerOptions) throws {
        LoggingSystem.bootstrap(StandardErrorLogHandler.init)
        var logger = Logger(label: "employees-server")
        logger.logLevel = Logger.Level(rawValue: options.logLevel) ?? .info

        let pool = ConnectionPool(ConnectionPool.Configuration(
            conninfo: options.databaseURL,
            size: options.poolSize,
            acquireTimeout: .milliseconds(Int(options.acquireTimeout * 1000)),
            statementTimeout: options.statementTimeout > 0 ? .milliseconds(Int(options.statementTimeout * 1000)) : nil,
            pipelineConnections: options.pipelineConnections
        ))
        let rendering = JSONRenderingOptions(dateFormat: options.dateFormat == .iso8601 ? .iso8601 : .epochMilliseconds)
        let router = WebServiceRouter(services: [
            EmployeesService(),
            DepartmentsService(),
            HealthService(pool: pool),
            MathService(),
        ], runners: [QueryRunner(pool: pool, options: rendering)], logger: logger,
        openAPI: OpenAPIInfo(title: "Employees", description: "The employees sample database as a REST API."))

        var configuration = HTTPServer.Configuration()
        configuration.host = options.host
        configuration.port = options.port
        configuration.maximumConnections = options.maxConnections
        configuration.connectionTimeout = options.connectionTimeout
        configuration.shutdownTimeout = options.shutdownTimeout
        configuration.threading = .eventLoops(threads: options.eventLoops)
        let server = HTTPServer(configuration: configuration, logger: logger) { router.respond(to: $0) }
        try server.start()
        logger.info("Serving http://\(options.host):\(server.port)/ (pool of \(options.poolSize) connections)")
        StandardErrorOutput.shared.flush()  // Scripts wait for this line; the access log can wait 50 ms.
        server.runUntilSignalled()
        pool.close()
        logger.info("Stopped")
        StandardErrorOutput.shared.flush()
    }
}

/// The value of one environment variable, `nil` when unset or empty.
/// `getenv` rather than `ProcessInfo.processInfo.environment`, which copies
/// the whole environment into a dictionary on every call.
private func environment(_ name: String) -> String? {
    guard let value = getenv(name), value.pointee != 0 else { return nil }
    return String(cString: value)
}

/// Writes one line to standard error, after the log lines waiting to be written.
private func printError(_ line: String) {
    StandardErrorOutput.shared.flush()
    var text = line + "\n"
    text.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
}
