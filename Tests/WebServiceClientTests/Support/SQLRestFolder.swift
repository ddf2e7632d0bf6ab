import Foundation
import HTTPTestClient
import PostgreSQL

/// A folder `sql-rest init --writes` writes for a schema of the test
/// database (files of the test's own added), served by the built `sql-rest`
/// as `employees_reader`, as `ProcessTests` in SQLServicesTests runs it.
///
/// ```swift
/// let served = try SQLRestFolder(schema: "client_writes", files: ["rpc/sum.sql": "-- GET /rpc/sum\nSELECT …"])
/// defer { served.stop() }
/// let client = WebServiceClient(baseURL: served.baseURL)
/// ```
final class SQLRestFolder {
    let folder: URL
    let server: ChildProcess
    let baseURL: URL

    init(schema: String, files: [String: String] = [:]) throws {
        folder = try ClientTestEnvironment.temporaryFolder()
        let initRun = try Self.run(["init", "--out", folder.path, "--schema", schema, "--writes"])
        guard initRun.wait(timeout: 60) == 0 else {
            throw ClientTestEnvironment.SetupError(description: "sql-rest init failed: \(initRun.printed)")
        }
        for (path, text) in files {
            let file = folder.appending(path: path)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: file, atomically: true, encoding: .utf8)
        }
        server = try Self.run(["serve", "--services", folder.path, "--port", "0", "--drain-seconds", "0"])
        baseURL = URL(string: "http://127.0.0.1:\(try server.servingPort())")!
    }

    func stop() {
        server.stop()
        try? FileManager.default.removeItem(at: folder)
    }

    /// The built `sql-rest` with `arguments`, on the test database as
    /// `employees_reader`, without the test environment's `SQL_REST_*`.
    static func run(_ arguments: [String]) throws -> ChildProcess {
        var environment: [String: String?] = [
            "PGHOST": try ClientTestEnvironment.variable("PGHOST"), "PGPORT": try ClientTestEnvironment.variable("PGPORT"),
            "PGDATABASE": try ClientTestEnvironment.variable("EMPLOYEES_DATABASE"), "PGUSER": "employees_reader", "DATABASE_URL": nil,
        ]
        for name in ProcessInfo.processInfo.environment.keys where name.hasPrefix("SQL_REST_") { environment[name] = .some(nil) }
        let patches = TestPatches.environment(prefix: "SQL_REST_")
        environment[patches.name] = patches.value
        return try ChildProcess(try ChildProcess.packageExecutable("sql-rest"), arguments, environment: environment, separateErrors: true)
    }

    /// The rows `sql` selects as one text array each, a line of
    /// `|`-separated values (`NULL` for NULL), read by `connection`.
    static func lines(_ sql: String, _ connection: Connection) throws -> [String] {
        struct Line: Decodable { let line: String }
        return try connection.fetchAll(
            Line.self, "SELECT concat_ws('|', VARIADIC ARRAY(SELECT coalesce(v, 'NULL') FROM unnest(r) AS v)) AS line FROM (\(sql)) AS q(r)"
        )
        .map(\.line)
    }
}
