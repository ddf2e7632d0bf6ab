import HTTPTestClient
import Testing

/// Bytes that are not what a request target should hold: each is a 4xx
/// with a problem-details body, and the server keeps serving.
@Suite("Hostile encodings")
struct EncodingTests {
    let server = HostileServer.shared

    @Test(
        "malformed percent-encoding",
        arguments: [
            "/employees/%", "/employees/%4", "/employees/%zz", "/employees/10001%",
            "/employees?name=%", "/employees?name=%g1", "/employees?%=1", "/employees?name=ab%2",
            "/math/sum?a=%%&b=1", "/%E",
        ])
    func malformedPercent(target: String) throws {
        expectProblem(try server.send(target), 400...400, target)
    }

    @Test(
        "invalid UTF-8 in the path and query, raw and percent-encoded",
        arguments: [
            Array("/employees/".utf8) + [0xFF, 0xFE],
            Array("/employees?name=".utf8) + [0xC3, 0x28],
            Array("/employees?name=".utf8) + [0xED, 0xA0, 0x80],  // a UTF-16 surrogate
            Array("/employees?name=".utf8) + [0xC0, 0xAF],  // overlong "/"
            Array("/employees/%FF%FE".utf8),
            Array("/employees?name=%C3%28".utf8),
            Array("/employees?name=%F4%90%80%80".utf8),  // beyond U+10FFFF
            Array("/employees?%FF=1".utf8),
        ])
    func invalidUTF8(target: [UInt8]) throws {
        let response = try server.send(target: target)
        expectProblem(response, 400...400, String(decoding: target, as: UTF8.self))
    }

    @Test("invalid UTF-8 in a form body and a JSON body")
    func invalidUTF8Bodies() throws {
        let form = try server.send(
            "/math/sum", headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array("a=1&b=".utf8) + [0xFF])
        expectProblem(form, 400...400, "form")
        let json = try server.send(
            "/math/sum", headers: [("Content-Type", "application/json")],
            body: Array(#"{"a":1,"b":""#.utf8) + [0xFF, 0x22, 0x7D])
        expectProblem(json, 400...400, "json")
        let document = try server.send(
            "/probe/document", method: "POST", headers: [("Content-Type", "application/json")],
            body: [0x22, 0xC3, 0x28, 0x22])
        expectProblem(document, 400...400, "document")
        try server.expectAlive()
    }

    @Test(
        "NUL bytes, percent-encoded and raw",
        arguments: [
            Array("/employees/%00".utf8),
            Array("/employees?name=a%00b".utf8),
            Array("/employees?na%00me=1".utf8),
            Array("/departments/d005%00".utf8),
        ])
    func encodedNul(target: [UInt8]) throws {
        expectProblem(try server.send(target: target), 400...400, String(decoding: target, as: UTF8.self))
    }

    /// A raw NUL in the request line or a header: libmicrohttpd rejects the
    /// request before calling the server (400, its own HTML body, MHD 0.9.75),
    /// closes the connection without an answer (a NUL in the request line,
    /// MHD 1.0), or cuts the string at the NUL, which our decoding then
    /// sees; a NUL in a header may also close the connection without an
    /// answer on the stock path. Either way no 5xx and the server goes on.
    @Test("raw NUL bytes in the request line, a header and the body")
    func rawNul() throws {
        for target in [Array("/employees?name=a".utf8) + [0] + Array("b".utf8), Array("/employees/1".utf8) + [0]] {
            let response: TestClient.Response
            do {
                response = try server.send(target: target)
            } catch TestClient.Failure.closed {
                continue
            }
            #expect((400...499).contains(response.status) || response.status == 200, "\(response)")
            #expect(response.status < 500, "\(response)")
        }
        // libmicrohttpd's stock path may close such a connection without an answer, as for the request line.
        do {
            let header = try server.exchange(
                Array("GET /math/sum?a=1&b=2 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a".utf8) + [0]
                    + Array("b\r\nConnection: close\r\n\r\n".utf8))
            #expect(header.status < 500, "\(header)")
        } catch TestClient.Failure.closed {}
        let form = try server.send(
            "/math/sum", headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array("a=1&b=2".utf8) + [0])
        expectProblem(form, 400...400, "form NUL")
        let json = try server.send(
            "/probe/document", method: "POST", headers: [("Content-Type", "application/json")],
            body: Array(#"{"a":"#.utf8) + [0] + Array("}".utf8))
        expectProblem(json, 400...400, "json NUL")
        try server.expectAlive()
    }

    @Test(
        "path traversal attempts reach no file and no other resource",
        arguments: [
            "/employees/../etc/passwd", "/employees/..%2f..%2fetc%2fpasswd", "/employees/%2e%2e/%2e%2e/etc/passwd",
            "/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/employees/%2E%2E%2Fetc%2Fpasswd",
            "/employees/..\\..\\etc\\passwd", "/departments/..%5c..%5cetc%5cpasswd", "//etc/passwd",
            "/employees/10001/../../etc/passwd", "/employees%2f10001",
        ])
    func traversal(target: String) throws {
        let response = try server.send(target)
        expectProblem(response, 400...404, target)
        #expect(!response.text.contains("root:"), "\(target)")
    }
}
