import Foundation
import Testing
import WebServiceClient

/// Credential providers against `employees-server` run with a password file
/// and HS256 tokens: an expired token renewed after the server's 401,
/// callers that share one renewal, basic credentials, and the cache keyed
/// by the credential actually sent.
@Suite("WebServiceClient credential providers", .serialized)
struct CredentialProviderTests {
    /// Counts the tokens fetched.
    final class Fetches: @unchecked Sendable {
        // `@unchecked Sendable`: `count` is touched only with `lock` held.
        private let lock = NSLock()
        private var count = 0
        func add() { lock.withLock { count += 1 } }
        var total: Int { lock.withLock { count } }
    }

    @Test func anExpiredTokenIsRenewedAfterA401AndTheCallSentAgain() async throws {
        let server = try AuthenticatedServer()
        let fetches = Fetches()
        let log = LogLines()
        // The app's stored token expired a minute ago (past the server's leeway of 30 s).
        let credentials = RefreshingBearerCredentials(token: try server.token(expiresIn: -60)) {
            fetches.add()
            log.append("token renewed")
            return try server.token(expiresIn: 600)
        }
        let client = WebServiceClient(
            baseURL: server.baseURL,
            configuration: .init(
                credentials: credentials, hooks: [.logging(log.append)]))
        let employee = try await client.get("/employees/{n}", arguments: ["n": 10004], as: Employee.self)
        #expect(employee.employeeNumber == 10004)
        #expect(fetches.total == 1)
        let lines = log.all
        print(lines.joined(separator: "\n"))
        #expect(lines.count == 3, "\(lines)")
        #expect(lines[0].contains("/employees/10004 -> 401"))
        #expect(lines[1] == "token renewed")
        #expect(lines[2].contains("/employees/10004 -> 200"))
        // The renewed token is kept: the next call needs no fetch.
        _ = try await client.get("/departments", as: [Department].self)
        #expect(fetches.total == 1)
    }

    @Test func concurrentCallsRefusedTogetherShareOneRenewal() async throws {
        let server = try AuthenticatedServer()
        let fetches = Fetches()
        let credentials = RefreshingBearerCredentials(token: try server.token(expiresIn: -60)) {
            fetches.add()
            try await Task.sleep(for: .milliseconds(200))  // every call meets the 401 while this fetch runs
            return try server.token(expiresIn: 600)
        }
        let client = WebServiceClient(baseURL: server.baseURL, configuration: .init(credentials: credentials))
        let numbers = try await withThrowingTaskGroup(of: Int.self) { group in
            for number in 10001...10008 {
                group.addTask { try await client.get("/employees/{n}", arguments: ["n": number], as: Employee.self).employeeNumber }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(numbers.sorted() == Array(10001...10008))
        #expect(fetches.total == 1)
    }

    @Test func aFetchThatFailsEndsTheCallWithItsError() async throws {
        struct LoginFailed: Error, Equatable {}
        let server = try AuthenticatedServer()
        let client = WebServiceClient(
            baseURL: server.baseURL,
            configuration: .init(
                credentials: .refreshingBearer(token: try server.token(expiresIn: -60)) { throw LoginFailed() }))
        await #expect(throws: LoginFailed()) { _ = try await client.get("/departments", as: [Department].self) }
    }

    @Test func basicAndStaticBearerCredentials() async throws {
        let server = try AuthenticatedServer()
        let alice = WebServiceClient(
            baseURL: server.baseURL,
            configuration: .init(
                credentials: .basic(username: "alice", password: AuthenticatedServer.password)))
        #expect(try await alice.get("/departments", as: [Department].self).count == 9)
        let bearer = WebServiceClient(baseURL: server.baseURL, configuration: .init(credentials: .bearer(try server.token(expiresIn: 600))))
        #expect(try await bearer.get("/departments", as: [Department].self).count == 9)
        // A static credential cannot renew: its 401 stands, sent once.
        let log = LogLines()
        let expired = WebServiceClient(
            baseURL: server.baseURL,
            configuration: .init(
                credentials: .bearer(try server.token(expiresIn: -60)), hooks: [.logging(log.append)]))
        await #expect {
            _ = try await expired.get("/departments", as: [Department].self)
        } throws: { ($0 as? WebServiceError)?.status == 401 }
        #expect(log.all.count == 1)
        // A call's credentials win over the client's.
        var request = WebServiceRequest(.get, "/departments")
        request.credentials = .bearer(try server.token(expiresIn: 600))
        #expect(try await expired.send(request).status == 200)
    }

    @Test func theCacheKeysByTheRenewedToken() async throws {
        let server = try AuthenticatedServer()
        let folder = try ClientTestEnvironment.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = try ResponseCache(directory: folder)
        let log = LogLines()
        let first = try server.token(expiresIn: 600)
        let client = WebServiceClient(
            baseURL: server.baseURL,
            configuration: .init(
                credentials: .bearer(first), hooks: [.logging(log.append)], cache: cache))
        _ = try await client.send(WebServiceRequest(.get, "/departments"))  // stored under the first token
        _ = try await client.send(WebServiceRequest(.get, "/departments"))  // fresh (max-age=300): from the cache
        // A client whose stored token expired: its 401 is not an answer the
        // cache holds, and the renewed token reads its own entry, not the first's.
        let renewing = WebServiceClient(
            baseURL: server.baseURL,
            configuration: .init(
                credentials: .refreshingBearer(token: try server.token(expiresIn: -60)) { try server.token(expiresIn: 900) },
                hooks: [.logging(log.append)], cache: cache))
        let renewed = try await renewing.send(WebServiceRequest(.get, "/departments"))
        #expect(!renewed.isFromCache)
        let again = try await renewing.send(WebServiceRequest(.get, "/departments"))
        #expect(again.isFromCache)
        let lines = log.all
        #expect(lines.count == 5, "\(lines)")
        #expect(lines[1].hasSuffix("from the cache"))
        #expect(lines[2].contains("-> 401") && lines[3].contains("-> 200") && !lines[3].contains("cache"))
        #expect(lines[4].hasSuffix("from the cache"))
        let entries = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".entry") }
        #expect(entries.count == 2)
    }
}
