import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPTestClient
import Locking
import Testing

/// The built `sql-rest` executable, run as a separate process: `check`,
/// `serve`, and SIGHUP.
@Suite("sql-rest executable", .serialized)
struct ProcessTests {
    /// Beside the test bundle (whatever the configuration), else in the package's `.build/debug`.
    static let executable: URL = {
        let besideTests = Bundle.main.executableURL?.deletingLastPathComponent().appending(path: "sql-rest")
        if let besideTests, FileManager.default.isExecutableFile(atPath: besideTests.path) { return besideTests }
        return Environment.root.appending(path: ".build/debug/sql-rest")
    }()

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A running `sql-rest` and everything it has printed so far (standard output and error apart).
    final class Run: Sendable {
        let process: Process
        private let output = Locked("")
        private let errors = Locked("")

        init(_ arguments: [String]) throws {
            guard FileManager.default.isExecutableFile(atPath: ProcessTests.executable.path) else {
                throw Failure(description: "\(ProcessTests.executable.path) is missing: build it with `swift build` (swift test does)")
            }
            var environment = ProcessInfo.processInfo.environment
            environment["PGHOST"] = try Environment.variable("PGHOST")
            environment["PGPORT"] = try Environment.variable("PGPORT")
            environment["PGDATABASE"] = try Environment.variable("EMPLOYEES_DATABASE")
            environment["PGUSER"] = "employees_reader"
            environment["DATABASE_URL"] = nil
            for name in environment.keys where name.hasPrefix("SQL_REST_") { environment[name] = nil }
            process = Process()
            process.executableURL = ProcessTests.executable
            process.arguments = arguments
            process.environment = environment
            let standardOutput = Pipe()
            let standardError = Pipe()
            process.standardOutput = standardOutput
            process.standardError = standardError
            standardOutput.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                if data.isEmpty { handle.readabilityHandler = nil } else { self?.output.withLock { $0 += String(decoding: data, as: UTF8.self) } }
            }
            standardError.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                if data.isEmpty { handle.readabilityHandler = nil } else { self?.errors.withLock { $0 += String(decoding: data, as: UTF8.self) } }
            }
            try process.run()
        }

        var printed: String { output.withLock { $0 } }
        var logged: String { errors.withLock { $0 } }

        /// Waits until `condition` holds of what was logged; whether it did within `timeout`.
        func waitUntilLogged(timeout: TimeInterval = 20, _ condition: (String) -> Bool) -> Bool {
            let deadline = Date(timeIntervalSinceNow: timeout)
            while Date() < deadline {
                if condition(logged) { return true }
                Thread.sleep(forTimeInterval: 0.02)
            }
            return condition(logged)
        }

        /// The port of the "Serving http://127.0.0.1:PORT/" line.
        func servingPort() throws -> Int {
            var port: Int?
            _ = waitUntilLogged { text in
                port = text.firstMatch(of: /Serving http:\/\/127\.0\.0\.1:(\d+)\//).flatMap { Int($0.1) }
                return port != nil || !process.isRunning
            }
            guard let port else { throw Failure(description: "no \"Serving\" line; logged so far:\n\(logged)") }
            return port
        }

        /// Waits for the process to exit; its status, or nil on timeout.
        func exitStatus(timeout: TimeInterval = 30) -> Int32? {
            let deadline = Date(timeIntervalSinceNow: timeout)
            while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            guard !process.isRunning else { return nil }
            Thread.sleep(forTimeInterval: 0.1)  // The last output.
            return process.terminationStatus
        }

        func signal(_ number: Int32) {
            kill(process.processIdentifier, number)
        }

        deinit {
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
    }

    static let brokenFiles = [
        "things/good.sql": "-- GET /things\nSELECT dept_no AS number FROM departments ORDER BY dept_no",
        "things/bad.sql": "-- GET /things/{id}\n-- @cache forever\nSELECT nope FROM departments WHERE dept_no = :id",
    ]

    @Test("check on the repository's services: a summary, exit 0")
    func checkPasses() throws {
        let run = try Run(["check", "--services", Environment.servicesFolder])
        #expect(run.exitStatus() == 0)
        #expect(run.printed.hasPrefix("4 operations in 2 services:\n"))
        #expect(run.printed.contains("GET /employees/{employeeNumber}"))
        #expect(run.printed.contains("object → Employee; details: titles, salaries, departments"))
    }

    @Test("check on the example of Examples/sql-services: a summary, exit 0")
    func checkExample() throws {
        let run = try Run(["check", "--services", Environment.root.appending(path: "Examples/sql-services").path])
        #expect(run.exitStatus() == 0)
        #expect(run.printed == """
            3 operations in 1 service:
              GET /titles                   list → [TitleSummary]
              GET /titles/{title}           object → Title; details: pay, departments
              GET /titles/{title}/holders   list, paged → [Holder]; details: salaries

            """)
    }

    @Test("check on broken files: every problem as FILE:LINE: message on standard error, exit 1")
    func checkFails() throws {
        let folder = try Environment.folder(Self.brokenFiles)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try Run(["check", "--services", folder])
        #expect(run.exitStatus() == 1)
        #expect(run.printed.isEmpty)
        #expect(run.logged == """
            The services in \(folder) have 1 problem:
            \(folder)/things/bad.sql:2: unknown directive @cache; the header takes @param, @returns, @paged, @filter, @order, @notfound and @service

            """)
    }

    @Test("serve refuses to start on broken files: the problems on standard error, exit 1")
    func serveRefuses() throws {
        let folder = try Environment.folder(Self.brokenFiles.merging(["things/bad.sql": "-- GET /things/{id}\nSELECT nope FROM departments WHERE dept_no = :id"]) { $1 })
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try Run(["serve", "--services", folder, "--port", "0"])
        #expect(run.exitStatus() == 1)
        #expect(run.logged.contains("Error: The services in \(folder) have 1 problem:\n\(folder)/things/bad.sql:2: column \"nope\" does not exist\n"))
        #expect(!run.logged.contains("Serving"))
    }

    @Test("usage: a command is required, --services too")
    func usage() throws {
        let none = try Run([])
        #expect(none.exitStatus() == 64)
        #expect(none.logged.contains("Missing command (serve, check)"))
        let unknown = try Run(["run"])
        #expect(unknown.exitStatus() == 64)
        let missing = try Run(["serve", "--port", "0"])
        #expect(missing.exitStatus() == 64)
        #expect(missing.logged.contains("Missing '--services <services>' (or SQL_REST_SERVICES)."))
        let help = try Run(["--help"])
        #expect(help.exitStatus() == 0)
        #expect(help.printed.contains("COMMANDS:\n  serve\n"))
        #expect(help.printed.contains("--services <services>"))
    }

    @Test("--version prints the latest release of CHANGELOG.md, with or without a command, and exits 0")
    func version() throws {
        #expect(!ReleaseNotes.latestVersion.isEmpty)
        for arguments in [["--version"], ["serve", "--version"], ["check", "--version"]] {
            let run = try Run(arguments)
            #expect(run.exitStatus() == 0, "\(arguments): \(run.logged)")
            #expect(run.printed == ReleaseNotes.latestVersion + "\n", "\(arguments)")
        }
    }

    @Test("serve, then SIGHUP: a good folder replaces the services, a broken one is logged and the running ones stay")
    func reload() throws {
        let folder = try Environment.folder(["things/list.sql": "-- GET /things\nSELECT dept_no AS number FROM departments ORDER BY dept_no LIMIT 2"])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try Run(["serve", "--services", folder, "--port", "0", "--shutdown-timeout", "1"])
        let port = try run.servingPort()
        #expect(try TestClient.request("GET", "/things", port: port).text == #"[{"number":"d001"},{"number":"d002"}]"#)
        #expect(try TestClient.request("GET", "/things/d001", port: port).status == 404)

        // A good change: one more operation, another statement.
        try "-- GET /things\nSELECT dept_no AS code FROM departments ORDER BY dept_no LIMIT 1".write(
            toFile: folder + "/things/list.sql", atomically: true, encoding: .utf8)
        try "-- GET /things/{code}\nSELECT dept_name AS name FROM departments WHERE dept_no = :code".write(
            toFile: folder + "/things/one.sql", atomically: true, encoding: .utf8)
        run.signal(SIGHUP)
        #expect(run.waitUntilLogged { $0.contains("Reloaded the services") })
        #expect(try TestClient.request("GET", "/things", port: port).text == #"[{"code":"d001"}]"#)
        #expect(try TestClient.request("GET", "/things/d009", port: port).text == #"{"name":"Customer Service"}"#)

        // A broken change: logged, FILE:LINE for each problem; the previous services still answer.
        try "-- GET /things/{code}\nSELECT nope FROM departments WHERE dept_no = :code".write(
            toFile: folder + "/things/one.sql", atomically: true, encoding: .utf8)
        run.signal(SIGHUP)
        #expect(run.waitUntilLogged { $0.contains("\(folder)/things/one.sql:2: column \"nope\" does not exist") })
        #expect(run.logged.contains("The services were not reloaded; the previous ones still serve"))
        #expect(try TestClient.request("GET", "/things/d009", port: port).text == #"{"name":"Customer Service"}"#)
        #expect(try TestClient.request("GET", "/health/live", port: port).status == 204)

        run.signal(SIGTERM)
        #expect(run.exitStatus() == 0)
    }
}
