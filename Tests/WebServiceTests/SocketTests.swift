import Foundation
import HTTPTestClient
import Testing
import WebService

/// The router behind a real `HTTPServer` on 127.0.0.1, spoken to over
/// sockets with `TestClient`.
@Suite("Over a socket", .serialized)
final class SocketTests {
    let server: HTTPServer

    init() throws {
        let router = try WebServiceRouter(services: [MathService(), CatalogService()])
        server = HTTPServer(configuration: .init(port: 0)) { request in router.respond(to: request) }
        try server.start()
    }

    deinit {
        server.stop()
    }

    /// `method` `target` on a connection of its own.
    func send(_ method: String, _ target: String, headers: [(String, String)] = [], body: String = "") throws -> TestClient.Response {
        try TestClient.request(method, target, port: server.port, headers: headers, body: Array(body.utf8))
    }

    @Test func overloadsAndErrors() throws {
        #expect(try send("GET", "/math/sum?a=2&b=4").text == "6")
        #expect(try send("GET", "/math/sum?values=1&values=2&values=3").text == "6")
        let bad = try send("GET", "/math/sum?a=2&b=x")
        #expect(bad.status == 400)
        #expect(bad.header("Content-Type") == "application/problem+json")
        #expect(bad.object["parameter"] as? String == "b")
        #expect(try send("GET", "/nowhere").status == 404)
        let wrongVerb = try send("DELETE", "/math/sum")
        #expect(wrongVerb.status == 405)
        #expect(wrongVerb.header("Allow") == "GET, HEAD, OPTIONS")
        let failure = try send("GET", "/catalog/fail/internal")
        #expect(failure.status == 500)
        #expect(!failure.text.contains("hunter2"))
    }

    @Test func pathVariablesAndPercentDecoding() throws {
        #expect(try send("GET", "/catalog/items/42").text == #""item 42""#)
        #expect(try send("GET", "/catalog/items/special").text == #""special""#)
        #expect(try send("GET", "/catalog/years/1999/Caf%C3%A9%20Noir").text == #""Café Noir in 1999""#)
    }

    @Test func headAndOptions() throws {
        let head = try send("HEAD", "/math/sum?a=1&b=2")
        #expect(head.status == 200)
        #expect(head.header("Content-Type") == "application/json; charset=utf-8")
        #expect(head.header("Content-Length") == "1")
        #expect(head.body.isEmpty)
        let options = try send("OPTIONS", "/catalog/items/1")
        #expect(options.status == 204)
        #expect(options.header("Allow") == "GET, HEAD, PUT, PATCH, DELETE, OPTIONS")
    }

    @Test func formJSONAndMultipartBodies() throws {
        let form = try send(
            "POST", "/catalog/form", headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: "name=sum&values=1&values=2&values=39")
        #expect(form.text == #""sum: 42""#)

        let json = try send(
            "POST", "/catalog/form", headers: [("Content-Type", "application/json")],
            body: #"{"name":"json","values":[4,5]}"#)
        #expect(json.text == #""json: 9""#)

        let boundary = "----swift-sql-rest-boundary"
        var multipart = "--\(boundary)\r\nContent-Disposition: form-data; name=\"label\"\r\n\r\nnotes\r\n"
        multipart += "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n"
        multipart += "Content-Type: text/plain\r\n\r\nhello file\r\n--\(boundary)--\r\n"
        let upload = try send(
            "POST", "/catalog/upload", headers: [("Content-Type", "multipart/form-data; boundary=\(boundary)")],
            body: multipart)
        #expect(upload.status == 200)
        #expect(upload.text == #""notes a.txt 10 hello file""#)

        let employee = #"{"employeeNumber":1,"firstName":"Ada","lastName":"Lovelace","hireDate":"1843-01-01"}"#
        let created = try send("POST", "/catalog/employees", headers: [("Content-Type", "application/json")], body: employee)
        #expect(created.text == #"{"employeeNumber":1,"firstName":"Ada","lastName":"Lovelace","hireDate":"1843-01-01T00:00:00Z"}"#)

        let malformed = try send("POST", "/catalog/form", headers: [("Content-Type", "application/json")], body: "{")
        #expect(malformed.status == 400)
    }

    @Test func resultKinds() throws {
        let void = try send("POST", "/catalog/void")
        #expect(void.status == 204)
        let custom = try send("GET", "/catalog/response")
        #expect(custom.status == 201)
        #expect(custom.header("Location") == "/catalog/items/7")
        #expect(custom.text == "made")
        let stream = try send("GET", "/catalog/stream?count=1000")
        #expect(stream.header("Content-Type") == "application/json; charset=utf-8")
        let numbers = try JSONReader.value(stream.body) as? [Int]
        #expect(numbers == Array(1...1000))
    }

    @Test func documentation() throws {
        let html = try send("GET", "/math?api")
        #expect(html.header("Content-Type") == "text/html; charset=utf-8")
        #expect(html.text.contains("<code><b>GET</b> (a: double, b: double) &rarr; double</code>"))
        let json = try send("GET", "/math?api", headers: [("Accept", "application/json")])
        #expect(json.object["path"] as? String == "/math")
        let index = try send("GET", "/")
        #expect(index.text.contains(#"<a href="/catalog?api">/catalog</a>"#))
        let indexJSON = try send("GET", "/", headers: [("Accept", "application/json")])
        #expect(indexJSON.text.hasPrefix(#"[{"path":"/math""#))
    }
}
