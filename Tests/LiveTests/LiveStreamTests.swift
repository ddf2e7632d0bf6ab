import Foundation
import HTTPTestClient
import PostgreSQLWebService
import Testing

/// A list followed as Server-Sent Events, against the real database and
/// the real triggers of `live.sql`, over real sockets: its snapshot, then
/// an event for each committed change of its rows as the caller's
/// filters, `select`, embeds and role make them.
@Suite("Event streams of lists")
struct LiveStreamTests {
    @Test(
        "a filtered, ordered, embedded list: the snapshot in its order, ready, then insert, update (of the row and of its embed) and delete, each with an id; rows outside the filter send nothing"
    )
    func eachEventKind() throws {
        let fixture = try LiveFixture()
        let stream = try fixture.stream("/items?group=eq.1&order=title.desc&select=id,title,tags(tag)")
        #expect(stream.status == 200)
        #expect(stream.header("Content-Type") == "text/event-stream")
        #expect(stream.header("Cache-Control") == "no-cache")
        let opening = try stream.events(through: "ready")
        let titles = EventStreamClient.rows(of: opening).map { $0["title"] as? String }
        #expect(titles == ["delta", "beta", "alpha"])
        let alpha = EventStreamClient.rows(of: opening).first { $0["title"] as? String == "alpha" }
        #expect((alpha?["tags"] as? [[String: Any]])?.compactMap { $0["tag"] as? String } == ["blue", "red"])
        #expect(stream.retries == [2000])
        let ready = try #require(opening.last)
        #expect(ready.id != nil)

        let s = fixture.schema
        try fixture.execute("INSERT INTO \(s).items (id, grp, title) VALUES (100, 1, 'omega'), (101, 2, 'elsewhere')")
        let insert = try #require(try stream.next())
        #expect(insert.name == "insert")
        #expect(insert.data == #"{"id":100,"title":"omega","tags":[]}"#)
        try fixture.execute("INSERT INTO \(s).tags VALUES (100, 'new')")
        let tagged = try #require(try stream.next())
        #expect(tagged.name == "update")
        #expect(tagged.data == #"{"id":100,"title":"omega","tags":[{"tag":"new"}]}"#)
        try fixture.execute("UPDATE \(s).items SET title = 'omega2' WHERE id = 100")
        let update = try #require(try stream.next())
        #expect(update.name == "update")
        #expect(update.data == #"{"id":100,"title":"omega2","tags":[{"tag":"new"}]}"#)
        try fixture.execute("DELETE FROM \(s).items WHERE id IN (100, 101)")
        let delete = try #require(try stream.next())
        #expect(delete.name == "delete")
        #expect(delete.data == #"{"id":100}"#)
        let ids = [ready, insert, tagged, update, delete].compactMap(\.id)
        #expect(Set(ids).count == 5, "every event has an id of its own: \(ids)")
        // A change that changes nothing the caller sees sends nothing.
        try fixture.execute("UPDATE \(s).items SET note = 'unseen' WHERE id = 1")
        #expect(try stream.isQuiet(for: 0.5))
    }

    @Test("an update moves a row into the filter (insert) and out of it (delete)")
    func rowsEnterAndLeave() throws {
        let fixture = try LiveFixture()
        let s = fixture.schema
        let stream = try fixture.stream("/items?group=eq.2&select=id,title")
        let opening = try stream.events(through: "ready")
        #expect(EventStreamClient.rows(of: opening).compactMap { $0["id"] as? Int } == [3])
        try fixture.execute("UPDATE \(s).items SET grp = 2 WHERE id = 1")
        let entered = try #require(try stream.next())
        #expect(entered.name == "insert")
        #expect(entered.data == #"{"id":1,"title":"alpha"}"#)
        try fixture.execute("UPDATE \(s).items SET grp = 1 WHERE id = 1")
        let left = try #require(try stream.next())
        #expect(left.name == "delete")
        #expect(left.data == #"{"id":1}"#)
        // The or of PostgREST's syntax, too.
        let either = try fixture.stream("/items?or=(title.eq.alpha,title.eq.zeta)&select=id,title")
        _ = try either.events(through: "ready")
        try fixture.execute("UPDATE \(s).items SET title = 'zeta' WHERE id = 2")
        #expect(try either.next()?.name == "insert")
        try fixture.execute("UPDATE \(s).items SET title = 'eta' WHERE id = 1")
        #expect(try either.next()?.data == #"{"id":1}"#)
    }

    @Test("callers of one group share its reads: one statement per batch for twenty streams, and every stream gets the event")
    func oneStatementPerGroup() throws {
        let fixture = try LiveFixture()
        let streams = try (0..<20).map { _ in try fixture.stream("/items?group=eq.1&select=id,title") }
        for stream in streams { _ = try stream.events(through: "ready") }
        #expect(fixture.feed.statistics.groups == 1)
        let before = fixture.feed.statistics.statements
        try fixture.execute("UPDATE \(fixture.schema).items SET title = 'changed' WHERE id = 1")
        for stream in streams { #expect(try stream.next()?.data == #"{"id":1,"title":"changed"}"#) }
        #expect(fixture.feed.statistics.statements - before == 1)
    }

    @Test("a comment every heartbeat keeps an idle stream open")
    func heartbeat() throws {
        let fixture = try LiveFixture(configuration: LiveConfiguration(heartbeat: .milliseconds(200), batchInterval: .milliseconds(10)))
        let stream = try fixture.stream("/items?group=eq.2&select=id")
        _ = try stream.events(through: "ready")
        try stream.drain(for: 1)
        #expect(stream.comments >= 2)
    }

    @Test(
        "a list that cannot be followed is refused: no key (406), a page (400 limit), a select without the key (400 select), bad input in the filters (400)"
    )
    func refusals() throws {
        let fixture = try LiveFixture()
        let plain = try fixture.stream("/plain")
        #expect(plain.status == 406)
        #expect(plain.body.contains("no known key"))
        let paged = try fixture.stream("/paged?limit=2")
        #expect(paged.status == 400)
        #expect(paged.body.contains(#""parameter":"limit""#))
        let limited = try fixture.stream("/items?limit=2")
        #expect(limited.status == 400)
        let keyless = try fixture.stream("/items?select=title")
        #expect(keyless.status == 400)
        #expect(keyless.body.contains(#""parameter":"select""#))
        let aliased = try fixture.stream("/items?select=key:id,title&group=eq.2")
        #expect(aliased.status == 200)
        _ = try aliased.events(through: "ready")
        try fixture.execute("DELETE FROM \(fixture.schema).items WHERE id = 3")
        #expect(try aliased.next()?.data == #"{"key":3}"#)
        let unknown = try fixture.stream("/items?nope=eq.1")
        #expect(unknown.status == 400)
    }

    @Test(
        "streams end cleanly (the final chunk, or the close of a stream sent without chunks) at a drain and at the end of their lifetime"
    )
    func drainAndLifetime() throws {
        let fixture = try LiveFixture()
        let stream = try fixture.stream("/items?group=eq.1&select=id")
        _ = try stream.events(through: "ready")
        // Sent without chunks exactly when the readers send events themselves (event-writes).
        #expect(stream.isCloseDelimited == TestPatches.resolved.writesEventsDirectly)
        #expect((stream.header("Transfer-Encoding") == "chunked") == !TestPatches.resolved.writesEventsDirectly)
        fixture.feed.endAllStreams()
        #expect(try stream.next() == nil)
        #expect(stream.hasEnded && !stream.wasCutOff)

        let short = try LiveFixture(configuration: LiveConfiguration(batchInterval: .milliseconds(10), streamLifetime: .milliseconds(500)))
        let ending = try short.stream("/items?group=eq.1&select=id")
        _ = try ending.events(through: "ready")
        #expect(try ending.next(timeout: 5) == nil)
        #expect(ending.hasEnded && !ending.wasCutOff)
    }
}
