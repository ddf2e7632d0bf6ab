import Foundation
import HTTPTestClient
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import WebServiceClient

/// The clients of event streams: `WebServiceClient.subscribe` and
/// `employees-client watch`, against the fixture's server.
@Suite("Clients of event streams")
struct LiveClientTests {
    struct Item: Decodable, Sendable, Equatable {
        var id: Int
        var title: String
    }

    @Test(
        "subscribe: typed snapshot pages, ready, insert, update and delete; after the server ends the stream, it connects again with Last-Event-ID and misses nothing"
    )
    func subscribeFollowsAndResumes() async throws {
        let fixture = try LiveFixture()
        let s = fixture.schema
        let client = WebServiceClient(baseURL: URL(string: "http://127.0.0.1:\(fixture.port)")!)
        var events = client.subscribe(
            "/live/items", arguments: ["group": "eq.1", "select": "id,title", "order": "id"], of: Item.self,
            reconnecting: ReconnectPolicy(initialDelay: 0.1, maximumDelay: 1)
        ).makeAsyncIterator()
        var snapshot: [Item] = []
        while let event = try await events.next() {
            if case .snapshot(let rows) = event { snapshot += rows }
            if case .ready = event { break }
        }
        #expect(snapshot.map(\.title) == ["alpha", "beta", "delta"])

        try fixture.execute("UPDATE \(s).items SET title = 'changed' WHERE id = 1")
        guard case .update(let updated)? = try await events.next() else { Issue.record("no update"); return }
        #expect(updated == Item(id: 1, title: "changed"))

        fixture.feed.endAllStreams()
        try fixture.execute("INSERT INTO \(s).items (id, grp, title) VALUES (300, 1, 'late')")
        guard case .insert(let inserted)? = try await events.next() else { Issue.record("no insert"); return }
        #expect(inserted == Item(id: 300, title: "late"))
        try fixture.execute("DELETE FROM \(s).items WHERE id = 300")
        guard case .delete(let key)? = try await events.next() else { Issue.record("no delete"); return }
        #expect(key == ["id": "300"])
    }

    @Test("subscribe to a list that cannot be followed throws the server's 406 at once")
    func subscribeRefused() async throws {
        let fixture = try LiveFixture()
        let client = WebServiceClient(baseURL: URL(string: "http://127.0.0.1:\(fixture.port)")!)
        var events = client.subscribe("/live/plain", of: Item.self).makeAsyncIterator()
        await #expect(throws: WebServiceError.self) { _ = try await events.next() }
    }

    @Test("employees-client watch prints the rows, ready, then each change as it comes")
    func employeesClientWatch() throws {
        let fixture = try LiveFixture()
        let watch = try ChildProcess(
            try ChildProcess.packageExecutable("employees-client"),
            ["--base-url", "http://127.0.0.1:\(fixture.port)", "watch", "/live/items?group=eq.2&select=id,title"])
        defer {
            watch.send(SIGKILL)
            watch.wait()
        }
        #expect(watch.waitUntilPrinted { $0.contains("ready") }, "\(watch.printed)")
        try fixture.execute("UPDATE \(fixture.schema).items SET title = 'watched' WHERE id = 3")
        // Past 20 s once, under the whole parallel run with the patches off (cause not found):
        // 45 s, beyond the fixture's 30 s heartbeat, which also wakes the stream.
        let changed = Date()
        #expect(watch.waitUntilPrinted(timeout: 45) { $0.contains("update") }, "\(watch.printed)")
        print("employees-client watch: the update printed \(Date().timeIntervalSince(changed)) s after the change")
        #expect(watch.output == "snapshot {\"id\":3,\"title\":\"gamma\"}\nready\nupdate {\"id\":3,\"title\":\"watched\"}\n")
    }
}
