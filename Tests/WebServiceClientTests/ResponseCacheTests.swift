import Foundation
import Testing
import WebServiceClient

/// The on-disk cache and its offline fallback, against the real server.
@Suite("ResponseCache")
struct ResponseCacheTests {
    private func cache(sizeLimit: Int = 10 << 20) throws -> (ResponseCache, URL) {
        let folder = try ClientTestEnvironment.temporaryFolder()
        return (try ResponseCache(directory: folder, sizeLimit: sizeLimit), folder)
    }

    @Test func theServerStoppedMidTestGivesTheCachedAnswerMarkedStale() async throws {
        let (cache, folder) = try cache()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try ClientTestEnvironment.startServer(poolSize: 1)
        let client = WebServiceClient(baseURL: ClientTestEnvironment.baseURL(of: server), configuration: .init(cache: cache))
        let path = "/employees/{employeeNumber}"
        let online = try await client.send(WebServiceRequest(.get, path, arguments: ["employeeNumber": 10004, "details": ["titles"]]))
        #expect(!online.isStale && online.storedAt == nil)
        #expect(online.header("ETag") != nil)

        // Revalidated while the server is up: a 304, the stored body, not stale.
        let revalidated = try await client.send(WebServiceRequest(.get, path, arguments: ["employeeNumber": 10004, "details": ["titles"]]))
        #expect(revalidated.isFromCache && !revalidated.isStale)
        #expect(revalidated.data == online.data)

        server.stop()
        let offline = try await client.send(WebServiceRequest(.get, path, arguments: ["employeeNumber": 10004, "details": ["titles"]]))
        #expect(offline.isStale)
        #expect(offline.storedAt != nil)
        #expect(offline.data == online.data)
        let employee = try offline.decode(Employee.self)
        #expect(employee.employeeNumber == 10004)

        // Nothing stored for this one: the transport error.
        let error = await #expect(throws: WebServiceError.self) {
            try await client.get(path, arguments: ["employeeNumber": 10005], as: Employee.self)
        }
        #expect(error?.code == .transport)
    }

    @Test func maxAgeServesFromTheCacheWithoutAskingTheServer() async throws {
        let (cache, folder) = try cache()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try ClientTestEnvironment.startServer(poolSize: 1)
        let client = WebServiceClient(baseURL: ClientTestEnvironment.baseURL(of: server), configuration: .init(cache: cache))
        let first = try await client.get("/departments", as: [Department].self)
        server.stop()
        // max-age=300: fresh, so no request at all, and not stale.
        let response = try await client.send(WebServiceRequest(.get, "/departments"))
        #expect(response.isFromCache && !response.isStale)
        #expect(try response.decode([Department].self) == first)
    }

    @Test func cacheFirstAndNetworkOnly() async throws {
        let (cache, folder) = try cache()
        defer { try? FileManager.default.removeItem(at: folder) }
        let client = try ClientTestEnvironment.sharedClient(configuration: .init(cache: cache))
        let arguments: RequestArguments = ["employeeNumber": 10010]
        _ = try await client.send(WebServiceRequest(.get, "/employees/{employeeNumber}", arguments: arguments))
        #expect(cache.count == 1)
        let cached = try await client.send(
            WebServiceRequest(
                .get, "/employees/{employeeNumber}", arguments: arguments, cachePolicy: .cacheFirst(maxAge: 3600)))
        // No max-age of its own: taken from the cache without asking, so flagged stale.
        #expect(cached.isFromCache && cached.isStale)

        let direct = try await client.send(
            WebServiceRequest(
                .get, "/employees/{employeeNumber}", arguments: ["employeeNumber": 10011], cachePolicy: .networkOnly))
        #expect(!direct.isFromCache)
        #expect(cache.count == 1)
    }

    @Test func aResponseIsKeptOnlyForTheHeaderValuesItVariesOn() async throws {
        let (cache, folder) = try cache()
        defer { try? FileManager.default.removeItem(at: folder) }
        let client = try ClientTestEnvironment.sharedClient(configuration: .init(cache: cache))
        let first = try await client.send(WebServiceRequest(.get, "/echo/varied", headers: ["X-Client": "a"]))
        #expect(try first.decode(String.self) == "a")
        let again = try await client.send(WebServiceRequest(.get, "/echo/varied", headers: ["X-Client": "a"]))
        #expect(again.isFromCache)
        let other = try await client.send(WebServiceRequest(.get, "/echo/varied", headers: ["X-Client": "b"]))
        #expect(!other.isFromCache)
        #expect(try other.decode(String.self) == "b")
    }

    @Test func leastRecentlyUsedEntriesGoPastTheSizeLimit() async throws {
        let folder = try ClientTestEnvironment.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Room for about three employees with their salaries.
        let probe = try ResponseCache(directory: folder.appending(path: "probe"))
        let probing = try ClientTestEnvironment.sharedClient(configuration: .init(cache: probe))
        _ = try await probing.send(WebServiceRequest(.get, "/employees/10001", arguments: ["details": "salaries"]))
        let entrySize = probe.size
        let cache = try ResponseCache(directory: folder.appending(path: "lru"), sizeLimit: entrySize * 3 + entrySize / 2)
        let client = try ClientTestEnvironment.sharedClient(configuration: .init(cache: cache))
        func get(_ number: Int) async throws -> WebServiceResponse {
            try await client.send(
                WebServiceRequest(
                    .get, "/employees/\(number)", arguments: ["details": "salaries"],
                    cachePolicy: .cacheFirst(maxAge: 3600)))
        }
        for number in [10001, 10002, 10003] { _ = try await get(number) }
        #expect(cache.count == 3)
        #expect(try await get(10001).isFromCache)  // 10001 is now the most recently used
        _ = try await get(10004)  // evicts 10002, the least recently used
        #expect(cache.size <= cache.sizeLimit)
        #expect(try await get(10001).isFromCache)
        #expect(try await get(10003).isFromCache)
        #expect(try await !get(10002).isFromCache)

        // A new cache on the same folder finds the entries.
        let reopened = try ResponseCache(directory: folder.appending(path: "lru"), sizeLimit: cache.sizeLimit)
        #expect(reopened.count == cache.count)
    }

    @Test func concurrentCallsShareTheCacheSafely() async throws {
        let (cache, folder) = try cache()
        defer { try? FileManager.default.removeItem(at: folder) }
        let client = try ClientTestEnvironment.sharedClient(configuration: .init(cache: cache))
        try await withThrowingTaskGroup(of: Int.self) { group in
            for call in 0..<40 {
                group.addTask {
                    let employee = try await client.get("/employees/{n}", arguments: ["n": 10001 + call % 5], as: Employee.self)
                    return employee.employeeNumber
                }
            }
            var seen = 0
            for try await number in group {
                #expect((10001...10005).contains(number))
                seen += 1
            }
            #expect(seen == 40)
        }
        #expect(cache.count == 5)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(names.allSatisfy { $0.hasSuffix(".entry") })
    }

    @Test func anInterruptedWriteLeavesNoCorruptEntry() async throws {
        let (cache, folder) = try cache()
        defer { try? FileManager.default.removeItem(at: folder) }
        let client = try ClientTestEnvironment.sharedClient(configuration: .init(cache: cache))
        _ = try await client.get("/employees/{n}", arguments: ["n": 10020], as: Employee.self)
        let entry = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).first)
        // A crash mid-write leaves a temporary file; a damaged entry is a miss, not a crash.
        try Data("half a".utf8).write(to: folder.appending(path: ".tmp-crashed"))
        try Data("{\"key\":".utf8).write(to: folder.appending(path: entry))
        let reopened = try ResponseCache(directory: folder)
        #expect(!FileManager.default.fileExists(atPath: folder.appending(path: ".tmp-crashed").path))
        let fresh = WebServiceClient(baseURL: client.baseURL, configuration: .init(cache: reopened))
        let response = try await fresh.send(WebServiceRequest(.get, "/employees/{n}", arguments: ["n": 10020]))
        #expect(!response.isFromCache)
        #expect(try response.decode(Employee.self).employeeNumber == 10020)
    }
}
