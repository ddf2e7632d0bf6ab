import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPTestClient
import Testing

/// `serve` without `--strict` on a folder holding every kind of broken
/// file beside a good one: the good one serves, each broken one is named
/// in the log and serves nothing, not even at a path the server reserves.
extension BrokenFileAttackTests {
    @Test("without --strict, every kind of problem at once: the good file serves, each broken one is logged and serves nothing")
    func everyProblemLeftOut() throws {
        let folder = try Self.brokenFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (file, text) in Self.good {
            try FileManager.default.createDirectory(atPath: folder + "/things", withIntermediateDirectories: true)
            try text.write(toFile: folder + "/" + file, atomically: true, encoding: .utf8)
        }
        let run = try ProcessTests.start(["serve", "--services", folder, "--port", "0", "--drain-seconds", "0"])
        let port = try run.servingPort()
        #expect(try TestClient.request("GET", "/things", port: port).text == #"[{"number":"d001"},{"number":"d002"}]"#)
        #expect(run.errors.contains(" files with problems, serving the others"), "\(run.errors.prefix(2000))")
        Self.expectEveryProblem(
            in: run.errors.split(separator: "\n").filter { $0.contains("left out ") }.joined(separator: "\n"), folder: folder)
        // The paths the broken files claim answer as the server answers them, or not at all.
        #expect(try TestClient.request("GET", "/health/live", port: port).status == 204)
        #expect(try TestClient.request("GET", "/k6", port: port).status == 404)
        let call = try TestClient.request(
            "POST", "/jsonrpc", port: port, headers: [("Content-Type", "application/json")],
            body: Array(#"{"jsonrpc": "2.0", "method": "things.list", "id": 1}"#.utf8))
        #expect(call.text.contains("\"jsonrpc\":\"2.0\""), "\(call.text)")
        run.send(SIGTERM)
        #expect(run.wait(timeout: 30) == 0)
    }

    @Test("without --strict, a folder in which no file is free of problems does not start: exit 1, every problem")
    func nothingLeftToServe() throws {
        let folder = try Environment.folder([
            "things/one.sql": "-- GET /things/{code}\nSELECT nope FROM departments WHERE dept_no = :code",
            "things/list.sql": "-- GET /things\n-- @cache 10\nSELECT 1 AS one",
        ])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let serve = try ProcessTests.start(["serve", "--services", folder, "--port", "0"])
        #expect(Self.exited(serve, with: 1), "\(serve.errors)")
        #expect(serve.errors.contains("Error: The services in \(folder) have 2 problems:"), "\(serve.errors)")
        #expect(!serve.errors.contains("Serving"))
    }

    @Test("without --strict, a file broken under a running server is left out on reload, the others reload")
    func brokenOnReloadLeftOut() throws {
        let folder = try Environment.folder(Self.good)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try ProcessTests.start(["serve", "--services", folder, "--port", "0", "--drain-seconds", "0"])
        let port = try run.servingPort()
        try "-- GET /things/{code}\nSELECT nope FROM departments WHERE dept_no = :code".write(
            toFile: folder + "/things/one.sql", atomically: true, encoding: .utf8)
        try "-- GET /things\nSELECT dept_no AS code FROM departments ORDER BY dept_no LIMIT 1".write(
            toFile: folder + "/things/list.sql", atomically: true, encoding: .utf8)
        run.send(SIGHUP)
        #expect(run.waitUntilPrinted { $0.contains("Reloaded the services") })
        #expect(run.errors.contains("left out \(folder)/things/one.sql:2: column \"nope\" does not exist"), "\(run.errors)")
        #expect(try TestClient.request("GET", "/things", port: port).text == #"[{"code":"d001"}]"#)
        #expect(try TestClient.request("GET", "/things/d001", port: port).status == 404)
        run.send(SIGTERM)
        #expect(run.wait(timeout: 30) == 0)
    }
}
