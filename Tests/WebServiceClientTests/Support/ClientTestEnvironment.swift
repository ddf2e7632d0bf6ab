import EmployeesService
import Foundation
import HTTPTestClient
import PostgreSQL
import PostgreSQLWebService
import ServiceHost
import WebService
import WebServiceClient

/// The real database and in-process servers the client tests call.
///
/// `make test` exports `PGHOST`, `PGPORT` and `EMPLOYEES_DATABASE`; the
/// services connect as the read-only role `employees_reader`, as
/// `employees-server` does.
enum ClientTestEnvironment {
    typealias SetupError = SampleDatabase.SetupError

    static func variable(_ name: String) throws -> String { try SampleDatabase.variable(name) }

    static func conninfo() throws -> String { try SampleDatabase.conninfo() }

    /// The one integer `sql` answers, straight from the database.
    static func integer(_ sql: String) throws -> Int {
        let connection = try Connection(try conninfo())
        defer { connection.close() }
        guard let value = try connection.fetchOne(Int.self, sql) else { throw SetupError(description: "no value from \(sql)") }
        return value
    }

    /// A new, started server of the example services and the test's
    /// ``EchoService`` on an ephemeral port of 127.0.0.1, on event loops as
    /// `employees-server` runs them. Stop it with `stop()`.
    static func startServer(poolSize: Int = 4) throws -> HTTPServer {
        let pool = ConnectionPool(.init(conninfo: try conninfo(), size: poolSize, acquireTimeout: .seconds(5)))
        let router = try WebServiceRouter(
            services: [EmployeesService(), DepartmentsService(), MathService(), EchoService()],
            runners: [QueryRunner(pool: pool)])
        let server = HTTPServer(configuration: .init(port: 0, shutdownTimeout: 2, eventLoops: 2)) {
            router.respond(to: $0)
        }
        try server.start()
        return server
    }

    /// The server most tests share, started on first use.
    static let shared: Result<HTTPServer, any Error> = Result { try startServer(poolSize: 8) }

    static func sharedClient(configuration: WebServiceClient.Configuration = .init()) throws -> WebServiceClient {
        WebServiceClient(baseURL: try baseURL(of: shared.get()), configuration: configuration)
    }

    static func baseURL(of server: HTTPServer) -> URL {
        URL(string: "http://127.0.0.1:\(server.port)")!
    }

    /// A new empty folder under the temporary directory.
    static func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appending(path: "client-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A port on 127.0.0.1 where nothing listens (a server started and stopped).
    static func closedPort() throws -> Int {
        let server = HTTPServer(configuration: .init(port: 0)) { _ in HTTPResponse(status: .noContent) }
        try server.start()
        let port = server.port
        server.stop()
        return port
    }

    /// VmRSS or VmHWM of this process, in kilobytes.
    static func memory(_ field: String = "VmRSS") -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
        }
        return 0
    }
}

// MARK: - The shapes the tests decode

struct Employee: Codable, Equatable {
    var employeeNumber: Int
    var firstName: String
    var lastName: String
    var birthDate: Date
    var gender: String
    var hireDate: Date
    var titles: [Title]?
    var salaries: [Salary]?
}

struct Title: Codable, Equatable {
    var title: String
    var fromDate: Date
    var toDate: Date?
}

struct Salary: Codable, Equatable {
    var salary: Int
    var fromDate: Date
    var toDate: Date
}

struct EmployeeSummary: Codable, Equatable {
    var employeeNumber: Int
    var firstName: String
    var lastName: String
}

struct Department: Codable, Equatable {
    var departmentNumber: String
    var departmentName: String
}

/// A day as the server writes it, for comparisons.
func day(_ text: String) -> Date {
    WebServiceDecoding.date(from: text)!
}
