import Foundation
import HTTPTestClient
import Testing

/// No option and no environment variable stops `sql-rest serve` or
/// `employees-server` with a signal: a bad number (not one, infinite, past
/// what the option's conversions hold), an empty value, an unknown word, a
/// file that does not exist each end the program with a message that names
/// the option, and exit status 64 (a usage error) or 1 (a file that cannot
/// be read at start).
@Suite("Options never stop a server with a signal")
struct OptionAttackTests {
    /// Bad values of the options both programs take, and what names the option in the message.
    static let badOptions: [(arguments: [String], names: String)] = [
        (["--port", "abc"], "--port"), (["--port", "70000"], "--port"), (["--port", ""], "--port"),
        (["--pool-size", "0"], "--pool-size"), (["--pool-size", "1000000000"], "--pool-size"),
        (["--pipeline-connections", "-1"], "--pipeline-connections"), (["--event-loops", "100000"], "--event-loops"),
        (["--password-checks", "0"], "--password-checks"),
        (["--acquire-timeout", "inf"], "--acquire-timeout"), (["--acquire-timeout", "nan"], "--acquire-timeout"),
        (["--statement-timeout", "1e300"], "--statement-timeout"), (["--statement-timeout", "-1"], "--statement-timeout"),
        (["--max-replica-lag", "inf"], "--max-replica-lag"),
        (["--connection-timeout", "9223372036854775807"], "--connection-timeout"),
        (["--max-connections", "9223372036854775807"], "--max-connections"),
        (["--body-timeout", "inf"], "--body-timeout"), (["--response-timeout", "99999999999999999999"], "--response-timeout"),
        (["--idle-in-transaction-timeout", "inf"], "--idle-in-transaction-timeout"),
        (["--shutdown-timeout", "inf"], "--shutdown-timeout"), (["--drain-seconds", "-1"], "--drain-seconds"),
        (["--body-bytes-in-flight", "0"], "--body-bytes-in-flight"), (["--max-rows", "0"], "--max-rows"),
        (["--max-arguments", "0"], "--max-arguments"), (["--max-filters", "-5"], "--max-filters"),
        (["--max-list-items", "many"], "--max-list-items"), (["--max-batch-calls", ""], "--max-batch-calls"),
        (["--max-jsonrpc-bytes", "1e6"], "--max-jsonrpc-bytes"),
        (["--date-format", "rfc"], "--date-format"), (["--rows-from", "disk"], "--rows-from"), (["--metrics", "maybe"], "--metrics"),
        (["--mhd-patches", "sometimes"], "--mhd-patches"), (["--log-format", "xml"], "--log-format"),
        (["--log-level", "loud"], "--log-level"), (["--database-sslmode", "always"], "--database-sslmode"),
        (["--tls-priorities", ""], "--tls-priorities"), (["--pooler-compatible=perhaps"], "--pooler-compatible"),
        (["--auth-basic-postgres", "yes"], "--auth-basic-postgres"), (["--jwt-role-claim", ""], "--jwt-role-claim"),
        (["--tls-cert", "/nonexistent/cert.pem", "--tls-key", "/nonexistent/key.pem"], "--tls-cert"),
        (["--auth-basic-file", "/nonexistent/passwords"], "--auth-basic-file"),
        (["--jwt-secret-file", "/nonexistent/secret"], "--jwt-secret-file"),
        (["--jwt-public-key-file", "/nonexistent/key.pem"], "--jwt-public-key-file"),
        (["--role-map", "/nonexistent/roles", "--anonymous-role", "web_anon"], "--role-map"),
        (["--bogus", "1"], "--bogus"),
    ]

    /// Bad environment variables, by the part of the name after the program's prefix.
    static let badVariables: [(name: String, value: String, names: String)] = [
        ("PORT", "abc", "PORT"), ("POOL_SIZE", "0", "--pool-size"), ("STATEMENT_TIMEOUT", "inf", "--statement-timeout"),
        ("METRICS", "maybe", "METRICS"), ("MAX_FILTERS", "0", "MAX_FILTERS"), ("TLS_CERT", "/nonexistent/cert.pem", "--tls-cert"),
    ]

    /// Runs `program` with `arguments` and `environment`; expects an exit status of 64 or 1, no signal, and `names` in its message.
    static func expectRefusal(
        _ program: String, _ arguments: [String], environment: [String: String?], names: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let run = try ChildProcess(
            try ChildProcess.packageExecutable(program), arguments, environment: environment, separateErrors: true)
        let status = run.wait(timeout: 20)
        if status == nil { run.stop() }
        let printed = run.output + run.errors
        #expect(
            status == 64 || status == 1, "\(program) \(arguments): status \(status.map(String.init) ?? "none"): \(printed)",
            sourceLocation: sourceLocation)
        #expect(printed.contains(names), "\(program) \(arguments): \(printed)", sourceLocation: sourceLocation)
        #expect(!printed.contains("Fatal error") && !printed.contains("Backtrac"), "\(printed)", sourceLocation: sourceLocation)
    }

    /// The environment of the test database as `employees_reader`, without the variables of either program.
    static func environment() throws -> [String: String?] {
        var environment: [String: String?] = [
            "PGHOST": try Environment.variable("PGHOST"), "PGPORT": try Environment.variable("PGPORT"),
            "PGDATABASE": try Environment.variable("EMPLOYEES_DATABASE"), "PGUSER": "employees_reader", "DATABASE_URL": nil,
            "LOG_LEVEL": nil,
        ]
        for name in ProcessInfo.processInfo.environment.keys where name.hasPrefix("SQL_REST_") || name.hasPrefix("EMPLOYEES_") {
            environment[name] = .some(nil)
        }
        return environment
    }

    @Test("bad option values: employees-server and sql-rest serve exit with a message naming the option")
    func badOptions() throws {
        let environment = try Self.environment()
        for (arguments, names) in Self.badOptions {
            try Self.expectRefusal("employees-server", ["--port", "0"] + arguments, environment: environment, names: names)
            try Self.expectRefusal(
                "sql-rest", ["serve", "--services", Environment.servicesFolder, "--port", "0"] + arguments, environment: environment,
                names: names)
        }
    }

    @Test("bad environment variables, a folder that does not exist, an unknown flag value: the same")
    func badVariables() throws {
        var environment = try Self.environment()
        for (name, value, names) in Self.badVariables {
            var employees = environment
            employees["EMPLOYEES_" + name] = value
            try Self.expectRefusal("employees-server", ["--port", "0"], environment: employees, names: names)
            var sqlRest = environment
            sqlRest["SQL_REST_" + name] = value
            try Self.expectRefusal(
                "sql-rest", ["serve", "--services", Environment.servicesFolder, "--port", "0"], environment: sqlRest, names: names)
        }
        environment["LOG_LEVEL"] = "loud"
        try Self.expectRefusal("employees-server", ["--port", "0"], environment: environment, names: "--log-level")
        environment["LOG_LEVEL"] = .some(nil)
        try Self.expectRefusal(
            "sql-rest", ["serve", "--services", "/nonexistent/services", "--port", "0"], environment: environment, names: "--services")
        try Self.expectRefusal(
            "sql-rest", ["serve", "--services", Environment.servicesFolder, "--watch=maybe"], environment: environment, names: "--watch")
        environment["SQL_REST_SERVICES"] = "/nonexistent/services"
        try Self.expectRefusal("sql-rest", ["serve", "--port", "0"], environment: environment, names: "--services")
    }
}
