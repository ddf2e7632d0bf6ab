#if canImport(Glibc)
import Glibc
#endif
import HTTPServer
import HTTPTestClient
import Locking
import Synchronization
import Testing

/// An admission that answers later, from another thread, or never.
private struct SlowAdmission: RequestAdmission {
    /// Seconds before the decision; `nil`: it never comes.
    let delay: Double?

    func admit(_ request: HTTPRequest) -> Admission {
        guard request.headers["Authorization"] != nil else {
            return .refused(HTTPError(.unauthorized, detail: "The request needs credentials."))
        }
        return .pending { decide in
            guard let delay else { return }
            _ = DetachedThread.start {
                usleep(UInt32(delay * 1_000_000))
                decide(.admitted(role: nil))
            }
        }
    }
}

extension HTTPServerTests {
    // MARK: - Admission

    @Test("a decision that never comes is answered 503 with Retry-After at the admission deadline; one in time is taken")
    func admissionDeadline() throws {
        var configuration = HTTPServer.Configuration()
        configuration.admission = SlowAdmission(delay: nil)
        configuration.admissionTimeout = 0.5
        let never = try startServer(configuration) { _ in HTTPResponse(status: .noContent) }
        defer { never.stop() }
        let start = ContinuousClock.now
        let late = try TestClient.request("GET", "/", port: never.port, headers: [("Authorization", "Basic x")], timeoutSeconds: 5)
        let waited = start.duration(to: .now)
        #expect(late.status == 503, "\(late)")
        #expect(late.header("Retry-After") == "1")
        #expect(waited >= .milliseconds(450) && waited < .seconds(3), "\(waited)")

        configuration.admission = SlowAdmission(delay: 0.1)
        configuration.admissionTimeout = 2
        let slow = try startServer(configuration) { _ in HTTPResponse(status: .noContent) }
        defer { slow.stop() }
        let client = try TestClient(port: slow.port, timeoutSeconds: 5)
        for _ in 1...3 {
            #expect(try client.request("GET", "/", headers: [("Authorization", "Basic x")]).status == 204)
        }
        // The deadline of a decided admission is gone: the keep-alive connection serves on after it.
        usleep(2_200_000)
        #expect(try client.request("GET", "/", headers: [("Authorization", "Basic x")]).status == 204)
    }

    @Test("a CORS preflight from an allowed origin is answered before the admission, which would refuse it for want of credentials")
    func preflightBeforeAdmission() throws {
        var configuration = HTTPServer.Configuration(crossOrigin: CrossOriginPolicy(allowedOrigins: ["https://app.example"]))
        configuration.admission = SlowAdmission(delay: 0)
        let handled = Atomic<Int>(0)
        let server = try startServer(configuration) { _ in
            handled.add(1, ordering: .relaxed)
            return HTTPResponse(status: .noContent)
        }
        defer { server.stop() }
        let preflight = try TestClient.request(
            "OPTIONS", "/items", port: server.port,
            headers: [
                ("Origin", "https://app.example"), ("Access-Control-Request-Method", "GET"),
                ("Access-Control-Request-Headers", "authorization"),
            ])
        #expect(preflight.status == 204, "\(preflight)")
        #expect(preflight.header("Access-Control-Allow-Origin") == "https://app.example")
        #expect(preflight.header("Access-Control-Allow-Headers") == "authorization")
        #expect(handled.load(ordering: .relaxed) == 0)
        let call = try TestClient.request("GET", "/items", port: server.port, headers: [("Origin", "https://app.example")])
        #expect(call.status == 401, "the request itself still needs credentials")
        #expect(call.header("Access-Control-Allow-Origin") == "https://app.example", "the page can read the refusal")
        let stranger = try TestClient.request(
            "OPTIONS", "/items", port: server.port, headers: [("Origin", "https://evil.example"), ("Access-Control-Request-Method", "GET")])
        #expect(stranger.status == 401, "a preflight from another origin is no preflight here")
    }

    @Test("LogText escapes what a terminal would act on, byte by byte, and leaves the rest")
    func logTextEscapes() {
        #expect(LogText.escaping("/employees/10001?x=ä") == "/employees/10001?x=ä")
        #expect(LogText.escaping("/a\u{1B}[2J\rb\n") == #"/a\x1b[2J\x0db\x0a"#)
        #expect(LogText.escaping("\u{7F}\u{9B}\u{2028}\u{202E}x") == #"\x7f\xc2\x9b\xe2\x80\xa8\xe2\x80\xaex"#)
        #expect(LogText.escaping(#"a\x1b"#) == #"a\x1b"#, "a backslash is kept as it is")
    }
}
