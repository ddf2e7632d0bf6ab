import Foundation
import HTTPTestClient
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What a caller can repeat is capped, and the cap is what answers: a
/// request past one of ``RequestLimits`` gets a problem document that
/// names it (400; 413 for a JSON-RPC body, before it is read; a JSON-RPC
/// error for a batch), never PostgreSQL's refusal nor the minutes of work
/// the request asked for. Against `sql-rest serve` of the repository's
/// services, as `employees_reader`.
@Suite("Requests past the limits", .serialized)
struct RequestLimitAttackTests {
    /// The server's process, its port, stopped when the suite's test ends.
    final class Server {
        let run: ChildProcess
        let port: Int

        init(_ options: [String] = []) throws {
            run = try ProcessTests.start(
                ["serve", "--services", Environment.servicesFolder, "--port", "0", "--drain-seconds", "0"]
                    + options)
            port = try run.servingPort()
        }

        deinit { run.stop() }

        /// `GET /employees` with `fields` as a form body (which a GET's own arguments may be), and `limit=1`.
        func form(_ fields: String) throws -> TestClient.Response {
            try TestClient.request(
                "GET", "/employees", port: port, headers: [("Content-Type", "application/x-www-form-urlencoded")],
                body: Array((fields + "&limit=1").utf8))
        }

        /// `GET /employees?query&limit=1`: filters come in the query string.
        func list(_ query: String) throws -> TestClient.Response {
            try TestClient.request("GET", "/employees?" + query + "&limit=1", port: port)
        }

        /// `POST /jsonrpc` with `body`.
        func call(_ body: [UInt8]) throws -> TestClient.Response {
            try TestClient.request("POST", "/jsonrpc", port: port, headers: [("Content-Type", "application/json")], body: body)
        }
    }

    /// `count` copies of `item`, joined by `separator`.
    static func repeated(_ item: String, _ count: Int, _ separator: String = "&") -> String {
        Array(repeating: item, count: count).joined(separator: separator)
    }

    /// Expects a 400 problem naming `limit`, with its maximum.
    static func expectRefusal(
        _ reply: TestClient.Response, limit: String, maximum: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(reply.status == 400, "\(reply.text.prefix(500))", sourceLocation: sourceLocation)
        #expect(reply.object["limit"] as? String == limit, "\(reply.text.prefix(500))", sourceLocation: sourceLocation)
        #expect(reply.object["maximum"] as? Int == maximum, sourceLocation: sourceLocation)
    }

    @Test("argument values, filters and in.() items: at the limit answered, past it 400 naming the limit")
    func counts() throws {
        let server = try Server(["--max-filters", "50"])
        // 999 values of `details` and `limit`: 1,000 argument values; one more is past the limit.
        #expect(try server.form(Self.repeated("details=titles", 999)).status == 200)
        Self.expectRefusal(try server.form(Self.repeated("details=titles", 1_000)), limit: "arguments", maximum: 1_000)
        let json = try TestClient.request(
            "GET", "/employees", port: server.port, headers: [("Content-Type", "application/json")],
            body: Array(#"{"select": [\#(Self.repeated(#""employeeNumber""#, 1_001, ","))]}"#.utf8))
        Self.expectRefusal(json, limit: "arguments", maximum: 1_000)
        #expect(try server.list(Self.repeated("employeeNumber=gte.1", 50)).status == 200)
        Self.expectRefusal(try server.list(Self.repeated("employeeNumber=gte.1", 51)), limit: "filters", maximum: 50)
        let ids = (10_001...11_000).map(String.init)
        let inList = try server.list("employeeNumber=in.(" + ids.joined(separator: ",") + ")")
        #expect(inList.status == 200, "\(inList.text.prefix(300))")
        let long = try server.list("employeeNumber=in.(" + ids.joined(separator: ",") + ",11001)")
        Self.expectRefusal(long, limit: "listItems", maximum: 1_000)
        #expect(long.object["parameter"] as? String == "employeeNumber")
        #expect(try server.get("/health/live").status == 204)
    }

    @Test("a JSON-RPC batch of more calls than the limit is one -32600 error that names it, and none of its calls runs")
    func batchCalls() throws {
        let server = try Server()
        let call = #"{"jsonrpc":"2.0","method":"departments.get","id":1}"#
        let atLimit = try server.call(Array(("[" + Self.repeated(call, 1_000, ",") + "]").utf8))
        #expect(atLimit.status == 200)
        #expect(JSONReader.objects(atLimit.body).count == 1_000)
        let past = try server.call(Array(("[" + Self.repeated(call, 1_001, ",") + "]").utf8))
        #expect(past.status == 200)
        let error = past.object["error"] as? [String: Any]
        #expect(error?["code"] as? Int == -32600, "\(past.text.prefix(500))")
        let problem = error?["data"] as? [String: Any]
        #expect(problem?["limit"] as? String == "batchCalls")
        #expect(problem?["maximum"] as? Int == 1_000)
        #expect(past.object["id"] is NSNull)
    }

    @Test("a /jsonrpc body over its limit is answered 413 from its header fields, before a byte of it is sent")
    func jsonRPCBytes() throws {
        let server = try Server()
        let client = try TestClient(port: server.port, timeoutSeconds: 5)
        try client.send("POST /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n")
        let reply = try TestClient.Response(parsing: try client.readToEnd())
        #expect(reply.status == 413)
        #expect(reply.object["detail"] as? String == "The request body is larger than the limit of 1048576 bytes for /jsonrpc.")
        // The path the router reads as /jsonrpc, written otherwise.
        for target in ["/json%72pc", "//jsonrpc/"] {
            let client = try TestClient(port: server.port, timeoutSeconds: 5)
            try client.send(
                "POST \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n")
            #expect(try TestClient.Response(parsing: try client.readToEnd()).status == 413, "\(target)")
        }
        // A body just under the limit is read, and answered as JSON-RPC.
        let padding = String(repeating: " ", count: (1 << 20) - 100)
        let under = try server.call(Array((#"{"jsonrpc":"2.0","method":"departments.get","id":7}"# + padding).utf8))
        #expect(under.status == 200)
        #expect(under.object["id"] as? Int == 7)
    }
}

extension RequestLimitAttackTests.Server {
    func get(_ target: String) throws -> TestClient.Response {
        try TestClient.request("GET", target, port: port)
    }
}
