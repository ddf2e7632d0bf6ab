import Foundation
import HTTPTestClient
import Testing

/// The built `employees-client` executable, run as a separate process
/// against an in-process server.
@Suite("employees-client executable")
struct EmployeesClientProcessTests {
    struct Outcome {
        var status: Int32
        var output: String
        var errors: String
    }

    /// Runs the client to its end (60 s at most) with `arguments`, awaiting
    /// it without holding a thread of the test run.
    static func run(_ arguments: [String]) async throws -> Outcome {
        let client = try ChildProcess(try ChildProcess.packageExecutable("employees-client"), arguments, separateErrors: true)
        for _ in 0..<3000 where client.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        guard let status = client.wait(timeout: 5) else {
            client.send(SIGTERM)
            throw ClientTestEnvironment.SetupError(description: "employees-client \(arguments) did not end within 60 s")
        }
        return Outcome(status: status, output: client.output, errors: client.errors)
    }

    private var baseURL: String {
        get throws { ClientTestEnvironment.baseURL(of: try ClientTestEnvironment.shared.get()).absoluteString }
    }

    @Test func getPrintsTheEmployeeAsJSON() async throws {
        let outcome = try await Self.run(["--base-url", try baseURL, "get", "10004", "--details", "titles,salaries"])
        #expect(outcome.status == 0, "\(outcome.errors)")
        let employee = try JSONReader.value(outcome.output.utf8) as? [String: Any]
        #expect(employee?["employeeNumber"] as? Int == 10004)
        let salaries = try ClientTestEnvironment.integer("SELECT count(*)::int FROM salaries WHERE emp_no = 10004")
        #expect((employee?["salaries"] as? [Any])?.count == salaries)
        #expect((employee?["titles"] as? [Any]) != nil)
    }

    @Test func searchPrintsALinePerMatch() async throws {
        let outcome = try await Self.run(["--base-url", try baseURL, "search", "bal*"])
        #expect(outcome.status == 0, "\(outcome.errors)")
        let lines = outcome.output.split(separator: "\n")
        let expected = try ClientTestEnvironment.integer(
            "SELECT count(*)::int FROM employees WHERE lower(first_name) LIKE 'bal%' OR lower(last_name) LIKE 'bal%'")
        #expect(lines.count == expected)
        let first = try #require(lines.first).split(separator: "\t")
        #expect(first.count == 3)
        #expect(Int(first[0]) != nil)
    }

    @Test func rpcCallsAnyOperation() async throws {
        let sum = try await Self.run(["--base-url", try baseURL, "rpc", "math.getSum", "a=2", "b=4"])
        #expect(sum.status == 0, "\(sum.errors)")
        #expect(sum.output == "6\n")
        let list = try await Self.run(["--base-url", try baseURL, "rpc", "math.getSum", "values=1", "values=2", "values=3.5"])
        #expect(list.output == "6.5\n")
        let employee = try await Self.run([
            "--base-url", try baseURL, "rpc", "employees.getByEmployeeNumber", "employeeNumber=10004", #"details=["titles"]"#,
        ])
        let object = try JSONReader.value(employee.output.utf8) as? [String: Any]
        #expect(object?["employeeNumber"] as? Int == 10004)
        let unknown = try await Self.run(["--base-url", try baseURL, "rpc", "math.nothing"])
        #expect(unknown.status != 0)
        #expect(unknown.errors.contains("-32601"))
    }

    @Test func withACacheAnUnreachableServerGivesTheStaleAnswer() async throws {
        let cache = try ClientTestEnvironment.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: cache) }
        let server = try ClientTestEnvironment.startServer(poolSize: 1)
        let url = ClientTestEnvironment.baseURL(of: server).absoluteString
        let online = try await Self.run(["--base-url", url, "--cache", cache.path, "get", "10010", "--details", "titles"])
        #expect(online.status == 0, "\(online.errors)")
        #expect(!online.errors.contains("stale"))
        let port = server.port
        server.stop()
        // The port held, so that it stays unreachable: another test's server cannot be given it.
        let held = HeldPort(port)
        defer { withExtendedLifetime(held) {} }

        let offline = try await Self.run(["--base-url", url, "--cache", cache.path, "get", "10010", "--details", "titles"])
        #expect(offline.status == 0, "\(offline.errors)")
        #expect(offline.output == online.output)
        #expect(offline.errors.contains("stale"))
        #expect(offline.errors.contains(" s old)"), "the stale answer's age: \(offline.errors)")

        let notStored = try await Self.run(["--base-url", url, "--cache", cache.path, "get", "10011"])
        #expect(notStored.status != 0)
        #expect(notStored.errors.contains("cannot reach"))
        #expect(notStored.output.isEmpty)

        let noCache = try await Self.run(["--base-url", url, "get", "10010", "--details", "titles"])
        #expect(noCache.status != 0)
        #expect(noCache.errors.contains("cannot reach \(url)"))
        #expect(noCache.output.isEmpty)
    }

    @Test func aServerErrorIsAClearMessage() async throws {
        let outcome = try await Self.run(["--base-url", try baseURL, "get", "1"])
        #expect(outcome.status != 0)
        #expect(outcome.errors.contains("404"))
        #expect(outcome.errors.contains("no employee number 1"))
        let bad = try await Self.run(["--base-url", "ftp://nowhere", "get", "1"])
        #expect(bad.status != 0)
        #expect(bad.errors.contains("--base-url"))
    }

    @Test func versionPrintsTheLatestReleaseOfTheChangelog() async throws {
        let outcome = try await Self.run(["--version"])
        #expect(outcome.status == 0, "\(outcome.errors)")
        #expect(!ReleaseNotes.latestVersion.isEmpty)
        #expect(outcome.output == ReleaseNotes.latestVersion + "\n")
    }
}
