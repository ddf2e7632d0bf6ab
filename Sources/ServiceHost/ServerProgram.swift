#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Authentication
import CoreMetrics
import HTTPServer
import Logging
import OTLPTracing
import PostgreSQL
import PostgreSQLWebService
import PrometheusMetrics
import RequestTracing
import SQLRestVersion
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
///         ServerProgram(name: "products-server", overview: "Serves the products database.",
///                       environmentPrefix: "PRODUCTS_", services: [ProductsService()]).run()
///     }
/// }
/// ```
///
/// `products-server --help` then lists the options: `--port` (or
/// `PRODUCTS_PORT`), `--database-url` (or `DATABASE_URL`, else libpq's
/// `PG*` variables), `--log-level` (or `LOG_LEVEL`), and the others of
/// ``ServerOptions``. Besides the services, the server answers
/// `GET /health/live` and `GET /health/ready` (``HealthService``),
/// `GET /metrics` (``MetricsService``, unless `--metrics off`) and `GET /`,
/// the list of services. Every response carries an `X-Request-Id`.
///
/// Authentication is off unless an option turns it on (`--auth-basic-file`,
/// `--auth-basic-postgres`, `--jwt-secret-file`, `--jwt-public-key-file`,
/// `--jwt-jwks-file`, `--anonymous-role`); each request's queries then run as its role.
/// `--tls-cert` and `--tls-key` serve HTTPS (TLS 1.2 and 1.3 unless
/// `--tls-priorities` or `--tls-priorities-file` says otherwise); SIGHUP
/// reads the files again. The server answers only for `--allowed-hosts`.
/// `<program> hash-password alice < password` prints a password file entry.
public struct ServerProgram {
    /// The program's name, in `--help`, in usage errors and on every log line.
    public let name: String
    /// One line on what the program serves, at the top of `--help`.
    public let overview: String
    /// The beginning of the option variables' names: `EMPLOYEES_` reads
    /// `EMPLOYEES_PORT`. `DATABASE_URL` and `LOG_LEVEL` have none.
    public let environmentPrefix: String
    let makeServices: (ServerOptions, ConnectionPool) throws -> [any WebService]
    private(set) var programOptions: [ServerOptions.Option] = []
    private(set) var commands: [any ParsableCommand.Type] = []
    private var reloadsOnHangup = false
    private var watchedFolder: @Sendable (ServerOptions) -> String? = { _ in nil }

    /// A server for `services`.
    ///
    /// ```swift
    /// ServerProgram(name: "employees-server", overview: "Serves the employees sample database as a REST API.",
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
    /// ServerProgram(name: "reports", overview: "Serves reports.", environmentPrefix: "REPORTS_") { options, pool in
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
    /// in flight finish (`--shutdown-timeout`), and exits: 0 after a stop,
    /// `--help` or `--version` (which prints `SwiftSQLRest.version`), 64
    /// (`EX_USAGE`) for a wrong option, 1 when the server cannot start (a
    /// port in use, say).
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
        var variable: @Sendable (String) -> String? = processEnvironment
        if let environment {
            variable = { name in environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        }
        let context = ServerArguments.Context(
            programOptions: programOptions, environmentPrefix: environmentPrefix, environment: variable)
        let program = ProgramCommand.Program(name: name, overview: overview, commands: commands)
        let status: Int32 = ServerArguments.$context.withValue(context) { () -> Int32 in
            ProgramCommand.$program.withValue(program) { () -> Int32 in runCommand(arguments, context: context) }
        }
        StandardErrorOutput.shared.flush()
        exit(status)
    }

    // MARK: - A program's own options and commands

    /// The server with an option of its own, `--name <name>` (or the
    /// variable `variable` under the program's prefix), which the closure
    /// that makes the services reads as `options[option: name]`. A
    /// required option missing is a usage error.
    ///
    /// ```swift
    /// ServerProgram(name: "sql-rest", overview: "…", environmentPrefix: "SQL_REST_") { options, pool in
    ///     try services(in: options[option: "services"]!, pool: pool)
    /// }
    /// .option("services", variable: "SERVICES", meaning: "Folder of the service files", required: true)
    /// ```
    /// With `flag`, the option is on or off: `--name` alone means `true`,
    /// and `options[option: name]` is `"true"` or `"false"`.
    public func option(_ name: String, variable: String, meaning: String, required: Bool = false, flag: Bool = false) -> ServerProgram {
        var server = self
        server.programOptions.append(
            ServerOptions.Option(program: name, variable: variable, meaning: meaning, required: required, isFlag: flag))
        return server
    }

    /// The server with a command besides `serve`: the program's first
    /// argument then names the command (`sql-rest check --services DIR`),
    /// which swift-argument-parser reads and runs instead of serving; the
    /// program then exits 0, or with the `ExitCode` it throws. A command
    /// that reads the server's options takes `@OptionGroup var server:
    /// ServerArguments` and conforms to ``ServerOptionsCommand``.
    ///
    /// ```swift
    /// struct Check: ServerOptionsCommand {
    ///     static let configuration = CommandConfiguration(commandName: "check", abstract: "Checks the service files.")
    ///     @OptionGroup var server: ServerArguments
    ///     func run() throws { if !check(server.options) { throw ExitCode(1) } }
    /// }
    ///
    /// server.command(Check.self).run()
    /// ```
    public func command(_ command: any ParsableCommand.Type) -> ServerProgram {
        var server = self
        server.commands.append(command)
        return server
    }

    /// The server that makes its services again on SIGHUP (a program that
    /// reads them from files reads them again) and serves the new ones
    /// from then on, the requests in flight finishing on the old ones. When
    /// making them fails, it logs the error and keeps the running ones.
    ///
    /// ```swift
    /// server.reloadingOnHangup().run()   // kill -HUP <pid> re-reads the files
    /// ```
    ///
    /// `watching` names, from the options, a folder whose changes reload
    /// the services too, as SIGHUP does (a file added, removed, or written);
    /// `nil`: only SIGHUP reloads.
    ///
    /// ```swift
    /// server.reloadingOnHangup { options in options[option: "watch"] == "true" ? options[option: "services"] : nil }
    /// ```
    public func reloadingOnHangup(watching: @escaping @Sendable (ServerOptions) -> String? = { _ in nil }) -> ServerProgram {
        var server = self
        server.reloadsOnHangup = true
        server.watchedFolder = watching
        return server
    }

    // MARK: - Serving

    /// Serves with `options` until SIGINT or SIGTERM, then stops gracefully.
    func serve(_ options: ServerOptions) throws {
        let logFormat = options.logFormat
        LoggingSystem.bootstrap { StandardErrorLogHandler(label: $0, format: logFormat) }
        var logger = Logger(label: name)
        logger.logLevel = Logger.Level(rawValue: options.logLevel) ?? .info

        // Before the services are made, so that the metrics they make count here.
        let metricsRegistry = options.metrics ? MetricsRegistry() : nil
        if let metricsRegistry { MetricsSystem.bootstrap(metricsRegistry) }
        let tracer =
            options.otlpEndpoint.isEmpty
            ? nil
            : try OTLPTracer(
                OTLPTracer.Configuration(endpoint: options.otlpEndpoint, serviceName: name, samplingRatio: options.traceSampling),
                logger: logger)
        if let tracer {
            InstrumentationSystem.bootstrap(tracer)
            logger.info("Tracing: spans to \(tracer.endpoint), \(options.traceSampling * 100)% of the traces begun here recorded")
        }

        let pool = ConnectionPool(options.poolConfiguration, onPoolerFound: Self.poolerReport(pool: "primary", logger: logger))
        let replicas =
            options.readDatabaseURLs.isEmpty
            ? nil
            : ReplicaSet(
                options.replicaPoolConfigurations.map {
                    ConnectionPool($0, onPoolerFound: Self.poolerReport(pool: $0.name, logger: logger))
                },
                configuration: options.replicaSetConfiguration
            ) { [logger] index, change in
                if case .healthy = change {
                    logger.notice("Read replica \(index + 1): \(change)")
                } else {
                    logger.warning("Read replica \(index + 1): \(change)")
                }
            }
        if options.poolerCompatible, options.statementTimeout > 0 {
            logger.notice(
                "--pooler-compatible sets no statement_timeout on the connections: set it on the role (ALTER ROLE ... SET statement_timeout)"
            )
        }
        let rendering = JSONRenderingOptions(dateFormat: options.dateFormat)
        let live = options.live ? LiveFeed(pool: pool, options: rendering, configuration: options.liveConfiguration, logger: logger) : nil
        let runner = QueryRunner(pool: pool, replicas: replicas, options: rendering, maxRows: options.maxRows, live: live)
        let authenticator = try options.authenticator(realm: name, logger: logger)
        let openAPI = OpenAPIInfo(
            title: name, description: overview,
            security: authenticator.flatMap { options.openAPISecurity(publicPathPrefixes: $0.configuration.publicPathPrefixes) })
        let drain = HealthService.Drain()
        // Kept across reloads (SIGHUP), so that the counts go on.
        let routeMetrics = options.metrics ? RouteMetrics() : nil
        // The server's own services, at the paths reserved for them (`ReservedPath`).
        var serverServices: [any WebService] = [HealthService(pool: pool, drain: drain)]
        if let routeMetrics {
            let replicaPools = (replicas?.pools ?? []).enumerated().map { (name: "replica-\($0.offset + 1)", pool: $0.element) }
            serverServices.append(
                MetricsService(
                    routes: routeMetrics, pools: [("primary", pool)] + replicaPools, registry: metricsRegistry, live: live))
        }
        func makeRouter() throws -> WebServiceRouter {
            try WebServiceRouter(
                services: try makeServices(options, pool), runners: [runner], logger: logger,
                openAPI: openAPI, metrics: routeMetrics, limits: options.requestLimits, serverServices: serverServices)
        }
        // A router that another replaces on SIGHUP, or the one router for good.
        let router = try makeRouter()
        let swappable = reloadsOnHangup ? SwappableRouter(router) : nil
        let respond: @Sendable (HTTPRequest) -> HTTPResponse =
            if let swappable {
                { swappable.respond(to: $0) }
            } else {
                { router.respond(to: $0) }
            }
        var configuration = options.serverConfiguration
        configuration.tls = try options.tlsCertificate()
        configuration.tlsPriorities = try options.tlsPriorityString()
        if configuration.tls != nil, let warning = options.tlsKeyPermissionWarning() { logger.warning("\(warning)") }
        configuration.admission = authenticator
        configuration.tracer = tracer
        configuration.maximumBodySizeByPath = router.maximumBodySizeByPath
        let server = HTTPServer(configuration: configuration, logger: logger, handler: respond)

        try server.start()
        let replicaNote = replicas.map { ", reads on \($0.pools.count) replica\($0.pools.count == 1 ? "" : "s")" } ?? ""
        let scheme = configuration.tls == nil ? "http" : "https"
        // What SIGHUP does, step by step in this order; each step logs its
        // own outcome, and one that fails keeps what it had and leaves the rest to run.
        var hangupSteps: [() -> Void] = []
        if let authenticator {
            hangupSteps.append { [name] in
                do {
                    guard let configuration = try options.authenticatorConfiguration(realm: name) else { return }
                    try authenticator.reload(configuration)
                    logger.notice("Reloaded the authentication files")
                } catch {
                    logger.error("The authentication files were not reloaded; the previous ones still apply: \(error)")
                }
            }
        }
        if let swappable {
            hangupSteps.append {
                do {
                    swappable.swap(to: try makeRouter())
                    logger.notice("Reloaded the services")
                } catch {
                    logger.error("The services were not reloaded; the previous ones still serve")
                    for line in "\(error)".split(separator: "\n") { logger.error("\(line)") }
                }
            }
        }
        if configuration.tls != nil {
            hangupSteps.append {
                let files = "\(options.tlsCertificateFile) and \(options.tlsKeyFile)"
                do {
                    if let warning = options.tlsKeyPermissionWarning() { logger.warning("\(warning)") }
                    if let certificate = try options.tlsCertificate() { try server.reloadTLS(certificate) }
                    logger.notice("Reloaded the TLS certificate from \(files)")
                } catch {
                    logger.error("The TLS certificate was not reloaded from \(files), the previous one is still presented: \(error)")
                }
            }
        }
        if configuration.tls != nil, !options.tlsPrioritiesFile.isEmpty {
            hangupSteps.append {
                let file = options.tlsPrioritiesFile
                do {
                    try server.reloadTLSPriorities(try options.tlsPriorityString())
                    logger.notice("Reloaded the TLS priorities from \(file)")
                } catch {
                    logger.error("The TLS priorities were not reloaded from \(file), the previous ones still apply: \(error)")
                }
            }
        }
        // Stops accepting, and lets the requests in flight finish.
        // Event streams end at the drain's start (their callers connect again elsewhere) and before the stop.
        server.runUntilSignalled(
            drainSeconds: options.drainSeconds,
            onDrain: {
                drain.begin()
                live?.endAllStreams()
            },
            onHangup: hangupSteps.isEmpty ? nil : { for step in hangupSteps { step() } }, beforeStop: { live?.stop() },
            ready: {
                // Once SIGHUP is handled: the folder watcher sends it, and a script may once this line is out.
                if reloadsOnHangup, let folder = watchedFolder(options) {
                    FolderWatcher.start(folder) { [logger] in
                        logger.notice("\(folder) changed: reloading")
                        kill(getpid(), SIGHUP)
                    }
                }
                logger.info("Serving \(scheme)://\(options.host):\(server.port)/ (pool of \(options.poolSize) connections\(replicaNote))")
                StandardErrorOutput.shared.flush()  // Scripts wait for this line; the access log may wait.
            })
        replicas?.close()
        pool.close()
        tracer?.shutdown()
        logger.info("Stopped")
        StandardErrorOutput.shared.flush()
    }
}

extension ServerProgram {
    /// Logs what a pool found of a pooler on its first connection
    /// (`PoolerProbe`): nothing when it reached PostgreSQL itself.
    static func poolerReport(pool: String, logger: Logger) -> @Sendable (PoolerProbe.Finding) -> Void {
        { finding in
            switch finding {
            case .direct:
                break
            case .keepsPreparedStatements:
                logger.info("The \(pool) database is reached through a pooler that keeps prepared statements")
            case .losesPreparedStatements:
                logger.notice(
                    "The \(pool) database is reached through a pooler in transaction mode (a prepared statement does not survive a transaction): no statement is prepared, as with --pooler-compatible; set statement_timeout on the role"
                )
            }
        }
    }
}

/// The value of one environment variable, `nil` when unset or empty.
/// `getenv` rather than `ProcessInfo.processInfo.environment`, which copies
/// the whole environment into a dictionary on every call.
@Sendable func processEnvironment(_ name: String) -> String? {
    guard let value = getenv(name), value.pointee != 0 else { return nil }
    return String(cString: value)
}

/// Writes one line to standard error, after the log lines waiting to be written.
func printError(_ line: String) {
    StandardErrorOutput.shared.flush()
    var text = line + "\n"
    text.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
}
