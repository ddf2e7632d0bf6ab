import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPTestClient
import Testing

/// The built `sql-rest` executable, run as a separate process: `check`,
/// `serve`, and SIGHUP.
@Suite("sql-rest executable", .serialized)
struct ProcessTests {
    /// The built `sql-rest`.
    static var executable: String {
        get throws { try ChildProcess.packageExecutable("sql-rest") }
    }

    /// The built `sql-rest` started with `arguments`, on the test database
    /// as `employees_reader`, without the `DATABASE_URL` and `SQL_REST_*`
    /// variables of the test's environment but the libmicrohttpd patches of
    /// `TestPatches`; standard output in `output`, standard error in
    /// `errors`. `launcher`, when given, is a command that runs it (`ip
    /// netns exec NAME`), whose process becomes the server's.
    static func start(_ arguments: [String], launcher: [String] = []) throws -> ChildProcess {
        var environment: [String: String?] = [
            "PGHOST": try Environment.variable("PGHOST"), "PGPORT": try Environment.variable("PGPORT"),
            "PGDATABASE": try Environment.variable("EMPLOYEES_DATABASE"), "PGUSER": "employees_reader", "DATABASE_URL": nil,
        ]
        for name in ProcessInfo.processInfo.environment.keys where name.hasPrefix("SQL_REST_") { environment[name] = .some(nil) }
        let patches = TestPatches.environment(prefix: "SQL_REST_")
        environment[patches.name] = patches.value
        let command = launcher + [try executable] + arguments
        return try ChildProcess(command[0], Array(command.dropFirst()), environment: environment, separateErrors: true)
    }

    static let brokenFiles = [
        "things/good.sql": "-- GET /things\nSELECT dept_no AS number FROM departments ORDER BY dept_no",
        "things/bad.sql": "-- GET /things/{id}\n-- @cache forever\nSELECT nope FROM departments WHERE dept_no = :id",
    ]

    @Test("check on the repository's services: a summary, exit 0")
    func checkPasses() throws {
        let run = try Self.start(["check", "--services", Environment.servicesFolder])
        #expect(run.wait(timeout: 30) == 0)
        #expect(run.output.hasPrefix("4 operations in 2 services:\n"))
        #expect(run.output.contains("GET /employees/{employeeNumber}"))
        #expect(run.output.contains("object → Employee; details: titles, salaries, departments"))
    }

    @Test("check on the example of Examples/sql-services: a summary, exit 0")
    func checkExample() throws {
        let run = try Self.start(["check", "--services", Environment.root.appending(path: "Examples/sql-services").path])
        #expect(run.wait(timeout: 30) == 0)
        #expect(
            run.output == """
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
        let run = try Self.start(["check", "--services", folder])
        #expect(run.wait(timeout: 30) == 1)
        #expect(run.output.isEmpty)
        #expect(
            run.errors == """
                The services in \(folder) have 1 problem:
                \(folder)/things/bad.sql:2: unknown directive @cache; the header takes @param, @returns, @paged, @filter, @order, @notfound, @service, @example, @listen, @writes, @unfiltered and @function

                """)
    }

    @Test("serve --strict refuses to start on broken files: the problems on standard error, exit 1")
    func serveRefuses() throws {
        let folder = try Environment.folder(
            Self.brokenFiles.merging(["things/bad.sql": "-- GET /things/{id}\nSELECT nope FROM departments WHERE dept_no = :id"]) { $1 })
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try Self.start(["serve", "--services", folder, "--port", "0", "--strict"])
        #expect(run.wait(timeout: 30) == 1)
        #expect(
            run.errors.contains(
                "Error: The services in \(folder) have 1 problem:\n\(folder)/things/bad.sql:2: column \"nope\" does not exist\n"))
        #expect(!run.errors.contains("Serving"))
    }

    @Test("usage: a command is required, --services too")
    func usage() throws {
        let none = try Self.start([])
        #expect(none.wait(timeout: 30) == 64)
        #expect(none.errors.contains("Missing command (serve, check, init)."))
        let unknown = try Self.start(["run"])
        #expect(unknown.wait(timeout: 30) == 64)
        let missing = try Self.start(["serve", "--port", "0"])
        #expect(missing.wait(timeout: 30) == 64)
        #expect(missing.errors.contains("Missing '--services <services>' (or SQL_REST_SERVICES)."))
        let help = try Self.start(["--help"])
        #expect(help.wait(timeout: 30) == 0)
        #expect(help.output.contains("COMMANDS:\n  serve\n"))
        #expect(help.output.contains("--services <services>"))
    }

    @Test("--version prints the latest release of CHANGELOG.md, with or without a command, and exits 0")
    func version() throws {
        #expect(!ReleaseNotes.latestVersion.isEmpty)
        for arguments in [["--version"], ["serve", "--version"], ["check", "--version"]] {
            let run = try Self.start(arguments)
            #expect(run.wait(timeout: 30) == 0, "\(arguments): \(run.errors)")
            #expect(run.output == ReleaseNotes.latestVersion + "\n", "\(arguments)")
        }
    }

    @Test("serve --strict, then SIGHUP: a good folder replaces the services, a broken one is logged and the running ones stay")
    func reload() throws {
        let folder = try Environment.folder([
            "things/list.sql": "-- GET /things\nSELECT dept_no AS number FROM departments ORDER BY dept_no LIMIT 2"
        ])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try Self.start(["serve", "--services", folder, "--port", "0", "--shutdown-timeout", "1", "--strict"])
        let port = try run.servingPort()
        #expect(try TestClient.request("GET", "/things", port: port).text == #"[{"number":"d001"},{"number":"d002"}]"#)
        #expect(try TestClient.request("GET", "/things/d001", port: port).status == 404)

        // A good change: one more operation, another statement.
        try "-- GET /things\nSELECT dept_no AS code FROM departments ORDER BY dept_no LIMIT 1".write(
            toFile: folder + "/things/list.sql", atomically: true, encoding: .utf8)
        try "-- GET /things/{code}\nSELECT dept_name AS name FROM departments WHERE dept_no = :code".write(
            toFile: folder + "/things/one.sql", atomically: true, encoding: .utf8)
        run.send(SIGHUP)
        #expect(run.waitUntilPrinted { $0.contains("Reloaded the services") })
        #expect(try TestClient.request("GET", "/things", port: port).text == #"[{"code":"d001"}]"#)
        #expect(try TestClient.request("GET", "/things/d009", port: port).text == #"{"name":"Customer Service"}"#)

        // A broken change: logged, FILE:LINE for each problem; the previous services still answer.
        try "-- GET /things/{code}\nSELECT nope FROM departments WHERE dept_no = :code".write(
            toFile: folder + "/things/one.sql", atomically: true, encoding: .utf8)
        run.send(SIGHUP)
        #expect(run.waitUntilPrinted { $0.contains("\(folder)/things/one.sql:2: column \"nope\" does not exist") })
        #expect(run.errors.contains("The services were not reloaded; the previous ones still serve"))
        #expect(try TestClient.request("GET", "/things/d009", port: port).text == #"{"name":"Customer Service"}"#)
        #expect(try TestClient.request("GET", "/health/live", port: port).status == 204)

        run.send(SIGTERM)
        #expect(run.wait(timeout: 30) == 0)
    }
}
