import Foundation
import Testing
import WebServiceClient

/// The cache's RFC 9111 and RFC 5861 rules against a server other than
/// ours, which sends only `Expires`, `Last-Modified`, `Age` and
/// `Cache-Control` directives, and counts the requests it gets.
@Suite("HTTP caching")
struct HTTPCachingTests {
    /// A started test server, a client of it with a cache in a new folder, and the folder.
    private func setUp(
        authorization: Authorization? = nil
    ) throws -> (server: CachingTestServer, client: WebServiceClient, cache: ResponseCache, folder: URL) {
        let server = try CachingTestServer()
        let folder = try ClientTestEnvironment.temporaryFolder()
        let cache = try ResponseCache(directory: folder)
        let client = WebServiceClient(baseURL: server.baseURL, configuration: .init(credentials: authorization, cache: cache))
        return (server, client, cache, folder)
    }

    private func get(_ client: WebServiceClient, _ path: String, _ policy: CachePolicy? = nil) async throws -> WebServiceResponse {
        try await client.send(WebServiceRequest(.get, path, cachePolicy: policy))
    }

    @Test func expiresMinusDateIsTheFreshnessLifetime() async throws {
        let (server, client, _, folder) = try setUp()
        defer { server.stop(); try? FileManager.default.removeItem(at: folder) }
        let now = Date()
        let expiries: [String: String] = [
            "/expires": httpDate(now + 600),
            "/expires-rfc850": httpDate(now + 86_400, .rfc850),
            "/expires-asctime": httpDate(now + 86_400, .asctime),
            "/expired": httpDate(now - 600),
            "/expires-invalid": "0",
        ]
        for (path, expires) in expiries {
            server.route(path) { _, number in .init(headers: ["Expires": expires], body: "\(path) \(number)") }
        }
        // `max-age` wins over `Expires`.
        server.route("/max-age-wins") { _, number in
            .init(headers: ["Expires": httpDate(now + 600), "Cache-Control": "max-age=0"], body: "\(number)")
        }
        for path in expiries.keys.sorted() + ["/max-age-wins"] { _ = try await get(client, path) }

        for path in ["/expires", "/expires-rfc850", "/expires-asctime"] {
            let again = try await get(client, path)
            #expect(again.isFromCache && !again.isStale, "\(path)")
            #expect(try again.decode(String.self) == "\(path) 1")
            #expect(server.requests(path).count == 1, "\(path) was asked again while fresh")
            let age = try #require(again.age)
            // No older than the test: the whole parallel run can hold it up for minutes.
            #expect(age >= 0 && age <= Date().timeIntervalSince(now) + 1, "\(age)")
            #expect(again.header("Age") == String(Int(age)))
        }
        // In the past, or not a date ("0"): stale at once, so the server is asked again.
        for path in ["/expired", "/expires-invalid", "/max-age-wins"] {
            let again = try await get(client, path)
            #expect(!again.isFromCache, "\(path)")
            #expect(server.requests(path).count == 2, "\(path)")
        }
    }

    @Test func lastModifiedIsRevalidatedWithIfModifiedSinceAndA304RenewsTheEntry() async throws {
        let (server, client, _, folder) = try setUp()
        defer { server.stop(); try? FileManager.default.removeItem(at: folder) }
        let first = httpDate(Date() - 86_400)
        let second = httpDate(Date() - 3600)
        // Unchanged: the 304 brings an `Expires`, which makes the entry fresh.
        server.route("/unchanged") { request, _ in
            if request.ifModifiedSince == first {
                return .init(status: 304, headers: ["Expires": httpDate(Date() + 600)])
            }
            return .init(headers: ["Last-Modified": first], body: "v1")
        }
        // Changed once: a new body, then confirmed.
        server.route("/changed") { request, number in
            switch request.ifModifiedSince {
            case nil: .init(headers: ["Last-Modified": first], body: "v1")
            case first?: .init(headers: ["Last-Modified": second], body: "v2")
            default: .init(status: 304)
            }
        }

        #expect(try await get(client, "/unchanged").decode(String.self) == "v1")
        let confirmed = try await get(client, "/unchanged")
        #expect(confirmed.isFromCache && !confirmed.isStale)
        #expect(try confirmed.decode(String.self) == "v1")
        #expect(confirmed.header("Last-Modified") == first)
        #expect(confirmed.header("Expires") != nil)
        #expect(try #require(confirmed.age) < 60)
        #expect(server.requests("/unchanged").map(\.ifModifiedSince) == [nil, first])
        // Fresh now by the 304's `Expires`: not asked a third time.
        let fresh = try await get(client, "/unchanged")
        #expect(fresh.isFromCache && !fresh.isStale)
        #expect(server.requests("/unchanged").count == 2)

        #expect(try await get(client, "/changed").decode(String.self) == "v1")
        let changed = try await get(client, "/changed")
        #expect(!changed.isFromCache)
        #expect(try changed.decode(String.self) == "v2")
        let again = try await get(client, "/changed")
        #expect(again.isFromCache)
        #expect(try again.decode(String.self) == "v2")
        #expect(server.requests("/changed").map(\.ifModifiedSince) == [nil, first, second])
        #expect(server.requests("/changed").allSatisfy { $0.ifNoneMatch == nil })
    }

    @Test func theServersAgeCountsAgainstTheFreshnessLifetime() async throws {
        let (server, client, _, folder) = try setUp()
        defer { server.stop(); try? FileManager.default.removeItem(at: folder) }
        // Fresh for an hour, received 500 s old; and received past its hour.
        server.route("/aged") { _, number in .init(headers: ["Cache-Control": "max-age=3600", "Age": "500"], body: "\(number)") }
        server.route("/too-old") { _, number in .init(headers: ["Cache-Control": "max-age=600", "Age": "700"], body: "\(number)") }
        let stored = Date()
        _ = try await get(client, "/aged")
        _ = try await get(client, "/too-old")

        let aged = try await get(client, "/aged")
        #expect(aged.isFromCache && !aged.isStale)
        let age = try #require(aged.age)
        #expect(age >= 500 && age <= 501 + Date().timeIntervalSince(stored), "the server's age plus the time stored")
        #expect(Int(try #require(aged.header("Age")))! >= 500)
        #expect(server.requests("/aged").count == 1)

        // 700 s old when received, fresh for 600: stale at once.
        let tooOld = try await get(client, "/too-old")
        #expect(!tooOld.isFromCache)
        #expect(server.requests("/too-old").count == 2)
        // Under `.cacheFirst`, it is served, flagged stale, with its age.
        let anyAge = try await get(client, "/too-old", .cacheFirst(maxAge: 3600))
        #expect(anyAge.isFromCache && anyAge.isStale)
        #expect(try #require(anyAge.age) >= 700)
    }

    @Test func mustRevalidateIsNeverServedStaleNotEvenOffline() async throws {
        let (server, client, _, folder) = try setUp()
        defer { try? FileManager.default.removeItem(at: folder) }
        let lastModified = httpDate(Date() - 86_400)
        for (path, cacheControl) in [("/strict", "max-age=0, must-revalidate"), ("/lenient", "max-age=0")] {
            server.route(path) { _, number in
                number == 1
                    ? .init(headers: ["Cache-Control": cacheControl, "Last-Modified": lastModified], body: "stored")
                    : .init(status: 503, body: "down")
            }
            #expect(try await get(client, path).decode(String.self) == "stored")
        }

        // The server fails: the lenient answer comes back stale, the strict one is an error.
        let lenient = try await get(client, "/lenient")
        #expect(lenient.isStale && lenient.isFromCache)
        #expect(try lenient.decode(String.self) == "stored")
        #expect(lenient.age != nil)
        let failed = await #expect(throws: WebServiceError.self) { try await get(client, "/strict") }
        #expect(failed?.status == 503)
        // `.cacheFirst` does not take it stale either: the server is asked.
        await #expect(throws: WebServiceError.self) { try await get(client, "/strict", .cacheFirst(maxAge: 3600)) }
        #expect(server.requests("/strict").count == 3)

        server.stop()
        #expect(try await get(client, "/lenient").isStale)
        let offline = await #expect(throws: WebServiceError.self) { try await get(client, "/strict") }
        #expect(offline?.code == .transport)
    }

    @Test func staleWhileRevalidateAnswersAtOnceAndRenewsInTheBackground() async throws {
        let (server, client, cache, folder) = try setUp()
        defer { server.stop(); try? FileManager.default.removeItem(at: folder) }
        // Received 20 s old, fresh for 10: stale by 10, within the window of an hour.
        server.route("/rates") { _, number in
            number == 1
                ? .init(headers: ["Cache-Control": "max-age=10, stale-while-revalidate=3600", "Age": "20"], body: "v1")
                : .init(headers: ["Cache-Control": "max-age=600"], body: "v\(number)")
        }
        // Stale by two hours: past the window, so the call waits for the server.
        server.route("/late") { _, number in
            .init(headers: ["Cache-Control": "max-age=10, stale-while-revalidate=3600", "Age": "7210"], body: "v\(number)")
        }
        _ = try await get(client, "/rates")
        _ = try await get(client, "/late")

        let stale = try await get(client, "/rates")
        #expect(stale.isStale && stale.isFromCache)
        #expect(try stale.decode(String.self) == "v1")
        #expect(try #require(stale.age) >= 20)
        await cache.waitForBackgroundRevalidations()
        #expect(server.requests("/rates").count == 2)
        let renewed = try await get(client, "/rates")
        #expect(renewed.isFromCache && !renewed.isStale)
        #expect(try renewed.decode(String.self) == "v2")
        #expect(server.requests("/rates").count == 2)

        let late = try await get(client, "/late")
        #expect(!late.isFromCache)
        #expect(try late.decode(String.self) == "v2")
    }

    @Test func staleIfErrorServesTheStoredAnswerWithinItsWindow() async throws {
        let (server, client, _, folder) = try setUp()
        defer { try? FileManager.default.removeItem(at: folder) }
        let scripted: [(path: String, age: String, cacheControl: String)] = [
            ("/within", "20", "max-age=10, stale-if-error=3600"),  // stale by 10
            ("/past", "7210", "max-age=10, stale-if-error=3600"),  // stale by two hours
            ("/none", "20", "max-age=10"),
        ]
        for (path, age, cacheControl) in scripted {
            server.route(path) { _, number in
                number == 1
                    ? .init(headers: ["Cache-Control": cacheControl, "Age": age], body: "stored") : .init(status: 500, body: "oops")
            }
            _ = try await get(client, path)
        }

        let within = try await get(client, "/within")
        #expect(within.isStale && within.isFromCache)
        #expect(try within.decode(String.self) == "stored")
        #expect(try #require(within.age) >= 20)
        for path in ["/past", "/none"] {
            let error = await #expect(throws: WebServiceError.self, "\(path)") { try await get(client, path) }
            #expect(error?.status == 500)
        }
        #expect(server.requests("/within").count == 2)

        // Unreachable: the stored answer, as for any answer the app was offline for.
        server.stop()
        let offline = try await get(client, "/within")
        #expect(offline.isStale && offline.data == within.data)
    }

    @Test func twoUsersOnOneCacheFolderNeverSeeEachOthersEntry() async throws {
        let server = try CachingTestServer()
        let folder = try ClientTestEnvironment.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let lastModified = httpDate(Date() - 86_400)
        // Fresh for ten minutes, and one that is revalidated at every call.
        server.route("/profile") { request, _ in
            .init(headers: ["Expires": httpDate(Date() + 600)], body: request.authorization ?? "nobody")
        }
        server.route("/inbox") { request, _ in
            request.ifModifiedSince == lastModified
                ? .init(status: 304)
                : .init(headers: ["Last-Modified": lastModified], body: request.authorization ?? "nobody")
        }
        func client(_ authorization: Authorization) throws -> WebServiceClient {
            // Each user's own cache on the one folder, as two processes of one app would open it.
            WebServiceClient(
                baseURL: server.baseURL, configuration: .init(credentials: authorization, cache: try ResponseCache(directory: folder)))
        }
        let ann = Authorization.bearer("ann-token")
        let bob = Authorization.bearer("bob-token")
        let annClient = try client(ann)
        let bobClient = try client(bob)

        for path in ["/profile", "/inbox"] {
            #expect(try await get(annClient, path).decode(String.self) == ann.headerValue)
            let forBob = try await get(bobClient, path, .cacheFirst(maxAge: 3600))
            #expect(!forBob.isFromCache, "\(path)")
            #expect(try forBob.decode(String.self) == bob.headerValue)
        }
        // Bob's first call of `/inbox` carried no validator of Ann's entry.
        #expect(server.requests("/inbox").map(\.ifModifiedSince) == [nil, nil])
        #expect(server.requests("/profile").count == 2)

        // Each gets their own entry back: fresh, or confirmed by a 304.
        for (client, authorization) in [(annClient, ann), (bobClient, bob)] {
            for path in ["/profile", "/inbox"] {
                let again = try await get(client, path)
                #expect(again.isFromCache)
                #expect(try again.decode(String.self) == authorization.headerValue)
            }
        }
        #expect(server.requests("/profile").count == 2)
        #expect(server.requests("/inbox").map(\.ifModifiedSince) == [nil, nil, lastModified, lastModified])

        server.stop()
        for (client, authorization) in [(annClient, ann), (bobClient, bob)] {
            let offline = try await get(client, "/inbox")
            #expect(offline.isStale)
            #expect(try offline.decode(String.self) == authorization.headerValue)
        }
        let carol = try client(.bearer("carol-token"))
        let error = await #expect(throws: WebServiceError.self) { try await get(carol, "/inbox") }
        #expect(error?.code == .transport)
    }
}

/// The age of stored answers from the real employees-server, which sends
/// `ETag`, `Date` and, for `/departments`, `Cache-Control: max-age=300`.
@Suite("HTTP caching against employees-server")
struct HTTPCachingServerTests {
    @Test func storedAnswersReportTheirAgeFreshRevalidatedAndOffline() async throws {
        let folder = try ClientTestEnvironment.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try ClientTestEnvironment.startServer(poolSize: 1)
        let cache = try ResponseCache(directory: folder)
        let client = WebServiceClient(baseURL: ClientTestEnvironment.baseURL(of: server), configuration: .init(cache: cache))

        let departments = try await client.send(WebServiceRequest(.get, "/departments"))
        #expect(departments.age == nil && departments.header("Date") != nil)
        let employee = try await client.send(WebServiceRequest(.get, "/employees/{n}", arguments: ["n": 10004]))
        #expect(employee.header("ETag") != nil && employee.header("Last-Modified") == nil)
        try await Task.sleep(for: .seconds(1.1))

        // Fresh by its max-age, from the cache: about as old as the time since.
        let fresh = try await client.send(WebServiceRequest(.get, "/departments"))
        #expect(fresh.isFromCache && !fresh.isStale)
        let freshAge = try #require(fresh.age)
        #expect(freshAge >= 1 && freshAge < 300)
        #expect(Int(try #require(fresh.header("Age")))! >= 1)

        // No lifetime: revalidated with its ETag; the 304 makes it new again.
        let beforeRevalidation = Date()
        let confirmed = try await client.send(WebServiceRequest(.get, "/employees/{n}", arguments: ["n": 10004]))
        let exchange = Date().timeIntervalSince(beforeRevalidation)
        #expect(try #require(confirmed.storedAt) >= beforeRevalidation)
        #expect(confirmed.isFromCache && !confirmed.isStale)
        // `Date` has whole seconds: just confirmed, the age is at most the
        // exchange (however long a loaded machine made it) plus a second.
        #expect(try #require(confirmed.age) <= exchange + 1.5)
        #expect(confirmed.data == employee.data)

        server.stop()
        try await Task.sleep(for: .seconds(1.1))
        let offline = try await client.send(WebServiceRequest(.get, "/employees/{n}", arguments: ["n": 10004]))
        #expect(offline.isStale)
        #expect(try #require(offline.age) >= 1)
        #expect(try offline.decode(Employee.self).employeeNumber == 10004)
        // `/departments` is still fresh: served as such, not stale, even with the server gone.
        let stillFresh = try await client.send(WebServiceRequest(.get, "/departments"))
        #expect(stillFresh.isFromCache && !stillFresh.isStale)
        #expect(try #require(stillFresh.age) >= 2)
    }
}
