#if canImport(Glibc)
import Glibc
#endif

/// The server's settings: each from its command-line option, else its
/// environment variable, else the default.
///
/// A table of options read by a small parser rather than
/// swift-argument-parser: its reflection-based parsing was a third of the
/// instructions from the process start to the first served request, and
/// linking it 1.3 MB of the idle server's resident memory (15.2 -> 13.9 MB;
/// BENCHMARKS.md, scenario 6).
///
/// ```swift
/// let options = try ServerOptions.parse(["--port", "8081"], environment: { _ in nil })
/// options.port   // 8081
/// ```
struct ServerOptions: Equatable, Sendable {
    enum DateFormat: String, CaseIterable, Sendable {
        case iso8601 = "iso8601"
        case epochMilliseconds = "epoch-milliseconds"
    }

    var host = "127.0.0.1"
    var port = 8080
    var databaseURL = ""
    var poolSize = 16
    var pipelineConnections = 2
    var eventLoops = 2
    var acquireTimeout = 5.0
    var statementTimeout = 30.0
    var dateFormat = DateFormat.iso8601
    var maxConnections = 512
    var connectionTimeout = 30
    var shutdownTimeout = 10.0
    var logLevel = "info"

    /// What is wrong with the command line or the environment.
    struct UsageError: Error, Equatable, CustomStringConvertible {
        let description: String
    }

    /// The result of reading the command line: settings, or a request for
    /// help (with the defaults the environment gives).
    enum Command: Equatable {
        case serve(ServerOptions)
        case help(ServerOptions)
    }

    // MARK: - Parsing

    /// Reads `arguments` (without the program name) over the environment
    /// variables and the defaults. `--name value` and `--name=value` both work.
    static func parse(_ arguments: [String], environment: (String) -> String?) throws(UsageError) -> Command {
        var options = ServerOptions()
        for option in table {
            guard let variable = option.variable, let value = environment(variable), !value.isEmpty else { continue }
            guard option.apply(&options, value) else {
                throw UsageError(description: "The value '\(value)' of \(variable) is invalid for --\(option.name) \(option.valueName).")
            }
        }
        let defaults = options
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "-h" || argument == "--help" { return .help(defaults) }
            guard argument.hasPrefix("--") else { throw UsageError(description: "Unexpected argument '\(argument)'.") }
            let nameAndValue = argument.dropFirst(2).split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let option = table.first(where: { $0.name == nameAndValue[0] }) else {
                throw UsageError(description: "Unknown option '\(argument)'.")
            }
            let value: String
            if nameAndValue.count == 2 {
                value = String(nameAndValue[1])
            } else if let next = remaining.popFirst() {
                value = next
            } else {
                throw UsageError(description: "Missing value for '--\(option.name) \(option.valueName)'.")
            }
            guard option.apply(&options, value) else {
                throw UsageError(description: "The value '\(value)' is invalid for '--\(option.name) \(option.valueName)'.")
            }
        }
        try options.validate()
        return .serve(options)
    }

    private func validate() throws(UsageError) {
        func check(_ condition: Bool, _ message: String) throws(UsageError) {
            if !condition { throw UsageError(description: message) }
        }
        try check((0...65535).contains(port), "--port must be 0 to 65535.")
        try check(poolSize >= 1, "--pool-size must be at least 1.")
        try check(pipelineConnections >= 1, "--pipeline-connections must be at least 1.")
        try check(eventLoops >= 1, "--event-loops must be at least 1.")
        try check(acquireTimeout > 0, "--acquire-timeout must be more than 0.")
        try check(statementTimeout >= 0, "--statement-timeout must be 0 or more.")
        try check(connectionTimeout >= 1, "--connection-timeout must be at least 1.")
        try check(shutdownTimeout >= 0, "--shutdown-timeout must be 0 or more.")
        try check(maxConnections >= 1, "--max-connections must be at least 1.")
        try check(Self.logLevels.contains(logLevel), "--log-level \(logLevel) is not a log level.")
    }

    static let logLevels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    // MARK: - The options

    /// One command-line option: its name, environment variable, help and how
    /// it sets its field (`false` for a value it cannot take).
    struct Option: Sendable {
        let name: String
        let variable: String?
        let valueName: String
        let help: String
        let apply: @Sendable (inout ServerOptions, String) -> Bool
        let defaultValue: @Sendable (ServerOptions) -> String
    }

    static let table: [Option] = [
        Option(name: "host", variable: "EMPLOYEES_HOST", valueName: "<host>",
               help: "Address to listen on (env EMPLOYEES_HOST).",
               apply: { $0.host = $1; return true }, defaultValue: { $0.host }),
        Option(name: "port", variable: "EMPLOYEES_PORT", valueName: "<port>",
               help: "Port to listen on (env EMPLOYEES_PORT).",
               apply: { set(&$0.port, Int($1)) }, defaultValue: { String($0.port) }),
        Option(name: "database-url", variable: "DATABASE_URL", valueName: "<database-url>",
               help: "libpq connection string or postgresql:// URL (env DATABASE_URL; default: the PG* variables).",
               apply: { $0.databaseURL = $1; return true }, defaultValue: { $0.databaseURL }),
        Option(name: "pool-size", variable: "EMPLOYEES_POOL_SIZE", valueName: "<pool-size>",
               help: "Most database connections open at once (env EMPLOYEES_POOL_SIZE).",
               apply: { set(&$0.poolSize, Int($1)) }, defaultValue: { String($0.poolSize) }),
        Option(name: "pipeline-connections", variable: "EMPLOYEES_PIPELINE_CONNECTIONS", valueName: "<pipeline-connections>",
               help: "Database connections that run the one-employee queries of many requests together, besides the pool (env EMPLOYEES_PIPELINE_CONNECTIONS).",
               apply: { set(&$0.pipelineConnections, Int($1)) }, defaultValue: { String($0.pipelineConnections) }),
        Option(name: "event-loops", variable: "EMPLOYEES_EVENT_LOOPS", valueName: "<event-loops>",
               help: "Threads that serve the client connections; handlers that block run on worker threads (env EMPLOYEES_EVENT_LOOPS).",
               apply: { set(&$0.eventLoops, Int($1)) }, defaultValue: { String($0.eventLoops) }),
        Option(name: "acquire-timeout", variable: "EMPLOYEES_ACQUIRE_TIMEOUT", valueName: "<acquire-timeout>",
               help: "Seconds a request waits for a free database connection before 503 (env EMPLOYEES_ACQUIRE_TIMEOUT).",
               apply: { set(&$0.acquireTimeout, Double($1)) }, defaultValue: { seconds($0.acquireTimeout) }),
        Option(name: "statement-timeout", variable: "EMPLOYEES_STATEMENT_TIMEOUT", valueName: "<statement-timeout>",
               help: "Seconds a query may run before it is cancelled and answered 504; 0 for no limit (env EMPLOYEES_STATEMENT_TIMEOUT).",
               apply: { set(&$0.statementTimeout, Double($1)) }, defaultValue: { seconds($0.statementTimeout) }),
        Option(name: "date-format", variable: "EMPLOYEES_DATE_FORMAT", valueName: "<date-format>",
               help: "How dates are written: iso8601 (\"1995-12-01\") or epoch-milliseconds, as HTTP-RPC did (env EMPLOYEES_DATE_FORMAT).",
               apply: { set(&$0.dateFormat, DateFormat(rawValue: $1)) }, defaultValue: { $0.dateFormat.rawValue }),
        Option(name: "max-connections", variable: "EMPLOYEES_MAX_CONNECTIONS", valueName: "<max-connections>",
               help: "Most client connections at once (env EMPLOYEES_MAX_CONNECTIONS).",
               apply: { set(&$0.maxConnections, Int($1)) }, defaultValue: { String($0.maxConnections) }),
        Option(name: "connection-timeout", variable: "EMPLOYEES_CONNECTION_TIMEOUT", valueName: "<connection-timeout>",
               help: "Seconds a client connection may stay idle, or take to send a request's header fields, before it is closed (env EMPLOYEES_CONNECTION_TIMEOUT).",
               apply: { set(&$0.connectionTimeout, Int($1)) }, defaultValue: { String($0.connectionTimeout) }),
        Option(name: "shutdown-timeout", variable: "EMPLOYEES_SHUTDOWN_TIMEOUT", valueName: "<shutdown-timeout>",
               help: "Seconds a stop (SIGTERM, SIGINT) lets requests in flight finish (env EMPLOYEES_SHUTDOWN_TIMEOUT).",
               apply: { set(&$0.shutdownTimeout, Double($1)) }, defaultValue: { seconds($0.shutdownTimeout) }),
        Option(name: "log-level", variable: "LOG_LEVEL", valueName: "<log-level>",
               help: "Log level: trace, debug, info, notice, warning, error, critical (env LOG_LEVEL).",
               apply: { $0.logLevel = $1; return true }, defaultValue: { $0.logLevel }),
    ]

    private static func set<Value>(_ field: inout Value, _ value: Value?) -> Bool {
        guard let value else { return false }
        field = value
        return true
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    // MARK: - Help

    /// The text `--help` prints: what the server does, then every option
    /// with its default.
    static func help(defaults: ServerOptions) -> String {
        var text = """
            OVERVIEW: Serves the employees sample database as a REST API.

            The database is reached through --database-url, else the DATABASE_URL environment
            variable, else libpq's PG* variables (PGHOST, PGPORT, PGDATABASE, PGUSER, ...).
            Every option can also be given in the environment (EMPLOYEES_PORT, EMPLOYEES_HOST, ...).

            USAGE: employees-server [--<option> <value>] ...

            OPTIONS:

            """
        for option in table {
            text += "  --\(option.name) \(option.valueName)\n"
            let defaultValue = option.defaultValue(defaults)
            text += "        \(option.help)" + (defaultValue.isEmpty ? "" : " (default: \(defaultValue))") + "\n"
        }
        text += "  -h, --help\n        Show help information.\n"
        return text
    }
}
