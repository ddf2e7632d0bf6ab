import EmployeesService
import Foundation
import HTTPTestClient
import PostgreSQLWebService
import Testing
import WebService

/// CORS over a real socket: preflights answered before the handler, the
/// allow headers on responses to allowed origins only.
@Suite("Cross-origin requests (CORS)")
struct CrossOriginAPITests {
    func withServer(origins: [String], _ body: (Int) throws -> Void) throws {
        let pool = try TestEnvironment.pool(size: 2)
        let router = try WebServiceRouter(services: [EmployeesService()], runners: [QueryRunner(pool: pool)])
        let server = HTTPServer(
            configuration: .init(
                port: 0, eventLoops: 1, crossOrigin: CrossOriginPolicy(allowedOrigins: origins),
                libraryPatches: TestPatches.policy)
        ) {
            router.respond(to: $0)
        }
        try server.start()
        defer { server.stop(); pool.close() }
        try body(server.port)
    }

    @Test("a preflight from an allowed origin is answered with what it asked for")
    func preflight() throws {
        try withServer(origins: ["https://app.example.com"]) { port in
            let reply = try TestClient.request(
                "OPTIONS", "/employees", port: port,
                headers: [
                    ("Origin", "https://app.example.com"), ("Access-Control-Request-Method", "GET"),
                    ("Access-Control-Request-Headers", "Prefer, If-None-Match"),
                ])
            #expect(reply.status == 204)
            #expect(reply.header("Access-Control-Allow-Origin") == "https://app.example.com")
            #expect(reply.header("Access-Control-Allow-Methods")?.contains("GET") == true)
            #expect(reply.header("Access-Control-Allow-Headers") == "Prefer, If-None-Match")
            #expect(reply.header("Access-Control-Max-Age") == "600")
            #expect(reply.header("Vary") == "Origin")

            let other = try TestClient.request(
                "OPTIONS", "/employees", port: port,
                headers: [
                    ("Origin", "https://evil.example"), ("Access-Control-Request-Method", "GET"),
                ])
            #expect(other.header("Access-Control-Allow-Origin") == nil, "not an allowed origin: the router's own OPTIONS answer")
            #expect(other.header("Allow") != nil)
        }
    }

    @Test("responses to an allowed origin, errors included, say so and expose the paging headers")
    func responses() throws {
        try withServer(origins: ["https://app.example.com", "https://admin.example.com"]) { port in
            for target in ["/employees/10004", "/employees?limit=2", "/employees/1"] {
                let reply = try TestClient.request("GET", target, port: port, headers: [("Origin", "https://admin.example.com")])
                #expect(reply.header("Access-Control-Allow-Origin") == "https://admin.example.com", "\(target)")
                #expect(reply.header("Access-Control-Expose-Headers")?.contains("Link") == true)
            }
            let stranger = try TestClient.request("GET", "/employees/10004", port: port, headers: [("Origin", "https://evil.example")])
            #expect(stranger.status == 200)
            #expect(stranger.header("Access-Control-Allow-Origin") == nil)
            #expect(try TestClient.request("GET", "/employees/10004", port: port).header("Access-Control-Allow-Origin") == nil)
        }
    }

    @Test("* allows any origin")
    func anyOrigin() throws {
        try withServer(origins: ["*"]) { port in
            let reply = try TestClient.request("GET", "/employees/10004", port: port, headers: [("Origin", "https://anywhere.example")])
            #expect(reply.header("Access-Control-Allow-Origin") == "*")
        }
    }
}
