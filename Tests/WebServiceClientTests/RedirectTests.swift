import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPServer
import Testing
@testable import WebServiceClient

/// Credentials follow a redirect to the same origin only, and an https
/// call is never redirected to http.
@Suite("Redirects")
struct RedirectTests {
    /// A server on `host` that answers `/landing` with the credential header
    /// fields it received, and redirects `/same`, `/port` and `/host` (307).
    private static func server(host: String = "127.0.0.1", port: Int = 0, landingPort: Int = 0) throws -> HTTPServer {
        let server = HTTPServer(configuration: .init(host: host, port: port)) { request in
            func redirect(_ location: String) -> HTTPResponse {
                HTTPResponse(status: HTTPStatus(307), headers: ["Location": location])
            }
            let ownPort = request.headers["Host"]?.split(separator: ":").last.map(String.init) ?? ""
            switch request.rawPath {
            case "/same": return redirect("/landing")
            case "/port": return redirect("http://127.0.0.1:\(landingPort)/landing")
            case "/host": return redirect("http://127.0.0.2:\(ownPort)/landing")
            default:
                var received: [String: String] = [:]
                for name in ["Authorization", "Proxy-Authorization", "Cookie", "X-Client"] {
                    received[name] = request.headers[name] ?? "none"
                }
                return HTTPResponse(json: Array(try! JSONEncoder().encode(received)))
            }
        }
        try server.start()
        return server
    }

    private func call(_ origin: HTTPServer, _ path: String) async throws -> [String: String] {
        let client = WebServiceClient(
            baseURL: URL(string: "http://127.0.0.1:\(origin.port)")!,
            configuration: .init(headers: ["Cookie": "session=secret", "X-Client": "app"], credentials: .bearer("secret-token")))
        return try await client.get(path, as: [String: String].self)
    }

    @Test func aRedirectWithinTheOriginKeepsTheCredentials() async throws {
        let origin = try Self.server()
        defer { origin.stop() }
        let received = try await call(origin, "/same")
        #expect(received["Authorization"] == "Bearer secret-token")
        #expect(received["Cookie"] == "session=secret")
    }

    @Test func aRedirectToAnotherPortDropsTheCredentials() async throws {
        let landing = try Self.server()
        defer { landing.stop() }
        let origin = try Self.server(landingPort: landing.port)
        defer { origin.stop() }
        let received = try await call(origin, "/port")
        #expect(received["Authorization"] == "none")
        #expect(received["Cookie"] == "none")
        #expect(received["X-Client"] == "app")
    }

    @Test func aRedirectToAnotherHostDropsTheCredentials() async throws {
        let origin = try Self.server()
        defer { origin.stop() }
        // The same port on another loopback address: only the host differs.
        let landing = try Self.server(host: "127.0.0.2", port: origin.port)
        defer { landing.stop() }
        let received = try await call(origin, "/host")
        #expect(received["Authorization"] == "none")
        #expect(received["Cookie"] == "none")
        #expect(received["X-Client"] == "app")
    }

    @Test func credentialsOfTheSessionConfigurationFollowTheSameRules() async throws {
        let landing = try Self.server()
        defer { landing.stop() }
        let origin = try Self.server(landingPort: landing.port)
        defer { origin.stop() }
        let session = URLSessionConfiguration.default
        session.httpAdditionalHeaders = ["Authorization": "Bearer session-token", "X-Client": "session"]
        let client = WebServiceClient(baseURL: URL(string: "http://127.0.0.1:\(origin.port)")!, session: session)
        #expect(client.configuration.headers == ["Authorization": "Bearer session-token"])
        let same = try await client.get("/same", as: [String: String].self)
        #expect(same["Authorization"] == "Bearer session-token")
        #expect(same["X-Client"] == "session")
        let other = try await client.get("/port", as: [String: String].self)
        #expect(other["Authorization"] == "none")
        #expect(other["X-Client"] == "session")
    }

    @Test func httpsToHTTPIsRefusedAndAnotherOriginLosesTheCredentials() throws {
        var request = URLRequest(url: URL(string: "http://api.example/landing")!)
        request.setValue("Bearer secret-token", forHTTPHeaderField: "Authorization")
        request.setValue("session=secret", forHTTPHeaderField: "Cookie")
        request.setValue("app", forHTTPHeaderField: "X-Client")

        // https to http, even on the same host: refused.
        let refused = SessionTransport.redirect(request, from: URL(string: "https://api.example/start")!)
        guard case .failure(let error) = refused else {
            Issue.record("an https to http redirect was followed")
            return
        }
        #expect(error.code == .insecureRedirect)

        func followed(_ target: String, from origin: String) throws -> URLRequest {
            request.url = URL(string: target)!
            return try SessionTransport.redirect(request, from: URL(string: origin)!).get()
        }
        // The same origin, a default port written or not: the credentials stay.
        let same = try followed("https://API.example:443/landing", from: "https://api.example/start")
        #expect(same.value(forHTTPHeaderField: "Authorization") == "Bearer secret-token")
        #expect(same.value(forHTTPHeaderField: "Cookie") == "session=secret")
        // Another scheme (http to https), host or port: they go.
        for (target, origin) in [
            ("https://api.example/landing", "http://api.example/start"),
            ("https://other.example/landing", "https://api.example/start"),
            ("https://api.example:8443/landing", "https://api.example/start"),
        ] {
            let other = try followed(target, from: origin)
            #expect(other.value(forHTTPHeaderField: "Authorization") == nil)
            #expect(other.value(forHTTPHeaderField: "Proxy-Authorization") == nil)
            #expect(other.value(forHTTPHeaderField: "Cookie") == nil)
            #expect(other.value(forHTTPHeaderField: "X-Client") == "app")
        }
    }
}
