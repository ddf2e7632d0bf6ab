import EmployeesService
import Foundation
import HTTPServer
import HTTPTestClient
import PostgreSQLWebService
import Testing
import WebService

/// `Accept: text/plain`, preferred over JSON, gets each problem's `detail`
/// alone as `text/plain`, with the status and header fields unchanged: the
/// router's (404, 405), a handler's (400 naming a parameter), a query's
/// (404 of an object, a database error's 500), the HTTP layer's refusals
/// (414). Without that preference, the RFC 9457 document stays.
@Suite("problems as plain text for clients that ask for it")
struct PlainTextProblemAPITests {
    /// A query that PostgreSQL refuses at run time (division by zero, 22012: the server's fault, 500).
    struct DivisionService: WebService {
        let path = "/divide"
        let description = "Divides ten."
        var routes: [Route] {
            Route(.get, "/", Parameter<Int>("by", example: 2)) { by in
                Query.object("SELECT 10 / CAST(:by AS int) AS quotient", ["by": by], notFound: HTTPError(.notFound, detail: "None."))
            }
        }
    }

    static let requests: [(method: String, target: String, status: Int)] = [
        ("GET", "/nowhere", 404), ("DELETE", "/employees/10004", 405), ("GET", "/employees/abc", 400),
        ("GET", "/employees/9999", 404), ("GET", "/employees?order=nope", 400),
        ("GET", "/math/sum?a=1e308&b=1e308", 400), ("GET", "/divide?by=0", 400), ("GET", "/" + String(repeating: "x", count: 20000), 414),
    ]

    @Test("each problem's detail as text/plain, the same status and fields; JSON otherwise")
    func everyProblem() throws {
        let shared = try TestServer.shared()
        let divide = try TestServer.serve([DivisionService()], runner: QueryRunner(pool: shared.pool))
        try divide.start()
        defer { divide.stop() }
        for (method, target, status) in Self.requests {
            let port = target.hasPrefix("/divide") ? divide.port : shared.port
            let document = try TestClient.request(method, target, port: port)
            #expect(document.status == status, "\(method) \(target)")
            guard status >= 400 else { continue }
            #expect(document.header("Content-Type") == "application/problem+json", "\(method) \(target)")
            let detail = try #require(document.object["detail"] as? String, "\(method) \(target): \(document.text)")
            for accept in ["text/plain", "text/plain, application/json;q=0.9", "text/*", "application/json;q=0.1, text/plain;q=0.5"] {
                let plain = try TestClient.request(method, target, port: port, headers: [("Accept", accept)])
                #expect(plain.status == status, "\(method) \(target) (\(accept))")
                #expect(plain.header("Content-Type") == "text/plain; charset=utf-8", "\(method) \(target) (\(accept))")
                #expect(plain.text == detail, "\(method) \(target) (\(accept))")
                #expect(plain.header("Allow") == document.header("Allow"), "\(method) \(target) (\(accept))")
                #expect(plain.header("X-Request-Id") != nil)
            }
            for accept in [
                "application/json", "*/*", "text/plain;q=0.5, application/json", "text/plain, application/problem+json", "text/html",
            ] {
                let json = try TestClient.request(method, target, port: port, headers: [("Accept", accept)])
                #expect(json.header("Content-Type") == "application/problem+json", "\(method) \(target) (\(accept))")
            }
        }
    }

    @Test("a detail with quotes, backslashes, line breaks and characters past ASCII reads back exactly")
    func escapedDetail() throws {
        let detail = "He said \"no\" \\ then:\n\tthe é, the 𝄞 and \u{1}."
        let response = HTTPError(.badRequest, detail: detail, parameter: "x").response
        let plain = response.problemAsPlainText(for: ["Accept": "text/plain"])
        #expect(plain.status == .badRequest)
        #expect(plain.headers["Content-Type"] == "text/plain; charset=utf-8")
        guard case .bytes(let bytes) = plain.body else {
            Issue.record("not bytes")
            return
        }
        #expect(String(decoding: bytes, as: UTF8.self) == detail)
        #expect(response.problemAsPlainText(for: [:]).headers["Content-Type"] == "application/problem+json")
        #expect(HTTPResponse(text: "fine").problemAsPlainText(for: ["Accept": "text/plain"]).status == .ok)
    }
}
