import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPTestClient
import Testing

/// `employees-server` as a process, its lists followed: a drain on SIGTERM
/// ends every event stream cleanly, and `/metrics` counts them.
@Suite("Event streams of a server process")
struct LiveProcessTests {
    static func employeesServer(_ arguments: [String]) throws -> ChildProcess {
        var environment: [String: String?] = [
            "PGHOST": try SampleDatabase.variable("PGHOST"), "PGPORT": try SampleDatabase.variable("PGPORT"),
            "PGDATABASE": try SampleDatabase.variable("EMPLOYEES_DATABASE"), "PGUSER": "employees_reader", "DATABASE_URL": nil,
        ]
        for name in ProcessInfo.processInfo.environment.keys where name.hasPrefix("EMPLOYEES_") { environment[name] = .some(nil) }
        let patches = TestPatches.environment(prefix: "EMPLOYEES_")
        environment[patches.name] = patches.value
        return try ChildProcess(try ChildProcess.packageExecutable("employees-server"), arguments, environment: environment)
    }

    @Test(
        "SIGTERM: the streams end cleanly as the drain begins (the final chunk, no reset), and the server exits 0 well before its shutdown timeout"
    )
    func drainEndsStreams() throws {
        let server = try Self.employeesServer(["--port", "0", "--drain-seconds", "2", "--shutdown-timeout", "30"])
        defer { server.stop() }
        let port = try server.servingPort()
        let streams = try (0..<3).map { _ in try EventStreamClient(port: port, target: "/departments?departmentNumber=lte.d003") }
        for stream in streams {
            #expect(EventStreamClient.rows(of: try stream.events(through: "ready")).count == 3)
        }
        let metrics = try TestClient.request("GET", "/metrics", port: port).text
        #expect(metrics.contains("\nlive_streams 3\n"), "\(metrics)")
        #expect(metrics.contains("\nlive_listening 1\n"))
        let signalled = Date()
        server.send(SIGTERM)
        for stream in streams {
            #expect(try stream.next(timeout: 5) == nil)
            #expect(stream.hasEnded && !stream.wasCutOff)
            #expect(!stream.received.contains { $0.name == "reset" })
        }
        #expect(Date().timeIntervalSince(signalled) < 2, "the streams end as the drain begins, not at its end")
        #expect(server.wait(timeout: 20) == 0, "\(server.printed)")
    }

    @Test("--live off: a list asked for as an event stream is answered 406, and nothing listens")
    func liveOff() throws {
        let server = try Self.employeesServer(["--port", "0", "--drain-seconds", "0", "--live", "off"])
        defer { server.stop() }
        let stream = try EventStreamClient(port: try server.servingPort(), target: "/departments")
        #expect(stream.status == 406)
        #expect(stream.body.contains("--live"))
    }
}
