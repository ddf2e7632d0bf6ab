import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPTestClient
import Locking
import Testing

/// The built `employees-server` executable, run as a separate process.
@Suite("employees-server executable", .serialized)
struct ServerProcessTests {
    /// Beside the test bundle (whatever the configuration), else in the
    /// package's `.build/debug`.
    static let executable: URL = {
        let besideTests = Bundle.main.executableURL?.deletingLastPathComponent().appending(path: "employees-server")
        if let besideTests, FileManager.default.isExecutableFile(atPath: besideTests.path) { return besideTests }
        return URL(filePath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: ".build/debug/employees-server")
    }()

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A running server process and everything it has printed so far.
    final class RunningServer: Sendable {
        let process: Process
        private let output = Locked("")
        /// Set when the output pipe reached its end (the process and its copies of it closed).
        private let outputEnded = Locked(false)

        init(arguments: [String]) throws {
            guard FileManager.default.isExecutableFile(atPath: ServerProcessTests.executable.path) else {
                throw Failure(description: "\(ServerProcessTests.executable.path) is missing: build it with `swift build` (swift test does)")
            }
            var environment = ProcessInfo.processInfo.environment
            environment["PGHOST"] = try TestEnvironment.variable("PGHOST")
            environment["PGPORT"] = try TestEnvironment.variable("PGPORT")
            environment["PGDATABASE"] = try TestEnvironment.variable("EMPLOYEES_DATABASE")
            environment["PGUSER"] = "employees_reader"
            environment["DATABASE_URL"] = nil
            for name in environment.keys where name.hasPrefix("EMPLOYEES_") { environment[name] = nil }
            let patches = TestPatches.environment(prefix: "EMPLOYEES_")
            environment[patches.name] = patches.value
            process = Process()
            process.executableURL = ServerProcessTests.executable
            process.arguments = arguments
            process.environment = environment
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                if data.isEmpty {
                    handle.readabilityHandler = nil
                    self?.outputEnded.withLock { $0 = true }
                } else {
                    self?.output.withLock { $0 += String(decoding: data, as: UTF8.self) }
                }
            }
            try process.run()
        }

        var printed: String { output.withLock { $0 } }

        /// Waits for the "Serving http://HOST:PORT/" (or https) line and returns the port.
        func servingPort(timeout: TimeInterval = 20) throws -> Int {
            let deadline = Date(timeIntervalSinceNow: timeout)
            while Date() < deadline {
                if let match = printed.firstMatch(of: /Serving https?:\/\/127\.0\.0\.1:(\d+)\//), let port = Int(match.1) {
                    return port
                }
                guard process.isRunning else { break }
                Thread.sleep(forTimeInterval: 0.02)
            }
            throw Failure(description: "no \"Serving\" line; output so far:\n\(printed)")
        }

        /// Waits for the process to exit; its status, or nil on timeout.
        func exitStatus(timeout: TimeInterval = 20) -> Int32? {
            let deadline = Date(timeIntervalSinceNow: timeout)
            while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            guard !process.isRunning else { return nil }
            // What it printed last may still be on its way through the pipe's handler.
            while !outputEnded.withLock({ $0 }), Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            return process.terminationStatus
        }

        func kill() {
            if process.isRunning { process.terminate() }
            _ = exitStatus(timeout: 15)
            if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        }
    }

    @Test("--help describes the options and exits 0; bad flags exit non-zero")
    func commandLine() throws {
        let help = try RunningServer(arguments: ["--help"])
        #expect(help.exitStatus() == 0)
        for option in ["--port", "--host", "--database-url", "--pool-size", "--date-format"] {
            #expect(help.printed.contains(option), "\(option) in \(help.printed)")
        }
        for arguments in [["--no-such-flag"], ["--port", "70000"], ["--pool-size", "0"], ["--date-format", "roman"]] {
            let bad = try RunningServer(arguments: arguments)
            let status = bad.exitStatus()
            #expect(status != nil && status != 0, "\(arguments): \(bad.printed)")
            #expect(!bad.printed.contains("Serving"))
        }
    }

    @Test("--version prints the latest release of CHANGELOG.md and exits 0")
    func version() throws {
        let run = try RunningServer(arguments: ["--version"])
        #expect(run.exitStatus() == 0)
        #expect(!ReleaseNotes.latestVersion.isEmpty)
        #expect(run.printed == ReleaseNotes.latestVersion + "\n")
        let help = try RunningServer(arguments: ["--help"])
        #expect(help.exitStatus() == 0)
        #expect(help.printed.contains("--version"))
    }

    @Test("serves the API on the port it prints, with epoch-millisecond dates when asked")
    func serves() throws {
        let server = try RunningServer(arguments: ["--host", "127.0.0.1", "--port", "0", "--pool-size", "2", "--drain-seconds", "0",
                                                   "--date-format", "epoch-milliseconds"])
        defer { server.kill() }
        let port = try server.servingPort()
        #expect(try TestClient.request("GET", "/health/ready", port: port).status == 204)
        let employee = try TestClient.request("GET", "/employees/10004?details=titles,salaries", port: port)
        #expect(employee.status == 200)
        #expect(employee.object["birthDate"] is Int)
        #expect((employee.object["salaries"] as? [Any])?.isEmpty == false)
        #expect(try TestClient.request("GET", "/departments", port: port).objects.count == 9)
        #expect(try TestClient.request("GET", "/employees/abc", port: port).status == 400)
        server.process.terminate()
        #expect(server.exitStatus() == 0, "\(server.printed.suffix(2000))")
    }

    @Test("--database-url is used; an unreachable database gives 503s, liveness stays 204")
    func unreachableDatabase() throws {
        let server = try RunningServer(arguments: ["--port", "0", "--database-url", try TestEnvironment.conninfo(port: "1"),
                                                   "--acquire-timeout", "0.5"])
        defer { server.kill() }
        let port = try server.servingPort()
        #expect(try TestClient.request("GET", "/health/live", port: port).status == 204)
        for target in ["/health/ready", "/employees/10004", "/departments"] {
            let reply = try TestClient.request("GET", target, port: port)
            #expect(reply.status == 503, "\(target): \(reply)")
            #expect(reply.header("Retry-After") == "1", "\(target)")
        }
        server.process.interrupt()
        #expect(server.exitStatus() == 0)
    }

    @Test("SIGTERM during a large stream: the stream completes, the process exits 0")
    func gracefulStop() throws {
        let server = try RunningServer(arguments: ["--port", "0", "--pool-size", "2", "--drain-seconds", "0"])
        defer { server.kill() }
        let port = try server.servingPort()
        let client = try TestClient(port: port, timeoutSeconds: 60)
        // 100,000 employees (7 MB): far more than socket buffers hold, and
        // done well within the server's 10 s shutdown timeout even on a
        // loaded machine running a debug build.
        try client.sendRequest("GET", "/employees?limit=100000", headers: [("Connection", "close")])
        var received = try client.read(maximum: 4096)
        #expect(!received.isEmpty)

        server.process.terminate()
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
        #expect(server.exitStatus() == 0, "\(server.printed.suffix(2000))")
        #expect(server.printed.contains("SIGTERM"))
        #expect(throws: (any Error).self) { try TestClient.request("GET", "/health/live", port: port) }
    }
}
