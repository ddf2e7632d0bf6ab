import Foundation
import HTTPServer
import HTTPTestClient
import Testing

/// A request refused before any handler runs, and the status it gets.
struct Refusal: Sendable, CustomTestStringConvertible {
    let name: String
    let status: Int
    let bytes: [UInt8]
    /// Refused by libmicrohttpd itself, not by the server.
    let isLibrarys: Bool

    var testDescription: String { name }

    init(_ name: String, _ status: Int, _ head: String, body: [UInt8] = [], isLibrarys: Bool = true) {
        self.name = name
        self.status = status
        bytes = Array(head.utf8) + body
        self.isLibrarys = isLibrarys
    }

    /// With the default limits (16 KB of header, 32 KB of libmicrohttpd
    /// pool), all but the first are refused by libmicrohttpd itself.
    static let all: [Refusal] = [
        Refusal(
            "a request target just over the limit", 414, "GET /q?\(filler(20 << 10)) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", isLibrarys: false
        ),
        Refusal("a 100 KB query string", 414, "GET /q?\(filler(100 << 10)) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
        Refusal("a 1 MB query string", 414, "GET /q?\(filler(1 << 20)) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
        Refusal("a 1 MB header field", 431, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: \(filler(1 << 20))\r\n\r\n"),
        Refusal(
            "10,000 header fields", 431, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" + (0..<10_000).map { "X-\($0): v\r\n" }.joined() + "\r\n"),
        Refusal("HTTP/2.0", 505, "GET / HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n"),
        Refusal("HTTP/0.9", 505, "GET / HTTP/0.9\r\nHost: 127.0.0.1\r\n\r\n"),
        Refusal("a malformed HTTP version", 400, "GET / HTTX/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
        Refusal("a header line without a colon", 400, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nNo colon here\r\n\r\n"),
        Refusal("a NUL in a header field name", 400, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A\0: b\r\n\r\n"),
        Refusal("a malformed chunk size", 400, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
        Refusal(
            "a chunk size beyond 64 bits", 413,
            "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n1FFFFFFFFFFFFFFFF\r\n"),
    ]

    private static func filler(_ count: Int) -> String {
        String(repeating: "a", count: count)
    }
}

extension HTTPServerTests {
    // MARK: - Refusals

    /// Whatever refuses a request, the server or libmicrohttpd before it,
    /// the answer is a problem document; the connection is closed and the
    /// server goes on serving. With the patches off (``TestPatches``),
    /// libmicrohttpd's own refusals keep their status but carry its HTML page.
    @Test(arguments: Refusal.all)
    func refusalIsAProblemDocument(refusal: Refusal) throws {
        let server = try startServer(.init(eventLoops: 2)) { _ in HTTPResponse(status: .noContent) }
        defer { server.stop() }

        let client = try TestClient(port: server.port)
        // The server answers, and closes, before reading all of a large request.
        try? client.send(refusal.bytes)
        let response = try client.readResponse()

        #expect(response.status == refusal.status)
        if refusal.isLibrarys, !TestPatches.resolved.replacesErrorPages {
            #expect(response.header("Content-Type") != "application/problem+json")
            #expect(response.text.contains("<html>"), "libmicrohttpd's page: \(response.text)")
            #expect(try client.readToEnd().isEmpty, "the connection is closed after the refusal")
            #expect(try TestClient(port: server.port).request("GET", "/").status == 204)
            return
        }
        #expect(response.header("Content-Type") == "application/problem+json")
        let problem = try #require(try JSONReader.value(response.body) as? [String: Any])
        #expect(problem["type"] as? String == "about:blank")
        #expect(problem["title"] as? String == HTTPStatus(refusal.status).reasonPhrase)
        #expect(problem["status"] as? Int == refusal.status)
        #expect((problem["detail"] as? String)?.isEmpty == false)
        #expect(try client.readToEnd().isEmpty, "the connection is closed after the refusal")
        #expect(try TestClient(port: server.port).request("GET", "/").status == 204)
    }

    /// A request target over the limit gets the same document whether the
    /// server sees it or libmicrohttpd's pool cannot hold it (with the
    /// patches on: libmicrohttpd's own page otherwise, `refusalIsAProblemDocument`).
    @Test(.enabled(if: TestPatches.resolved.replacesErrorPages))
    func oversizedRequestGetsOneDocumentAtAnySize() throws {
        let server = try startServer { _ in HTTPResponse(status: .noContent) }
        defer { server.stop() }

        // The same request id for both, so that the documents can be
        // compared whole: the server's refusal keeps it, libmicrohttpd's
        // own is given a new one (the request was not read that far).
        var requestIDs: [String] = []
        let bodies = try [20 << 10, 1 << 20].map { size in
            let client = try TestClient(port: server.port)
            try? client.send("GET /q?\(String(repeating: "a", count: size)) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let reply = try client.readResponse()
            let id = try #require(reply.header("X-Request-Id"))
            requestIDs.append(id)
            #expect(reply.text.hasSuffix(#","requestId":"\#(id)"}"#), "\(reply.text)")
            return reply.text.replacingOccurrences(of: id, with: "ID")
        }
        #expect(requestIDs[0] != requestIDs[1])

        #expect(bodies[0] == bodies[1])
        #expect(bodies[0].contains("limit of \(16 << 10) bytes"))
    }

    /// The server's own error responses pass through unchanged.
    @Test func handlerErrorResponsesAreLeftAsTheyAre() throws {
        let server = try startServer { _ in HTTPResponse(status: .notFound, text: "no such thing") }
        defer { server.stop() }

        let response = try TestClient(port: server.port).request("GET", "/missing")

        #expect(response.status == 404)
        #expect(response.header("Content-Type") == "text/plain; charset=utf-8")
        #expect(response.text == "no such thing")
    }
}
