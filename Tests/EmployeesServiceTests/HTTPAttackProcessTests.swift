import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPTestClient
import Testing

/// `employees-server`, as a separate process, attacked at the HTTP layer:
/// a request smuggled in a body framed two ways, a malformed
/// `Content-Length`, control characters aimed at the log, a `Host` that
/// is not the server's, a password check that never ends. Each test fails
/// on a server without the rule it checks.
@Suite("employees-server under HTTP attacks", .serialized)
struct HTTPAttackProcessTests {
    /// A server on an ephemeral port of 127.0.0.1 with `arguments`.
    static func start(_ arguments: [String] = []) throws -> (server: ChildProcess, port: Int) {
        let server = try TestEnvironment.startEmployeesServer(["--port", "0", "--drain-seconds", "0"] + arguments)
        return (server, try server.servingPort())
    }

    /// `head` and `body` on a new connection; what the server sent until it
    /// closed (a server that keeps the connection open fails the read).
    static func exchange(_ head: String, body: [UInt8] = [], port: Int) throws -> [UInt8] {
        let client = try TestClient(port: port, timeoutSeconds: 3)
        try? client.send(Array(head.utf8) + body)
        return try client.readToEnd()
    }

    /// The status of the request `head` (its request line and header
    /// fields, without the blank line that ends them) with `Connection: close`.
    static func status(_ head: String, port: Int) throws -> Int {
        try TestClient.Response(parsing: try exchange(head + "Connection: close\r\n\r\n", port: port)).status
    }

    /// The status of `GET /health/live` with `Host: host`.
    static func liveness(host: String, port: Int) throws -> Int {
        try status("GET /health/live HTTP/1.1\r\nHost: \(host)\r\n", port: port)
    }

    // MARK: - Framing

    /// A request whose body is framed two ways, or a way libmicrohttpd and
    /// a proxy could read differently, with a second request hidden behind
    /// the first body.
    struct Framing: Sendable, CustomTestStringConvertible {
        let name: String
        let status: Int
        let bytes: [UInt8]
        var testDescription: String { name }

        static let smuggled = Array("GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        static let call = Array(#"{"jsonrpc":"2.0","method":"rpc.discover","id":1}"#.utf8)
        static let chunkedCall = Array(String(call.count, radix: 16).utf8) + Array("\r\n".utf8) + call + Array("\r\n0\r\n\r\n".utf8)

        init(_ name: String, _ status: Int, version: String = "1.1", fields: String, body: [UInt8]) {
            self.name = name
            self.status = status
            bytes =
                Array("POST /jsonrpc HTTP/\(version)\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\(fields)\r\n".utf8)
                + body + Self.smuggled
        }

        static let all: [Framing] =
            ["chunked", " chunked", "Chunked", "CHUNKED", "chunked, identity"].map { coding in
                Framing(
                    "Content-Length and Transfer-Encoding: \(coding)", 400,
                    fields: "Content-Length: \(chunkedCall.count + smuggled.count)\r\nTransfer-Encoding: \(coding)\r\n",
                    body: chunkedCall)
            } + [
                Framing("Content-Length: 0, then Content-Length: 46", 400, fields: "Content-Length: 0\r\nContent-Length: 46\r\n", body: []),
                Framing(
                    "two equal Content-Length fields", 400,
                    fields: "Content-Length: \(call.count)\r\nContent-Length: \(call.count)\r\n", body: call),
                Framing(
                    "Transfer-Encoding: chunked in two fields", 400, fields: "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
                    body: chunkedCall),
                Framing("Transfer-Encoding: xchunked", 501, fields: "Transfer-Encoding: xchunked\r\n", body: chunkedCall),
                Framing("Transfer-Encoding: gzip, chunked", 501, fields: "Transfer-Encoding: gzip, chunked\r\n", body: chunkedCall),
                Framing("Transfer-Encoding: chunked, identity", 501, fields: "Transfer-Encoding: chunked, identity\r\n", body: chunkedCall),
                Framing(
                    "Transfer-Encoding on HTTP/1.0", 400, version: "1.0", fields: "Transfer-Encoding: chunked\r\n", body: chunkedCall),
                Framing(
                    "Content-Length and Transfer-Encoding with a space before its colon", 400,
                    fields: "Content-Length: \(chunkedCall.count + smuggled.count)\r\nTransfer-Encoding : chunked\r\n", body: chunkedCall),
                Framing(
                    "Content-Length and Transfer-Encoding folded onto a second line", 400,
                    fields: "Content-Length: \(chunkedCall.count + smuggled.count)\r\nTransfer-Encoding: x\r\n chunked\r\n",
                    body: chunkedCall),
            ]
    }

    @Test(
        "a body framed two ways, or a transfer coding other than chunked: 400 or 501 with Connection: close before any handler, the smuggled request never answered",
        arguments: Framing.all)
    func smuggling(framing: Framing) throws {
        let (server, port) = try Self.start()
        defer { server.stop() }
        let client = try TestClient(port: port, timeoutSeconds: 3)
        try? client.send(framing.bytes)
        // One response, then the end of the connection: a second response
        // (the smuggled request's) or a connection kept open fails here.
        let reply = try TestClient.Response(parsing: try client.readToEnd())
        #expect(reply.status == framing.status, "\(reply)")
        #expect(reply.header("Connection") == "close")
        #expect(reply.header("Content-Type") == "application/problem+json")
        #expect(server.waitUntilPrinted(timeout: 5) { $0.contains("POST /jsonrpc \(framing.status)") }, "\(server.printed)")
        #expect(!server.printed.contains("/health/live"), "the smuggled request reached the server: \(server.printed)")
    }

    @Test("a malformed Content-Length is refused with one response head (patched), libmicrohttpd's own page otherwise")
    func malformedContentLength() throws {
        let (server, port) = try Self.start()
        defer { server.stop() }
        for (value, status) in [("12abc", 400), ("-1", 400), ("1 2", 400), ("99999999999999999999999", 413)] {
            let bytes = try Self.exchange("POST /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(value)\r\n\r\n", port: port)
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 \(status) "), "\(value): \(text)")
            guard TestPatches.resolved.replacesErrorPages else { continue }
            // libmicrohttpd 0.9.75 builds the head twice for these: the client must see it once.
            #expect(text.components(separatedBy: "HTTP/1.1 ").count == 2, "\(value): \(text)")
            let reply = try TestClient.Response(parsing: bytes)
            #expect(reply.header("Content-Type") == "application/problem+json")
            #expect((try reply.json() as? [String: Any])?["status"] as? Int == status, "\(value): \(reply.text)")
        }
        #expect(try TestClient.request("GET", "/health/live", port: port).status == 204)
    }

    // MARK: - The log

    /// A request whose method and path carry an escape sequence, a carriage
    /// return, DEL and a C1 control (U+009B, a CSI to some terminals).
    static let hostileRequest =
        Array("G".utf8) + [0x1B] + Array("ET /a".utf8) + [0x1B] + Array("[2J".utf8) + [0x0D] + Array("b".utf8) + [0x7F, 0xC2, 0x9B]
        + Array("c HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nX-Request-Id: hostile-1\r\n\r\n".utf8)

    /// Whether a log line holds no character a terminal would act on.
    static func isPrintable(_ line: Substring) -> Bool {
        line.unicodeScalars.allSatisfy { $0.value >= 0x20 && !(0x7F...0x9F).contains($0.value) }
    }

    @Test("control characters of a request's method and path reach the text log escaped, as \\x1b")
    func logInjectionText() throws {
        let (server, port) = try Self.start()
        defer { server.stop() }
        _ = try? TestClient.exchange(Self.hostileRequest, port: port, timeoutSeconds: 5)
        #expect(server.waitUntilPrinted(timeout: 5) { $0.contains("requestId=hostile-1") }, "\(server.printed)")
        let line = try #require(server.printed.split(separator: "\n").first { $0.contains("requestId=hostile-1") })
        #expect(Self.isPrintable(line), "raw control characters in \(Array(line.utf8))")
        #expect(line.contains(#"G\x1bET /a\x1b[2J\x0db\x7f\xc2\x9bc 404"#), "\(line)")
    }

    @Test("control characters of a request's method and path reach the JSON log escaped, as \\x1b")
    func logInjectionJSON() throws {
        let (server, port) = try Self.start(["--log-format", "json"])
        defer { server.stop() }
        _ = try? TestClient.exchange(Self.hostileRequest, port: port, timeoutSeconds: 5)
        #expect(server.waitUntilPrinted(timeout: 5) { $0.contains(#""requestId":"hostile-1""#) }, "\(server.printed)")
        let line = try #require(server.printed.split(separator: "\n").first { $0.contains(#""requestId":"hostile-1""#) })
        #expect(Self.isPrintable(line), "raw control characters in \(Array(line.utf8))")
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(fields["method"] as? String == #"G\x1bET"#)
        #expect(fields["path"] as? String == #"/a\x1b[2J\x0db\x7f\xc2\x9bc"#)
    }

    // MARK: - Host names

    @Test("a Host that is not one of the server's names gets 421 before the admission; none, or two, 400; --allowed-hosts changes them")
    func hostNames() throws {
        let secretFile = FileManager.default.temporaryDirectory.appending(path: "secret-\(UUID().uuidString)").path
        try String(repeating: "h", count: 48).write(toFile: secretFile, atomically: true, encoding: .utf8)
        let (server, port) = try Self.start(["--jwt-secret-file", secretFile])
        defer { server.stop() }
        func status(_ head: String) throws -> Int { try Self.status(head, port: port) }
        // Credentials are needed for /employees: the name is checked first.
        #expect(try status("GET /employees/10001 HTTP/1.1\r\nHost: evil.example\r\n") == 421)
        #expect(try status("GET /employees/10001 HTTP/1.1\r\nHost: 127.0.0.1\r\n") == 401)
        #expect(try status("GET /health/live HTTP/1.1\r\nHost: evil.example:\(port)\r\n") == 421)
        #expect(try status("GET http://evil.example/health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n") == 421)
        #expect(try status("GET /health/live HTTP/1.1\r\nHost: LOCALHOST:1234\r\n") == 204, "the port is not compared")
        #expect(try status("GET /health/live HTTP/1.1\r\nHost: 127.0.0.1.\r\n") == 204)
        #expect(try status("GET /health/live HTTP/1.1\r\n") == 400)
        #expect(try status("GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: 127.0.0.1\r\n") == 400)
        #expect(try status("GET /health/live HTTP/1.1\r\nHost: a b\r\n") == 400)
        #expect(try status("GET /health/live HTTP/1.0\r\n") == 204, "HTTP/1.0 needs no Host")
        let refusal = try TestClient.Response(
            parsing: try Self.exchange("GET /health/live HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n", port: port))
        #expect(refusal.header("Content-Type") == "application/problem+json")
        #expect(refusal.text.contains(#"does not answer for the host \"evil.example\""#), "\(refusal.text)")

        let (named, namedPort) = try Self.start(["--allowed-hosts", "api.example, localhost"])
        defer { named.stop() }
        #expect(try Self.liveness(host: "api.example:443", port: namedPort) == 204)
        #expect(try Self.liveness(host: "127.0.0.1", port: namedPort) == 421, "127.0.0.1 is not listed")

        let (any, anyPort) = try Self.start(["--allowed-hosts", "*"])
        defer { any.stop() }
        #expect(try Self.liveness(host: "evil.example", port: anyPort) == 204)
    }

    @Test("listening on every address, the server answers for the machine's host name, localhost and its interfaces' addresses")
    func wildcardAddressNames() throws {
        var buffer = [CChar](repeating: 0, count: 256)
        try #require(gethostname(&buffer, 255) == 0)
        let hostName = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let (server, port) = try Self.start(["--host", "0.0.0.0"])
        defer { server.stop() }
        #expect(server.printed.contains("answering for"), "\(server.printed)")
        for host in [hostName, "localhost", "127.0.0.1"] {
            #expect(try Self.liveness(host: host, port: port) == 204, "\(host)")
        }
        #expect(try Self.liveness(host: "evil.example", port: port) == 421)
    }

    // MARK: - Admission deadline

    @Test(
        "a password check that never ends (a database that accepts the connection and never answers) is answered 503 at --admission-timeout"
    )
    func pendingAdmissionHasADeadline() throws {
        // A listening socket that nobody accepts from: the kernel completes
        // the connection, and libpq then waits for an answer that never comes.
        let blackHole = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(blackHole >= 0)
        defer { close(blackHole) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                try #require(bind(blackHole, generic, length) == 0 && listen(blackHole, 16) == 0)
                try #require(getsockname(blackHole, generic, &length) == 0)
            }
        }
        let holePort = Int(UInt16(bigEndian: address.sin_port))
        let (server, port) = try Self.start([
            "--auth-basic-postgres", "true", "--admission-timeout", "1",
            "--database-url", "host=127.0.0.1 port=\(holePort) dbname=employees connect_timeout=0 sslmode=disable",
        ])
        defer { server.stop() }
        let basic = "Basic " + Data("alice:secret".utf8).base64EncodedString()
        for attempt in 1...2 {
            let start = Date()
            let reply = try TestClient.request(
                "GET", "/employees/10001", port: port, headers: [("Authorization", basic)], timeoutSeconds: 8)
            let elapsed = Date().timeIntervalSince(start)
            #expect(reply.status == 503, "attempt \(attempt): \(reply)")
            #expect(reply.header("Retry-After") == "1")
            #expect(elapsed >= 0.9 && elapsed < 4, "attempt \(attempt) answered after \(elapsed) s")
        }
        #expect(try TestClient.request("GET", "/health/live", port: port).status == 204, "the server still serves")
    }
}
