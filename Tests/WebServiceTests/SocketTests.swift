import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import WebService

/// The router behind a real `HTTPServer` on 127.0.0.1, spoken to over
/// sockets with URLSession.
@Suite("Over a socket", .serialized)
final class SocketTests {
    let server: HTTPServer
    let base: String

    init() throws {
        let router = WebServiceRouter(services: [MathService(), CatalogService()])
        server = HTTPServer(configuration: .init(port: 0)) { request in router.respond(to: request) }
        try server.start()
        base = "http://127.0.0.1:\(server.port)"
    }

    deinit {
        server.stop()
    }

    struct Reply {
        var status: Int
        var headers: [AnyHashable: Any]
        var body: String

        func header(_ name: String) -> String? {
            headers.first { ($0.key as? String)?.lowercased() == name.lowercased() }?.value as? String
        }

        var object: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
        }
    }

    func send(_ method: String = "GET", _ target: String, headers: [String: String] = [:], body: Data? = nil) async throws -> Reply {
        var request = URLRequest(url: URL(string: base + target)!)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        return Reply(status: http.statusCode, headers: http.allHeaderFields, body: String(decoding: data, as: UTF8.self))
    }

    @Test func overloadsAndErrors() async throws {
        #expect(try await send("GET", "/math/sum?a=2&b=4").body == "6")
        #expect(try await send("GET", "/math/sum?values=1&values=2&values=3").body == "6")
        let bad = try await send("GET", "/math/sum?a=2&b=x")
        #expect(bad.status == 400)
        #expect(bad.header("Content-Type") == "application/problem+json")
        #expect(bad.object["parameter"] as? String == "b")
        #expect(try await send("GET", "/nowhere").status == 404)
        let wrongVerb = try await send("DELETE", "/math/sum")
        #expect(wrongVerb.status == 405)
        #expect(wrongVerb.header("Allow") == "GET, HEAD, OPTIONS")
        let failure = try await send("GET", "/catalog/fail/internal")
        #expect(failure.status == 500)
        #expect(!failure.body.contains("hunter2"))
    }

    @Test func pathVariablesAndPercentDecoding() async throws {
        #expect(try await send("GET", "/catalog/items/42").body == #""item 42""#)
        #expect(try await send("GET", "/catalog/items/special").body == #""special""#)
        #expect(try await send("GET", "/catalog/years/1999/Caf%C3%A9%20Noir").body == #""Café Noir in 1999""#)
    }

    @Test func headAndOptions() async throws {
        let head = try await send("HEAD", "/math/sum?a=1&b=2")
        #expect(head.status == 200)
        #expect(head.header("Content-Type") == "application/json")
        #expect(head.header("Content-Length") == "1")
        #expect(head.body.isEmpty)
        let options = try await send("OPTIONS", "/catalog/items/1")
        #expect(options.status == 204)
        #expect(options.header("Allow") == "GET, HEAD, PUT, PATCH, DELETE, OPTIONS")
    }

    @Test func formJSONAndMultipartBodies() async throws {
        let form = try await send("POST", "/catalog/form", headers: ["Content-Type": "application/x-www-form-urlencoded"],
                                  body: Data("name=sum&values=1&values=2&values=39".utf8))
        #expect(form.body == #""sum: 42""#)

        let json = try await send("POST", "/catalog/form", headers: ["Content-Type": "application/json"],
                                  body: Data(#"{"name":"json","values":[4,5]}"#.utf8))
        #expect(json.body == #""json: 9""#)

        let boundary = "----swift-sql-rest-boundary"
        var multipart = "--\(boundary)\r\nContent-Disposition: form-data; name=\"label\"\r\n\r\nnotes\r\n"
        multipart += "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n"
        multipart += "Content-Type: text/plain\r\n\r\nhello file\r\n--\(boundary)--\r\n"
        let upload = try await send("POST", "/catalog/upload", headers: ["Content-Type": "multipart/form-data; boundary=\(boundary)"],
                                    body: Data(multipart.utf8))
        #expect(upload.status == 200)
        #expect(upload.body == #""notes a.txt 10 hello file""#)

        let employee = #"{"employeeNumber":1,"firstName":"Ada","lastName":"Lovelace","hireDate":"1843-01-01"}"#
        let created = try await send("POST", "/catalog/employees", headers: ["Content-Type": "application/json"], body: Data(employee.utf8))
        #expect(created.body == #"{"employeeNumber":1,"firstName":"Ada","lastName":"Lovelace","hireDate":"1843-01-01T00:00:00Z"}"#)

        let malformed = try await send("POST", "/catalog/form", headers: ["Content-Type": "application/json"], body: Data("{".utf8))
        #expect(malformed.status == 400)
    }

    @Test func resultKinds() async throws {
        let void = try await send("POST", "/catalog/void")
        #expect(void.status == 204)
        let custom = try await send("GET", "/catalog/response")
        #expect(custom.status == 201)
        #expect(custom.header("Location") == "/catalog/items/7")
        #expect(custom.body == "made")
        let stream = try await send("GET", "/catalog/stream?count=1000")
        #expect(stream.header("Content-Type") == "application/json")
        let numbers = try JSONSerialization.jsonObject(with: Data(stream.body.utf8)) as? [Int]
        #expect(numbers == Array(1...1000))
    }

    @Test func documentation() async throws {
        let html = try await send("GET", "/math?api")
        #expect(html.header("Content-Type") == "text/html; charset=utf-8")
        #expect(html.body.contains("<code><b>GET</b> (a: double, b: double) &rarr; double</code>"))
        let json = try await send("GET", "/math?api", headers: ["Accept": "application/json"])
        #expect(json.object["path"] as? String == "/math")
        let index = try await send("GET", "/")
        #expect(index.body.contains(#"<a href="/catalog?api">/catalog</a>"#))
        let indexJSON = try await send("GET", "/", headers: ["Accept": "application/json"])
        #expect(indexJSON.body.hasPrefix(#"[{"path":"/math""#))
    }
}
