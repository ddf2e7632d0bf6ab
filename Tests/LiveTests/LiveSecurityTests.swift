import Foundation
import HTTPTestClient
import PostgreSQLWebService
import Testing

/// Row-level security decides what each stream hears, as it decides what
/// each list holds: the attacks of a role that may not see a row, on every
/// way a row reaches a stream.
@Suite("Event streams under row-level security")
struct LiveSecurityTests {
    @Test(
        "a secret row inserted, then a public one made secret: the public role's stream never gets the secret row (nor its key), the other role's stream gets both"
    )
    func secretRowsNeverReachAnotherRole() throws {
        let fixture = try LiveFixture()
        let s = fixture.schema
        let publicStream = try fixture.stream("/items?group=eq.1&select=id,title,secret", role: "live_public")
        let allStream = try fixture.stream("/items?group=eq.1&select=id,title,secret", role: "live_all")
        let publicRows = EventStreamClient.rows(of: try publicStream.events(through: "ready"))
        let allRows = EventStreamClient.rows(of: try allStream.events(through: "ready"))
        #expect(publicRows.compactMap { $0["title"] as? String } == ["alpha", "beta"])
        #expect(allRows.compactMap { $0["title"] as? String } == ["alpha", "beta", "delta"])
        #expect(fixture.feed.statistics.groups == 2, "a group per role")

        try fixture.execute("INSERT INTO \(s).items (id, grp, title, secret) VALUES (200, 1, 'classified', true)")
        #expect(try allStream.next()?.data == #"{"id":200,"title":"classified","secret":true}"#)
        // The secret row's change of title, its tag, its deletion: nothing, for the public role.
        try fixture.execute("UPDATE \(s).items SET title = 'classified2' WHERE id = 200")
        #expect(try allStream.next()?.name == "update")
        try fixture.execute("INSERT INTO \(s).tags VALUES (200, 'hidden')")
        try fixture.execute("DELETE FROM \(s).items WHERE id = 200")
        #expect(try allStream.next()?.data == #"{"id":200}"#)
        // A public row becomes secret: it leaves the public stream (its key
        // was already seen there), and changes within the other.
        try fixture.execute("UPDATE \(s).items SET secret = true WHERE id = 2")
        #expect(try publicStream.next()?.data == #"{"id":2}"#)
        #expect(try allStream.next()?.data == #"{"id":2,"title":"beta","secret":true}"#)
        // A last public change proves the public stream was still listening all along.
        try fixture.execute("UPDATE \(s).items SET title = 'alpha2' WHERE id = 1")
        let last = try #require(try publicStream.next())
        #expect(last.data == #"{"id":1,"title":"alpha2","secret":false}"#)
        let heard = publicStream.received.map(\.data).joined(separator: "\n")
        #expect(!heard.contains("classified") && !heard.contains("200") && !heard.contains("hidden"), "\(heard)")
    }

    @Test("filtering on what the role may not see finds nothing, then and later")
    func filteringOnHiddenRowsFindsNothing() throws {
        let fixture = try LiveFixture()
        let probe = try fixture.stream("/items?secret=is.true&select=id,title", role: "live_public")
        #expect(EventStreamClient.rows(of: try probe.events(through: "ready")).isEmpty)
        try fixture.execute("INSERT INTO \(fixture.schema).items (grp, title, secret) VALUES (3, 'another secret', true)")
        try fixture.execute("UPDATE \(fixture.schema).items SET title = 'renamed' WHERE id = 4")
        #expect(try probe.isQuiet(for: 0.7))
    }

    @Test("a role that may not read the table is refused (403) before any event")
    func roleWithoutGrantIsRefused() throws {
        let fixture = try LiveFixture()
        try fixture.execute("REVOKE SELECT ON \(fixture.schema).items FROM live_public")
        let refused = try fixture.stream("/items?select=id", role: "live_public")
        #expect(refused.status == 403, "\(refused.body)")
        #expect(fixture.feed.statistics.streams == 0)
    }
}
