import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPTestClient
import Testing

/// The built `employees-server` executable, run as a separate process.
@Suite("employees-server executable", .serialized)
struct ServerProcessTests {
    @Test("--help describes the options and exits 0; bad flags exit non-zero")
    func commandLine() throws {
        let help = try TestEnvironment.startEmployeesServer(["--help"])
        #expect(help.wait(timeout: 20) == 0)
        for option in ["--port", "--host", "--database-url", "--pool-size", "--date-format"] {
            #expect(help.printed.contains(option), "\(option) in \(help.printed)")
        }
        for arguments in [["--no-such-flag"], ["--port", "70000"], ["--pool-size", "0"], ["--date-format", "roman"]] {
            let bad = try TestEnvironment.startEmployeesServer(arguments)
            let status = bad.wait(timeout: 20)
            #expect(status != nil && status != 0, "\(arguments): \(bad.printed)")
            #expect(!bad.printed.contains("Serving"))
        }
    }

    @Test("--version prints the latest release of CHANGELOG.md and exits 0")
    func version() throws {
        let run = try TestEnvironment.startEmployeesServer(["--version"])
        #expect(run.wait(timeout: 20) == 0)
        #expect(!ReleaseNotes.latestVersion.isEmpty)
        #expect(run.printed == ReleaseNotes.latestVersion + "\n")
        let help = try TestEnvironment.startEmployeesServer(["--help"])
        #expect(help.wait(timeout: 20) == 0)
        #expect(help.printed.contains("--version"))
    }

    @Test("serves the API on the port it prints, with epoch-millisecond dates when asked")
    func serves() throws {
        let server = try TestEnvironment.startEmployeesServer([
            "--host", "127.0.0.1", "--port", "0", "--pool-size", "2", "--drain-seconds", "0",
            "--date-format", "epoch-milliseconds",
        ])
        defer { server.stop() }
        let port = try server.servingPort()
        #expect(try TestClient.request("GET", "/health/ready", port: port).status == 204)
        let employee = try TestClient.request("GET", "/employees/10004?details=titles,salaries", port: port)
        #expect(employee.status == 200)
        #expect(employee.object["birthDate"] is Int)
        #expect((employee.object["salaries"] as? [Any])?.isEmpty == false)
        #expect(try TestClient.request("GET", "/departments", port: port).objects.count == 9)
        #expect(try TestClient.request("GET", "/employees/abc", port: port).status == 400)
        server.send(SIGTERM)
        #expect(server.wait(timeout: 20) == 0, "\(server.printed.suffix(2000))")
    }

    @Test("--database-url is used; an unreachable database gives 503s, liveness stays 204")
    func unreachableDatabase() throws {
        let server = try TestEnvironment.startEmployeesServer([
            "--port", "0", "--database-url", try TestEnvironment.conninfo(port: "1"),
            "--acquire-timeout", "0.5",
        ])
        defer { server.stop() }
        let port = try server.servingPort()
        #expect(try TestClient.request("GET", "/health/live", port: port).status == 204)
        for target in ["/health/ready", "/employees/10004", "/departments"] {
            let reply = try TestClient.request("GET", target, port: port)
            #expect(reply.status == 503, "\(target): \(reply)")
            #expect(reply.header("Retry-After") == "1", "\(target)")
        }
        server.send(SIGINT)
        #expect(server.wait(timeout: 20) == 0)
    }

    @Test("SIGTERM during a large stream: the stream completes, the process exits 0")
    func gracefulStop() throws {
        let server = try TestEnvironment.startEmployeesServer(["--port", "0", "--pool-size", "2", "--drain-seconds", "0"])
        defer { server.stop() }
        let port = try server.servingPort()
        let client = try TestClient(port: port, timeoutSeconds: 60)
        // 100,000 employees (7 MB): far more than socket buffers hold, and
        // done well within the server's 10 s shutdown timeout even on a
        // loaded machine running a debug build.
        try client.sendRequest("GET", "/employees?limit=100000", headers: [("Connection", "close")])
        var received = try client.read(maximum: 4096)
        #expect(!received.isEmpty)

        server.send(SIGTERM)
        // Read slowly for a moment while the server is stopping, then the rest.
        for _ in 0..<5 {
            Thread.sleep(forTimeInterval: 0.05)
            received += try client.read(maximum: 4096)
        }
        received += try client.readToEnd()
        let reply = try TestClient.Response(parsing: received)
        #expect(reply.status == 200)
        var count = 0
        var last: Any?
        try JSONReader.forEachElement(ofArray: reply.body) { employee in
            count += 1
            last = (employee as? [String: Any])?["employeeNumber"]
        }
        #expect(count == 100_000)
        #expect(last as? Int == 110_000)
        #expect(server.wait(timeout: 20) == 0, "\(server.printed.suffix(2000))")
        #expect(server.printed.contains("SIGTERM"))
        #expect(throws: (any Error).self) { try TestClient.request("GET", "/health/live", port: port) }
    }
}
