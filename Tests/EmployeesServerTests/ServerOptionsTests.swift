import Testing
@testable import employees_server

private func parse(_ arguments: [String], _ environment: [String: String] = [:]) throws(ServerOptions.UsageError) -> ServerOptions.Command {
    try ServerOptions.parse(arguments, environment: { environment[$0] })
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
    #expect(try parse(["--port", "8081", "--host=0.0.0.0", "--acquire-timeout", "2.5",
                       "--date-format=epoch-milliseconds",
                       "--database-url=postgresql:///employees?application_name=a=b"]) == .serve(expected))
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
    let text = ServerOptions.help(defaults: defaults)
    #expect(text.contains("--port <port>"))
    #expect(text.contains("(default: 9001)"))
    #expect(text.contains("-h, --help"))
    #expect(ServerOptions.table.count == 13)
}

@Test(arguments: [
    (["--bogus"], "Unknown option '--bogus'."),
    (["stray"], "Unexpected argument 'stray'."),
    (["--port"], "Missing value for '--port <port>'."),
    (["--port", "abc"], "The value 'abc' is invalid for '--port <port>'."),
    (["--date-format", "rfc"], "The value 'rfc' is invalid for '--date-format <date-format>'."),
    (["--port", "70000"], "--port must be 0 to 65535."),
    (["--pool-size", "0"], "--pool-size must be at least 1."),
    (["--log-level", "loud"], "--log-level loud is not a log level."),
])
func usageErrorsNameTheOption(arguments: [String], message: String) {
    #expect(throws: ServerOptions.UsageError(description: message)) { try parse(arguments) }
}

@Test func invalidEnvironmentValueNamesTheVariable() {
    #expect(throws: ServerOptions.UsageError(
        description: "The value 'x' of EMPLOYEES_POOL_SIZE is invalid for --pool-size <pool-size>."
    )) { try parse([], ["EMPLOYEES_POOL_SIZE": "x"]) }
}
