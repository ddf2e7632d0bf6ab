import EmployeesService
import Foundation
import HTTPTestClient
import PostgreSQL
import PostgreSQLWebService
import ServiceHost
import WebService

/// The database and the in-process server the API tests share.
///
/// `make test` exports `PGHOST`, `PGPORT` (the private cluster) and
/// `EMPLOYEES_DATABASE` (the loaded sample database); the services connect
/// to that database as the read-only role `employees_reader`, as the
/// executable does in production.
enum TestEnvironment {
    typealias SetupError = SampleDatabase.SetupError

    /// The value of an environment variable that `make test` sets.
    static func variable(_ name: String) throws -> String { try SampleDatabase.variable(name) }

    /// libpq conninfo for the sample database as `user` (the read-only role by default).
    static func conninfo(user: String = "employees_reader", port: String? = nil) throws -> String {
        try SampleDatabase.conninfo(user: user, port: port)
    }

    /// A pool on the sample database as `employees_reader`.
    static func pool(size: Int = 4, acquireTimeout: Duration = .seconds(5)) throws -> ConnectionPool {
        ConnectionPool(.init(conninfo: try conninfo(), size: size, acquireTimeout: acquireTimeout))
    }

    /// Rows of `sql` on the sample database, each as its columns' text.
    static func rows(_ sql: String, _ arguments: SQLArguments = [:]) throws -> [[String?]] {
        let connection = try Connection(try conninfo())
        defer { connection.close() }
        let cursor = try connection.query(sql, arguments)
        defer { cursor.close() }
        var rows: [[String?]] = []
        while let row = try cursor.next() {
            rows.append((0..<row.columns.count).map { row[$0] })
        }
        return rows
    }

    /// The one integer `sql` answers.
    static func integer(_ sql: String, _ arguments: SQLArguments = [:]) throws -> Int {
        guard let text = try rows(sql, arguments).first?.first ?? nil, let value = Int(text) else {
            throw SetupError(description: "expected one integer from \(sql)")
        }
        return value
    }

    /// The row count of every table of the sample database.
    static func tableCounts() throws -> [String: Int] {
        let tables = ["employees", "departments", "dept_manager", "dept_emp", "titles", "salaries"]
        let sql = tables.map { "SELECT '\($0)', count(*) FROM \($0)" }.joined(separator: " UNION ALL ")
        var counts: [String: Int] = [:]
        for row in try rows(sql) {
            counts[row[0] ?? ""] = Int(row[1] ?? "") ?? -1
        }
        return counts
    }

    /// The built `employees-server` started with `arguments`, on the test
    /// database as `employees_reader`: no `DATABASE_URL` nor `EMPLOYEES_*`
    /// variable of the test's environment but the libmicrohttpd patches of
    /// `TestPatches`. Standard output and error together in `output`.
    static func startEmployeesServer(_ arguments: [String]) throws -> ChildProcess {
        var environment: [String: String?] = [
            "PGHOST": try variable("PGHOST"), "PGPORT": try variable("PGPORT"), "PGDATABASE": try variable("EMPLOYEES_DATABASE"),
            "PGUSER": "employees_reader", "DATABASE_URL": nil,
        ]
        for name in ProcessInfo.processInfo.environment.keys where name.hasPrefix("EMPLOYEES_") { environment[name] = .some(nil) }
        let patches = TestPatches.environment(prefix: "EMPLOYEES_")
        environment[patches.name] = patches.value
        return try ChildProcess(try ChildProcess.packageExecutable("employees-server"), arguments, environment: environment)
    }
}

/// A server on an ephemeral port of 127.0.0.1 serving the four example
/// services, started once for all the API tests and kept for the life of
/// the test process.
final class TestServer: Sendable {
    let server: HTTPServer
    let pool: ConnectionPool

    var port: Int { server.port }

    private static let started: Result<TestServer, any Error> = Result { try TestServer() }

    /// The shared server; throws (with the reason) when the environment is not set up.
    static func shared() throws -> TestServer {
        try started.get()
    }

    private init() throws {
        pool = try TestEnvironment.pool(size: 8)
        server = try Self.serve(
            [EmployeesService(), DepartmentsService(), MathService()], runner: QueryRunner(pool: pool),
            serverServices: [HealthService(pool: pool)])
        try server.start()
    }

    /// A new (not started) server on an ephemeral port for `services`
    /// (and `serverServices` at their reserved paths), on event loops as
    /// `employees-server` runs them.
    static func serve(
        _ services: [any WebService], runner: QueryRunner? = nil, shutdownTimeout: Double = 5, serverServices: [any WebService] = []
    ) throws -> HTTPServer {
        let router = try WebServiceRouter(services: services, runners: runner.map { [$0] } ?? [], serverServices: serverServices)
        let configuration = HTTPServer.Configuration(
            port: 0, shutdownTimeout: shutdownTimeout, eventLoops: 2, libraryPatches: TestPatches.policy)
        return HTTPServer(configuration: configuration) {
            router.respond(to: $0)
        }
    }

    /// Sends a request to the shared server.
    func get(_ target: String, headers: [(String, String)] = []) throws -> TestClient.Response {
        try TestClient.request("GET", target, port: port, headers: headers)
    }
}
