import Foundation
import HTTPTestClient
import Testing

/// While writing files: `check` on the one being written, and `serve --watch`.
@Suite("sql-rest while writing files", .serialized)
struct WatchAndCheckTests {
    static let files = [
        "things/good.sql": "-- GET /things\nSELECT dept_no AS number FROM departments ORDER BY dept_no",
        "things/bad.sql": "-- GET /things/{id}\nSELECT nope FROM departments WHERE dept_no = :id",
        "other/worse.sql": "-- GET /other\nSELEC 1",
    ]

    @Test("check on one file prints that file's problems only, and passes a good file")
    func checkOneFile() throws {
        let folder = try Environment.folder(Self.files)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let bad = try ProcessTests.start(["check", "--services", folder + "/things/bad.sql"])
        #expect(bad.wait(timeout: 30) == 1)
        #expect(bad.errors.contains("\(folder)/things/bad.sql:2: column \"nope\" does not exist"), "\(bad.errors)")
        #expect(!bad.errors.contains("worse.sql"), "\(bad.errors)")
        let good = try ProcessTests.start(["check", "--services", folder + "/things/good.sql"])
        #expect(good.wait(timeout: 30) == 0, "\(good.errors)")
        #expect(good.output.contains("GET /things"))
        let whole = try ProcessTests.start(["check", "--services", folder])
        #expect(whole.wait(timeout: 30) == 1)
        #expect(whole.errors.contains("worse.sql") && whole.errors.contains("bad.sql"))
    }

    @Test("serve --watch --strict serves a file added, changed or removed without a signal; a broken file keeps the running services")
    func watch() throws {
        let folder = try Environment.folder(["things/good.sql": Self.files["things/good.sql"]!])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try ProcessTests.start(["serve", "--services", folder, "--port", "0", "--watch", "--strict"])
        let port = try run.servingPort()
        #expect(try TestClient.request("GET", "/things", port: port).status == 200)
        #expect(try TestClient.request("GET", "/titles", port: port).status == 404)

        func waitFor(_ target: String, status: Int) -> Bool {
            let deadline = Date(timeIntervalSinceNow: 10)
            while Date() < deadline {
                if (try? TestClient.request("GET", target, port: port).status) == status { return true }
                Thread.sleep(forTimeInterval: 0.1)
            }
            return false
        }
        try FileManager.default.createDirectory(atPath: folder + "/titles", withIntermediateDirectories: true)
        try "-- GET /titles\nSELECT DISTINCT title FROM titles ORDER BY title".write(
            toFile: folder + "/titles/list.sql", atomically: true, encoding: .utf8)
        #expect(waitFor("/titles", status: 200), "\(run.errors.suffix(1500))")

        try "-- GET /titles\nSELECT nope FROM titles".write(toFile: folder + "/titles/list.sql", atomically: true, encoding: .utf8)
        #expect(run.waitUntilPrinted { $0.contains("were not reloaded") })
        #expect(try TestClient.request("GET", "/titles", port: port).status == 200)

        try FileManager.default.removeItem(atPath: folder + "/titles")
        #expect(waitFor("/titles", status: 404), "\(run.errors.suffix(1500))")
    }
}
