import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPTestClient
import Testing

/// A web application on another origin calling `employees-server` with a
/// bearer token, in a real browser: headless Chromium (Debian's
/// `chromium`, which scripts/setup installs) loads a page from a second
/// origin (`python3 -m http.server` on `localhost`) that calls the API on
/// `127.0.0.1` with `fetch`, and writes the outcome into the page, which
/// the test reads (`--dump-dom`). The browser's preflight carries no
/// credentials, as browsers never send them.
@Suite("CORS with bearer tokens, in Chromium", .serialized)
struct CrossOriginBrowserTests {
    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// An HS256 token for `claims`, signed with the secret in `secretFile` (openssl).
    static func token(_ claims: [String: Any], secretFile: String) throws -> String {
        func base64URL(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let header = base64URL(try JSONSerialization.data(withJSONObject: ["alg": "HS256", "typ": "JWT"]))
        let payload = base64URL(try JSONSerialization.data(withJSONObject: claims))
        let secret = try String(contentsOfFile: secretFile, encoding: .utf8)
        let signature = try ToolProcess.run(
            "/usr/bin/openssl", ["dgst", "-sha256", "-binary", "-hmac", secret], input: Data("\(header).\(payload)".utf8))
        return "\(header).\(payload).\(base64URL(signature))"
    }

    /// The page: two calls of the same `fetch`, with the token and without,
    /// their outcomes written into `#outcome`.
    static func page(api: String, token: String) -> String {
        """
        <!doctype html>
        <html><body><pre id="outcome">pending</pre>
        <script>
        async function call(headers) {
          try {
            const response = await fetch("\(api)", {headers});
            const body = await response.json();
            return response.status + " " + (body.firstName || body.title);
          } catch (error) {
            return "failed (" + error.name + ")";
          }
        }
        (async () => {
          const withToken = await call({Authorization: "Bearer \(token)"});
          const withoutToken = await call({});
          document.getElementById("outcome").textContent = "with the token: " + withToken + "; without: " + withoutToken;
        })();
        </script></body></html>
        """
    }

    @Test(
        "a page on another origin calls the API with a bearer token: the preflight is answered without credentials, the call with the token gets 200, without it 401"
    )
    func bearerTokenFromAnotherOrigin() throws {
        let browser = try #require(Self.chromium, "headless Chromium is needed: scripts/setup installs Debian's chromium")
        let folder = FileManager.default.temporaryDirectory.appending(path: "cors-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }

        // The other origin: a static file server on localhost.
        let pages = try ChildProcess("/usr/bin/python3", ["-u", "-m", "http.server", "--bind", "127.0.0.1", "--directory", folder, "0"])
        // SIGKILL: the test process may block SIGTERM, and its children inherit the mask.
        defer {
            pages.send(SIGKILL)
            pages.wait()
        }
        var pagePort: Int?
        _ = pages.waitUntilPrinted(timeout: 10) { text in
            pagePort = text.firstMatch(of: /port (\d+)/).flatMap { Int($0.1) }
            return pagePort != nil
        }
        let origin = "http://localhost:\(try #require(pagePort, "\(pages.printed)"))"

        let secretFile = "\(folder)/secret"
        try String(repeating: "c", count: 48).write(toFile: secretFile, atomically: true, encoding: .utf8)
        let server = try TestEnvironment.startEmployeesServer([
            "--port", "0", "--drain-seconds", "0", "--jwt-secret-file", secretFile, "--cors-origin", origin,
        ])
        defer { server.stop() }
        let api = "http://127.0.0.1:\(try server.servingPort())/employees/10001"
        let token = try Self.token(["role": "employees_reader"], secretFile: secretFile)
        let employee = try TestClient.request(
            "GET", "/employees/10001", port: try server.servingPort(), headers: [("Authorization", "Bearer \(token)")])
        let firstName = try #require(employee.object["firstName"] as? String, "\(employee)")
        try Self.page(api: api, token: token).write(toFile: "\(folder)/page.html", atomically: true, encoding: .utf8)

        let dump = try ToolProcess.outcome(
            browser,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(folder)/profile", "--virtual-time-budget=10000",
                "--dump-dom", "\(origin)/page.html",
            ])
        let outcome = try #require(
            dump.text.firstMatch(of: /<pre id="outcome">([^<]*)<\/pre>/).map { String($0.1) }, "\(dump.text)\(dump.errors)")
        #expect(outcome == "with the token: 200 \(firstName); without: 401 Unauthorized", "\(server.printed)")
        #expect(server.printed.contains("OPTIONS /employees/10001 204"), "the preflight was answered: \(server.printed)")
    }
}
