import EmployeesService
import Foundation
import HTTPTestClient
import Logging
import PostgreSQL
import PostgreSQLWebService
import ServiceHost
import Testing
import WebService

/// The real service stack, in process: `HTTPServer` on an ephemeral port,
/// the router with the employees services, `MathService` and a probe
/// service taking a JSON body and a multipart upload, and a pool on the
/// sample database (`PG*` variables, database `EMPLOYEES_DATABASE`). One
/// instance serves every suite of this target.
final class HostileServer: Sendable {
    static let shared: HostileServer = {
        do { return try HostileServer() } catch { fatalError("cannot start the server under test: \(error)") }
    }()

    /// Small enough to send a larger body quickly.
    static let maximumBodySize = 1 << 20
    /// Large enough for 10,000 short query parameters.
    static let maximumHeaderSize = 128 << 10
    static let database = ProcessInfo.processInfo.environment["EMPLOYEES_DATABASE"] ?? "employees"

    let server: HTTPServer
    let pool: ConnectionPool
    var port: Int { server.port }

    private init() throws {
        let quiet = Logger(label: "hostile") { _ in SwiftLogNoOpLogHandler() }
        pool = ConnectionPool(.init(conninfo: "dbname=\(Self.database)", size: 4, acquireTimeout: .seconds(10)))
        let router = try WebServiceRouter(
            services: [EmployeesService(), DepartmentsService(), MathService(), ProbeService()],
            runners: [QueryRunner(pool: pool)], logger: quiet, serverServices: [HealthService(pool: pool)])
        server = HTTPServer(
            configuration: .init(
                port: 0, maximumBodySize: Self.maximumBodySize, maximumHeaderSize: Self.maximumHeaderSize,
                libraryPatches: TestPatches.policy),
            logger: quiet
        ) { router.respond(to: $0) }
        try server.start()
    }

    // MARK: - Requests and checks

    /// Generous: under ThreadSanitizer, on a loaded machine, parsing a
    /// 60,000-member body took more than 30 s.
    static let readTimeout = 180

    /// One request with `Connection: close` on a new connection. The
    /// client does not half-close: libmicrohttpd as it comes, on event
    /// loops, may take the end of the client's stream, read before the
    /// response is ready, for a client gone, and close the connection
    /// unanswered (`exchange` half-closes, for bytes whose end only that
    /// tells).
    func send(_ target: String, method: String = "GET", headers: [(String, String)] = [], body: [UInt8] = []) throws -> TestClient.Response
    {
        try TestClient.request(
            method, target, port: port, headers: headers, body: body, closeSending: false, timeoutSeconds: Self.readTimeout
        )
    }

    /// One request to a target of any bytes.
    func send(target: [UInt8], method: String = "GET", headers: [(String, String)] = [], body: [UInt8] = []) throws -> TestClient.Response {
        try TestClient.request(
            method, target: target, port: port, headers: headers, body: body, closeSending: false, timeoutSeconds: Self.readTimeout
        )
    }

    /// Exactly `bytes` on a new connection, then a half-close, and the one response.
    func exchange(_ bytes: [UInt8]) throws -> TestClient.Response {
        try TestClient.exchange(bytes, port: port, closeSending: true, timeoutSeconds: Self.readTimeout)
    }

    /// The server is still up and answering.
    func expectAlive(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let response = try send("/math/sum?a=1&b=2")
        #expect(response.status == 200 && response.text == "3", "\(response)", sourceLocation: sourceLocation)
    }
}

/// A 4xx whose body is a problem-details document with that status.
func expectProblem(
    _ response: TestClient.Response, _ statuses: ClosedRange<Int> = 400...499, _ case: String = "",
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(statuses.contains(response.status), "\(`case`): \(response)", sourceLocation: sourceLocation)
    #expect(response.header("Content-Type") == "application/problem+json", "\(`case`): \(response)", sourceLocation: sourceLocation)
    let object = response.object
    #expect(object["status"] as? Int == response.status, "\(`case`): \(response)", sourceLocation: sourceLocation)
    #expect(object["detail"] is String, "\(`case`): \(response)", sourceLocation: sourceLocation)
}

/// A refusal of libmicrohttpd's own, before the server sees the request: a
/// problem document with the patches on, else libmicrohttpd's HTML page
/// with the same status (``TestPatches``).
func expectLibraryRefusal(
    _ response: TestClient.Response, _ statuses: ClosedRange<Int>, _ case: String = "",
    sourceLocation: SourceLocation = #_sourceLocation
) {
    if TestPatches.resolved.replacesErrorPages {
        expectProblem(response, statuses, `case`, sourceLocation: sourceLocation)
    } else {
        #expect(statuses.contains(response.status), "\(`case`): \(response)", sourceLocation: sourceLocation)
        #expect(response.text.contains("<html>"), "\(`case`): \(response)", sourceLocation: sourceLocation)
    }
}

/// Routes that take what the employees services do not: a whole JSON body
/// and a multipart upload.
struct ProbeService: WebService {
    let path = "/probe"
    let description = "Test routes for hostile bodies."

    var routes: [Route] {
        Route(
            .post, "/document", description: "Echoes a JSON document.",
            Body<JSONValue>(description: "Any JSON.")
        ) { (document: JSONValue) -> String in
            "\(document)".count.description
        }
        Route(
            .post, "/upload", description: "Takes a title and a file.",
            Parameter<String>("title"), Parameter<UploadedFile>("file")
        ) { title, file in
            "\(title): \(file.size)"
        }
    }
}
