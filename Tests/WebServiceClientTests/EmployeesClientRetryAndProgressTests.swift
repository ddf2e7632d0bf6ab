import Foundation
import HTTPServer
import Testing

/// `employees-client --retry` and the progress line of `search`, the
/// executable run as a separate process.
@Suite("employees-client retry and progress")
struct EmployeesClientRetryAndProgressTests {
    /// A server that is restarting once (503, `Retry-After: 1`), then answers.
    static func restartingServer() throws -> ScriptedServer {
        try ScriptedServer([
            {
                var response = HTTPResponse(status: .serviceUnavailable, text: "restarting")
                response.headers["Retry-After"] = "1"
                return response
            },
            { HTTPResponse(status: .ok, json: Array(#"{"employeeNumber":10004,"firstName":"Chirstian"}"#.utf8)) },
        ])
    }

    @Test func retrySendsTheCallAgainAfterRetryAfter() async throws {
        let server = try Self.restartingServer()
        defer { server.stop() }
        let start = Date()
        let outcome = try await EmployeesClientProcessTests.run(
            ["--base-url", server.baseURL.absoluteString, "--retry", "2", "get", "10004"])
        #expect(outcome.status == 0, "\(outcome.errors)")
        #expect(outcome.output.contains("\"employeeNumber\":10004"))
        #expect(server.requests == 2)
        #expect(Date().timeIntervalSince(start) >= 1)

        let once = try Self.restartingServer()
        defer { once.stop() }
        let failed = try await EmployeesClientProcessTests.run(["--base-url", once.baseURL.absoluteString, "get", "10004"])
        #expect(failed.status == 1)
        #expect(failed.errors.contains("503"), "\(failed.errors)")
        #expect(once.requests == 1)
    }

    @Test func searchShowsAProgressLineForTheWholeList() async throws {
        let baseURL = ClientTestEnvironment.baseURL(of: try ClientTestEnvironment.shared.get()).absoluteString
        let outcome = try await EmployeesClientProcessTests.run(["--base-url", baseURL, "search", "*", "--progress"])
        #expect(outcome.status == 0, "\(outcome.errors)")
        #expect(outcome.output.split(separator: "\n").count == 300_024)
        let updates = outcome.errors.split(whereSeparator: { $0 == "\r" || $0 == "\n" })
        let last = try #require(updates.last)
        print("employees-client search '*' --progress, last of \(updates.count) updates: \(last)")
        #expect(last.firstMatch(of: /^employees-client: 300024 matches, [\d.]+ MB received in [\d.]+ s$/) != nil, "\(last)")
        #expect(outcome.errors.hasSuffix("\n"))

        // Not a terminal, and not asked for: no line.
        let quiet = try await EmployeesClientProcessTests.run(["--base-url", baseURL, "search", "bal*"])
        #expect(quiet.status == 0)
        #expect(quiet.errors.isEmpty, "\(quiet.errors)")
    }
}
