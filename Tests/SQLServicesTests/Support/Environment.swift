import Foundation
import HTTPServer
import HTTPTestClient
import Logging
import PostgreSQL
import PostgreSQLWebService
import SQLServices
import WebService

/// The database the tests use, and servers on ephemeral ports.
///
/// `make test` exports `PGHOST`, `PGPORT` (the private cluster) and
/// `EMPLOYEES_DATABASE` (the loaded sample database). Services read as the
/// read-only role `employees_reader`, as `sql-rest` runs in production;
/// the tests that write make a schema of their own as `postgres`.
enum Environment {
    typealias SetupError = SampleDatabase.SetupError

    static func variable(_ name: String) throws -> String { try SampleDatabase.variable(name) }

    /// libpq conninfo for the sample database as `user`, with `searchPath` if given.
    static func conninfo(user: String = "employees_reader", searchPath: String? = nil) throws -> String {
        try SampleDatabase.conninfo(user: user, searchPath: searchPath)
    }

    /// The repository's root folder.
    static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The repository's `services` folder.
    static var servicesFolder: String { root.appending(path: "services").path }

    /// A new folder under the temporary folder holding `files` (path below it → text).
    static func folder(_ files: [String: String]) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appending(path: "sql-services-\(UUID().uuidString)")
        for (path, text) in files {
            let url = folder.appending(path: path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        return folder.path
    }

    /// The services of `folder`, loaded on a connection of `pool`.
    static func load(_ folder: String, pool: ConnectionPool) throws -> LoadedServices {
        try pool.withConnection { try ServiceFolder(folder).load(on: $0) }
    }

    /// The problems loading `folder` reports, as `FILE:LINE: message` lines with the folder's path left out.
    static func problems(_ files: [String: String], user: String = "employees_reader", searchPath: String? = nil) throws -> [String] {
        let folder = try folder(files)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let connection = try Connection(try conninfo(user: user, searchPath: searchPath))
        defer { connection.close() }
        do {
            _ = try ServiceFolder(folder).load(on: connection)
            return []
        } catch let error as ServiceProblems {
            return error.problems.map { $0.description.replacing(folder + "/", with: "") }
        }
    }

    /// A started server on an ephemeral port, on event loops, for `services`.
    static func serve(_ services: [any WebService], pool: ConnectionPool) throws -> HTTPServer {
        var logger = Logger(label: "sql-services-tests")
        logger.logLevel = .warning
        let router = try WebServiceRouter(services: services, runners: [QueryRunner(pool: pool)], logger: logger)
        let configuration = HTTPServer.Configuration(
            port: 0, shutdownTimeout: 5, eventLoops: 2, libraryPatches: TestPatches.policy)
        let server = HTTPServer(configuration: configuration, logger: logger) { router.respond(to: $0) }
        try server.start()
        return server
    }
}

/// A schema of its own in the sample database, as `postgres`, for tests
/// that create tables and write; dropped by `drop()`.
struct ScratchSchema {
    let name = "sqlrest_" + UUID().uuidString.prefix(8).lowercased()

    init(_ setup: String) throws {
        try run("CREATE SCHEMA \(name); SET search_path = \(name); \(setup)")
    }

    func run(_ script: String) throws {
        let connection = try Connection(try Environment.conninfo(user: "postgres"))
        defer { connection.close() }
        try connection.executeScript(script)
    }

    /// A pool of connections as `postgres` whose search path is the schema.
    func pool(size: Int = 2) throws -> ConnectionPool {
        ConnectionPool(.init(conninfo: try Environment.conninfo(user: "postgres", searchPath: name), size: size))
    }

    func drop() {
        try? run("DROP SCHEMA \(name) CASCADE")
    }
}
