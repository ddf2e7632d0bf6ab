import Foundation
import Testing
import HTTPServer
@testable import ServiceHost

/// Parses as employees-server does, with the `EMPLOYEES_` prefix.
private func parse(
    _ arguments: [String], _ environment: [String: String] = [:], prefix: String = "EMPLOYEES_"
) throws(ServerOptions.UsageError) -> ServerOptions.Command {
    try ServerOptions.parse(arguments, environmentPrefix: prefix, environment: { environment[$0] })
}

private func help(_ defaults: ServerOptions = ServerOptions(), prefix: String = "EMPLOYEES_") -> String {
    ServerOptions.help(
        defaults: defaults, program: "employees-server",
        overview: "Serves the employees sample database as a REST API.", environmentPrefix: prefix)
}

@Test func defaultsWithoutArgumentsOrEnvironment() throws {
    #expect(try parse([]) == .serve(ServerOptions()))
    #expect(ServerOptions().port == 8080)
    #expect(ServerOptions().host == "127.0.0.1")
}

@Test func optionsTakeSeparateOrAttachedValues() throws {
    var expected = ServerOptions()
    expected.port = 8081
    expected.host = "0.0.0.0"
    expected.acquireTimeout = 2.5
    expected.dateFormat = .epochMilliseconds
    expected.databaseURL = "postgresql:///employees?application_name=a=b"
    #expect(
        try parse([
            "--port", "8081", "--host=0.0.0.0", "--acquire-timeout", "2.5",
            "--date-format=epoch-milliseconds",
            "--database-url=postgresql:///employees?application_name=a=b",
        ]) == .serve(expected))
}

@Test func commandLineOverridesEnvironmentOverridesDefault() throws {
    var expected = ServerOptions()
    expected.port = 9000
    expected.poolSize = 4
    #expect(try parse(["--port", "9000"], ["EMPLOYEES_PORT": "9001", "EMPLOYEES_POOL_SIZE": "4"]) == .serve(expected))
    #expect(try parse([], ["EMPLOYEES_PORT": ""]) == .serve(ServerOptions()))
}

@Test func helpShowsTheDefaultsTheEnvironmentGives() throws {
    guard case .help(let defaults) = try parse(["--port", "1", "--help"], ["EMPLOYEES_PORT": "9001"]) else {
        Issue.record("no help")
        return
    }
    #expect(defaults.port == 9001)
    let text = help(defaults)
    #expect(text.contains("--port <port>"))
    #expect(text.contains("(default: 9001)"))
    #expect(text.contains("-h, --help"))
    #expect(ServerOptions.table.count == 58)
}

@Test func versionIsAskedForAnywhereAnOptionMayBe() throws {
    #expect(try parse(["--version"]) == .version)
    #expect(try parse(["--port", "1", "--version"]) == .version)
    #expect(help().contains("  --version\n"))
}

@Test(arguments: [
    (["--bogus"], "Unknown option '--bogus'"),
    (["stray"], "Unexpected argument 'stray'"),
    (["--port"], "Missing value for '--port <port>'"),
    (["--port", "abc"], "The value 'abc' is invalid for '--port <port>'."),
    (["--max-rows", "0"], "--max-rows must be at least 1."),
    (["--date-format", "rfc"], "The value 'rfc' is invalid for '--date-format <date-format>'."),
    (["--port", "70000"], "--port must be 0 to 65535."),
    (["--pool-size", "0"], "--pool-size must be 1 to 1024."),
    (["--pool-size", "1000000"], "--pool-size must be 1 to 1024."),
    (["--event-loops", "100000"], "--event-loops must be 1 to 1024."),
    (["--max-connections", "9223372036854775807"], "--max-connections must be 1 to 1000000."),
    (["--statement-timeout", "inf"], "--statement-timeout must be a number of seconds from 0 to 2147483."),
    (["--statement-timeout", "nan"], "--statement-timeout must be a number of seconds from 0 to 2147483."),
    (["--acquire-timeout", "1e300"], "--acquire-timeout must be a number of seconds over 0, up to 2147483."),
    (["--acquire-timeout", "0"], "--acquire-timeout must be a number of seconds over 0, up to 2147483."),
    (["--body-timeout", "inf"], "--body-timeout must be a number of seconds over 0, up to 2147483."),
    (["--response-timeout", "99999999999999999999"], "--response-timeout must be a number of seconds over 0, up to 2147483."),
    (["--idle-in-transaction-timeout", "1e10"], "--idle-in-transaction-timeout must be a number of seconds from 0 to 2147483."),
    (["--connection-timeout", "9223372036854775807"], "--connection-timeout must be a number of seconds from 1 to 2147483."),
    (["--shutdown-timeout", "-inf"], "--shutdown-timeout must be a number of seconds from 0 to 2147483."),
    (["--drain-seconds", "inf"], "--drain-seconds must be a number of seconds from 0 to 2147483."),
    (["--max-replica-lag", "nan"], "--max-replica-lag must be a number of seconds over 0, up to 2147483."),
    (["--max-filters", "0"], "The value '0' is invalid for '--max-filters <max-filters>'."),
    (["--max-batch-calls", ""], "The value '' is invalid for '--max-batch-calls <max-batch-calls>'."),
    (["--max-jsonrpc-bytes", "1e6"], "The value '1e6' is invalid for '--max-jsonrpc-bytes <max-jsonrpc-bytes>'."),
    (["--metrics", "maybe"], "The value 'maybe' is invalid for '--metrics <metrics>'."),
    (["--log-level", "loud"], "--log-level loud is not a log level."),
    (["--tls-cert", "cert.pem"], "--tls-cert and --tls-key go together."),
    (
        ["--auth-basic-file", "passwords", "--auth-basic-postgres", "true"],
        "--auth-basic-file and --auth-basic-postgres exclude each other."
    ),
    (["--auth-basic-postgres", "yes"], "The value 'yes' is invalid for '--auth-basic-postgres <auth-basic-postgres>'."),
    (
        ["--jwt-secret-file", "a", "--jwt-public-key-file", "b"],
        "--jwt-secret-file, --jwt-public-key-file and --jwt-jwks-file exclude each other."
    ),
    (
        ["--jwt-jwks-file", "a", "--jwt-secret-file", "b"],
        "--jwt-secret-file, --jwt-public-key-file and --jwt-jwks-file exclude each other."
    ),
    (["--jwt-role-claim", ".a[0"], "The value '.a[0' is invalid for '--jwt-role-claim <jwt-role-claim>'."),
    (["--database-sslmode", "always"], "The value 'always' is invalid for '--database-sslmode <database-sslmode>'."),
])
func usageErrorsNameTheOption(arguments: [String], message: String) {
    #expect(throws: ServerOptions.UsageError(description: message)) { try parse(arguments) }
}

@Test func sslModeIsAddedToTheConnectionString() throws {
    func conninfo(_ arguments: [String]) throws -> String? {
        guard case .serve(let options) = try parse(arguments) else { return nil }
        return options.poolConfiguration.conninfo
    }
    #expect(try conninfo(["--database-sslmode", "require"]) == "sslmode=require")
    #expect(
        try conninfo(["--database-url", "host=db sslmode=disable", "--database-sslmode", "verify-full"])
            == "host=db sslmode=disable sslmode=verify-full")
    #expect(
        try conninfo(["--database-url", "postgresql://db/employees", "--database-sslmode", "require"])
            == "postgresql://db/employees?sslmode=require")
    #expect(
        try conninfo(["--database-url", "postgres://db/e?connect_timeout=5", "--database-sslmode", "require"])
            == "postgres://db/e?connect_timeout=5&sslmode=require")
    #expect(try conninfo(["--database-url", "host=db"]) == "host=db")
}

@Test func invalidEnvironmentValueNamesTheVariable() {
    #expect(
        throws: ServerOptions.UsageError(
            description: "The value 'x' of EMPLOYEES_POOL_SIZE is invalid for --pool-size <pool-size>."
        )
    ) { try parse([], ["EMPLOYEES_POOL_SIZE": "x"]) }
}

@Test func theEnvironmentPrefixNamesTheVariables() throws {
    var expected = ServerOptions()
    expected.port = 9002
    expected.eventLoops = 3
    expected.databaseURL = "postgresql:///shop"
    expected.logLevel = "debug"
    let environment = [
        "SHOP_PORT": "9002", "SHOP_EVENT_LOOPS": "3", "EMPLOYEES_POOL_SIZE": "4",
        "DATABASE_URL": "postgresql:///shop", "LOG_LEVEL": "debug",
    ]
    #expect(try parse([], environment, prefix: "SHOP_") == .serve(expected), "DATABASE_URL and LOG_LEVEL take no prefix")
    #expect(
        throws: ServerOptions.UsageError(
            description: "The value 'x' of SHOP_POOL_SIZE is invalid for --pool-size <pool-size>."
        )
    ) { try parse([], ["SHOP_POOL_SIZE": "x"], prefix: "SHOP_") }
}

@Test func helpNamesTheProgramAndItsVariables() {
    let text = ServerOptions.help(
        defaults: ServerOptions(), program: "shop-server",
        overview: "Serves the shop.", environmentPrefix: "SHOP_")
    #expect(text.hasPrefix("OVERVIEW: Serves the shop.\n"))
    #expect(text.contains("USAGE: shop-server [--<option> <value>] ..."))
    #expect(
        text.contains(
            """
              --port <port>
                    Port to listen on (env SHOP_PORT). (default: 8080)
            """))
    #expect(
        text.contains(
            """
              --database-url <database-url>
                    libpq connection string or postgresql:// URL (env DATABASE_URL; default: libpq's PG* variables).
            """))
    #expect(!text.contains("`"), "the table's Markdown is printed plain")
}

/// The README's configuration table is this table, printed: each option is
/// documented once.
@Test func theREADMEShowsTheOptionsTable() throws {
    let readme = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "README.md")
    let text = try String(contentsOf: readme, encoding: .utf8)
    let table = ServerOptions.markdownTable(environmentPrefix: "EMPLOYEES_")
    #expect(text.contains(table), "README.md's table should read:\n\(table)")
}

@Test func corsOriginsRepeatAndListInTheEnvironment() throws {
    guard
        case .serve(let options) = try ServerOptions.parse(
            ["--cors-origin", "https://a.example", "--cors-origin=https://b.example"], environmentPrefix: "EMPLOYEES_",
            environment: { $0 == "EMPLOYEES_CORS_ORIGINS" ? "https://c.example, https://d.example" : nil })
    else {
        Issue.record("not serving")
        return
    }
    #expect(options.corsOrigins == ["https://c.example", "https://d.example", "https://a.example", "https://b.example"])
}

/// A program's own option, as sql-rest declares `--services`.
private let servicesOption = ServerOptions.Option(
    program: "services", variable: "SERVICES", meaning: "Folder of the `.sql` files", required: true)

@Test func aProgramsOwnOptionComesFromTheCommandLineOrItsVariable() throws {
    func parse(_ arguments: [String], _ environment: [String: String] = [:]) throws(ServerOptions.UsageError) -> ServerOptions.Command {
        try ServerOptions.parse(arguments, environmentPrefix: "SQL_REST_", programOptions: [servicesOption]) { environment[$0] }
    }
    guard case .serve(let options) = try parse(["--services", "api", "--port", "9"]) else { Issue.record("not serve"); return }
    #expect(options[option: "services"] == "api" && options.port == 9)
    guard case .serve(let fromEnvironment) = try parse([], ["SQL_REST_SERVICES": "dir"]) else { Issue.record("not serve"); return }
    #expect(fromEnvironment[option: "services"] == "dir")
    #expect(throws: ServerOptions.UsageError(description: "Missing '--services <services>' (or SQL_REST_SERVICES).")) { try parse([]) }
    #expect(throws: ServerOptions.UsageError(description: "Unknown option '--services'")) {
        try ServerOptions.parse(["--services", "x"], environmentPrefix: "EMPLOYEES_") { _ in nil }
    }
}

@Test func helpListsTheCommandsAndTheProgramsOwnOptions() {
    let text = ServerOptions.help(
        defaults: ServerOptions(), program: "sql-rest", overview: "Serves SQL files.", environmentPrefix: "SQL_REST_",
        programOptions: [servicesOption], commands: [("serve", "Serves."), ("check", "Checks.")])
    #expect(
        text.contains(
            "USAGE: sql-rest <command> [--<option> <value>] ...\n\nCOMMANDS:\n  serve\n        Serves.\n  check\n        Checks.\n\nOPTIONS:\n  --services <services>\n        Folder of the .sql files (env SQL_REST_SERVICES; required).\n  --host <host>\n"
        ))
    #expect(
        help().contains("USAGE: employees-server [--<option> <value>] ...\n\nOPTIONS:\n  --host <host>\n"),
        "a program without commands has none listed")
}

@Test func readReplicasRepeatAndListInTheEnvironment() throws {
    guard
        case .serve(let options) = try ServerOptions.parse(
            ["--read-database-url", "host=/tmp port=5433 dbname=app", "--max-replica-lag=2.5", "--pooler-compatible"],
            environmentPrefix: "EMPLOYEES_",
            environment: { $0 == "READ_DATABASE_URL" ? "postgresql://r1/app, postgresql://a,b/app?target_session_attrs=any" : nil })
    else {
        Issue.record("not serving")
        return
    }
    #expect(
        options.readDatabaseURLs == [
            "postgresql://r1/app", "postgresql://a,b/app?target_session_attrs=any", "host=/tmp port=5433 dbname=app",
        ])
    #expect(options.maxReplicaLag == 2.5)
    #expect(options.poolerCompatible)
    #expect(options.replicaPoolConfigurations.map(\.conninfo) == options.readDatabaseURLs)
    #expect(options.replicaPoolConfigurations.allSatisfy { $0.poolerCompatible })
}

@Test func poolerCompatibleIsAFlagWithAnOptionalValue() throws {
    func parse(_ arguments: [String], _ variable: String? = nil) throws -> ServerOptions? {
        guard
            case .serve(let options) = try ServerOptions.parse(
                arguments, environmentPrefix: "EMPLOYEES_", environment: { $0 == "EMPLOYEES_POOLER_COMPATIBLE" ? variable : nil })
        else { return nil }
        return options
    }
    #expect(try parse([])?.poolerCompatible == false)
    #expect(try parse(["--pooler-compatible", "--port", "9000"])?.port == 9000)
    #expect(try parse(["--pooler-compatible=false"], "true")?.poolerCompatible == false)
    #expect(try parse([], "1")?.poolerCompatible == true)
    #expect(throws: ServerOptions.UsageError.self) { try parse(["--pooler-compatible=maybe"]) }
    #expect(throws: ServerOptions.UsageError.self) { try parse(["--max-replica-lag", "0"]) }
}

/// `--rows-from libpq` makes every pool, the replicas' too, stream rows through libpq.
@Test func rowsFromReachesEveryPool() throws {
    guard case .serve(let defaults) = try ServerOptions.parse([], environmentPrefix: "SQL_REST_", environment: { _ in nil }),
        case .serve(let libpq) = try ServerOptions.parse(
            ["--rows-from", "libpq", "--read-database-url", "host=/tmp dbname=app"], environmentPrefix: "SQL_REST_",
            environment: { _ in nil })
    else {
        Issue.record("not serving")
        return
    }
    #expect(defaults.poolConfiguration.readsRowsFromSocket)
    #expect(!libpq.poolConfiguration.readsRowsFromSocket)
    #expect(libpq.replicaPoolConfigurations.allSatisfy { !$0.readsRowsFromSocket })
    #expect(throws: ServerOptions.UsageError.self) {
        try ServerOptions.parse(["--rows-from", "wire"], environmentPrefix: "SQL_REST_", environment: { _ in nil })
    }
}

/// `--mhd-patches` turns libmicrohttpd's patches off (or forces them) for the server's configuration.
@Test func mhdPatchesReachTheServerConfiguration() throws {
    guard case .serve(let defaults) = try ServerOptions.parse([], environmentPrefix: "SQL_REST_", environment: { _ in nil }),
        case .serve(let off) = try ServerOptions.parse(["--mhd-patches", "off"], environmentPrefix: "SQL_REST_", environment: { _ in nil }),
        case .serve(let forced) = try ServerOptions.parse(
            [], environmentPrefix: "SQL_REST_", environment: { $0 == "SQL_REST_MHD_PATCHES" ? "force" : nil })
    else {
        Issue.record("not serving")
        return
    }
    #expect(defaults.serverConfiguration.libraryPatches.rawValue == "on")
    #expect(off.serverConfiguration.libraryPatches.rawValue == "off")
    #expect(forced.serverConfiguration.libraryPatches.rawValue == "force")
    #expect(throws: (any Error).self) {
        try ServerOptions.parse(["--mhd-patches", "maybe"], environmentPrefix: "SQL_REST_", environment: { _ in nil })
    }
    #expect(throws: (any Error).self) {
        try ServerOptions.parse(["--mhd-patches", "pool-release,"], environmentPrefix: "SQL_REST_", environment: { _ in nil })
    }
    guard
        case .serve(let two) = try ServerOptions.parse(
            ["--mhd-patches", "pool-release,event-writes"], environmentPrefix: "SQL_REST_", environment: { _ in nil })
    else {
        Issue.record("not serving")
        return
    }
    #expect(two.serverConfiguration.libraryPatches.patches == [.poolRelease, .eventWrites])
    #expect(two.serverConfiguration.libraryPatches.anyVersion == false)
    #expect(two.serverConfiguration.libraryPatches.rawValue == "pool-release,event-writes")
}

/// Patches named one by one are made alone, and the log line says which were left out.
@Test func somePatchesAloneAreMade() throws {
    let two = LibraryPatches.resolve(.only([.poolRelease, .errorPages]))
    guard LibraryPatches.testedVersions.contains(LibraryPatches.loadedVersion),
        LibraryPatches.testedArchitectures.contains(LibraryPatches.architecture)
    else {
        #expect(!two.isPatched)
        return
    }
    #expect(two.patches == [.poolRelease, .errorPages])
    #expect(two.releasesPoolPages && two.replacesErrorPages && !two.writesEventsDirectly)
    #expect(two.description.hasSuffix("patched (tested): error-pages, pool-release; left out: event-writes"))
}

/// swift-argument-parser reads the command line, its options made from
/// the table: an option added to the table is parsed with nothing else to
/// declare, and each takes its default back.
@Test func everyOptionOfTheTableReachesTheParser() throws {
    let names = ServerArguments.$context.withValue(.init()) { Mirror(reflecting: ServerArguments()).children.compactMap(\.label) }
    #expect(names == ServerOptions.table.map(\.name) + ["version"])
    for option in ServerOptions.table {
        let value = option.defaultValue(ServerOptions())
        guard !value.isEmpty else { continue }
        #expect(try parse(["--\(option.name)", value]) == .serve(ServerOptions()), "--\(option.name) \(value)")
    }
}

@Test func tracingAndServerTimingOptions() throws {
    guard
        case .serve(let options) = try parse(
            ["--trace-sampling", "0.01", "--server-timing"], ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"])
    else {
        Issue.record("no options")
        return
    }
    #expect(options.otlpEndpoint == "http://collector:4318")
    #expect(options.traceSampling == 0.01)
    #expect(options.serverTiming)
    #expect(options.serverConfiguration.serverTiming)
    #expect(throws: ServerOptions.UsageError.self) { try parse(["--otlp-endpoint", "https://collector:4318"]) }
    #expect(throws: ServerOptions.UsageError.self) { try parse(["--trace-sampling", "1.5"]) }
    #expect(throws: ServerOptions.UsageError.self) { try parse(["--trace-sampling", "-0.1"]) }
}
