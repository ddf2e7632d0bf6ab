import Foundation
import HTTPTestClient
import Locking
import PostgreSQLWebService
import Testing

/// What happens when a stream is interrupted: a caller that connects
/// again, a listener lost, a client that stops reading.
@Suite("Event streams interrupted")
struct LiveRecoveryTests {
    @Test(
        "Last-Event-ID resumes with the changes missed, without a snapshot; past the window, or from another epoch, reset and a new snapshot"
    )
    func resumeAndReset() throws {
        let fixture = try LiveFixture(
            configuration: LiveConfiguration(heartbeat: .seconds(30), batchInterval: .milliseconds(10), window: 4 << 10))
        let s = fixture.schema
        // A second caller of the group, reading all along, tells when the group has written each change.
        let watcher = try fixture.stream("/items?group=eq.1&select=id,title")
        _ = try watcher.events(through: "ready")
        var first: EventStreamClient? = try fixture.stream("/items?group=eq.1&select=id,title")
        _ = try first?.events(through: "ready")
        try fixture.execute("UPDATE \(s).items SET title = 'one' WHERE id = 1")
        let seen = try #require(try first?.next())
        let lastID = try #require(seen.id)
        first = nil
        try fixture.execute("UPDATE \(s).items SET title = 'two' WHERE id = 1")
        try fixture.execute("UPDATE \(s).items SET title = 'three' WHERE id = 2")
        try Self.read(watcher, until: #"{"id":2,"title":"three"}"#)

        var resumed: EventStreamClient? = try fixture.stream("/items?group=eq.1&select=id,title", lastEventID: lastID)
        let missed = [try resumed?.next(), try resumed?.next()]
        #expect(missed.map { $0?.name } == ["update", "update"])
        #expect(missed.map { $0?.data } == [#"{"id":1,"title":"two"}"#, #"{"id":2,"title":"three"}"#])
        #expect(resumed?.received.allSatisfy { $0.name != "snapshot" && $0.name != "ready" } == true)
        let resumedID = try #require(missed.last.flatMap { $0?.id })

        // More than the window's 4 KB of events while away: reset, and the rows anew.
        resumed = nil
        for index in 0..<12 {
            try fixture.execute("UPDATE \(s).items SET title = '\(index)\(String(repeating: "x", count: 500))' WHERE id = \(index % 2 + 1)")
            try Self.read(watcher, until: #"{"id":\#(index % 2 + 1),"title":"\#(index)x"#)
        }
        let late = try fixture.stream("/items?group=eq.1&select=id,title", lastEventID: resumedID)
        let restart = try late.events(through: "ready")
        #expect(restart.first?.name == "reset")
        #expect(EventStreamClient.rows(of: restart).count == 3)

        let stranger = try fixture.stream("/items?group=eq.1&select=id,title", lastEventID: "0badcafe.1")
        #expect(try stranger.events(through: "ready").first?.name == "reset")
    }

    @Test(
        "the LISTEN connection killed (pg_terminate_backend): every stream gets reset and ends, the feed listens again, and a new stream hears the next change"
    )
    func listenerKilledAndRecovered() throws {
        let fixture = try LiveFixture()
        let stream = try fixture.stream("/items?group=eq.1&select=id,title")
        let opening = try stream.events(through: "ready")
        let listener = try #require(fixture.feed.listenerPID)
        try fixture.execute("SELECT pg_terminate_backend(\(listener))")
        let after = try stream.next()
        #expect(after?.name == "reset")
        #expect(try stream.next() == nil)
        #expect(stream.hasEnded)
        try Self.waitUntil { fixture.feed.statistics.isListening }
        #expect(fixture.feed.listenerPID != listener)

        let again = try fixture.stream("/items?group=eq.1&select=id,title", lastEventID: opening.last?.id)
        let restart = try again.events(through: "ready")
        #expect(restart.first?.name == "reset", "another epoch: the old id is not resumed")
        try fixture.execute("UPDATE \(fixture.schema).items SET title = 'after' WHERE id = 1")
        #expect(try again.next()?.data == #"{"id":1,"title":"after"}"#)
    }

    @Test(
        "a client that stops reading is dropped once its backlog passes the window, and never slows the others, which get every event in order"
    )
    func stalledReaderIsDropped() throws {
        let fixture = try LiveFixture(
            configuration: LiveConfiguration(heartbeat: .seconds(30), batchInterval: .milliseconds(5), window: 64 << 10))
        let s = fixture.schema
        let stalled = try fixture.stream("/items?group=eq.9&select=id,note", receiveBufferSize: 4096)
        let stalledReady = try stalled.events(through: "ready")
        let active = try fixture.stream("/items?group=eq.9&select=id,note")
        _ = try active.events(through: "ready")

        // `Locked`, whose lock ThreadSanitizer sees (it does not see `Synchronization.Mutex`'s futex as one).
        let heard = Locked<[String]>([])
        let reader = Thread {
            while let event = try? active.next(timeout: 20) {
                heard.withLock { $0.append(event.name + " " + String(event.data.prefix(30))) }
            }
        }
        reader.start()
        // Inserts go on until the stalled stream is dropped (once the kernel's
        // buffers are full), and a few more; the active reader is never more
        // than two events behind the writer, so that its own backlog stays
        // within the window whatever the machine's speed.
        let filler = String(repeating: "n", count: 24_000)
        var inserts = 0
        var afterDrop = 0
        while afterDrop < 5, inserts < 2_000 {
            try fixture.execute("INSERT INTO \(s).items (id, grp, title, note) VALUES (\(1000 + inserts), 9, 'many', '\(filler)')")
            inserts += 1
            if fixture.feed.statistics.dropped >= 1 { afterDrop += 1 }
            let written = inserts
            try Self.waitUntil(seconds: 20) { heard.withLock { $0.count } >= written - 2 }
        }
        try Self.waitUntil(seconds: 20) { heard.withLock { $0.count } == inserts }
        let notes = heard.withLock { $0 }
        #expect(notes == (0..<inserts).map { "insert " + String((#"{"id":\#(1000 + $0),"note":""# + filler).prefix(30)) })
        #expect(fixture.feed.statistics.dropped >= 1)
        withExtendedLifetime(stalled) {}
        let again = try fixture.stream("/items?group=eq.9&select=id,note", lastEventID: stalledReady.last?.id)
        #expect(try again.events(through: "ready").first?.name == "reset")
    }

    @Test(
        "a reader slower than its events gets every one, whole and in order, once it reads again (what its socket does not take waits)"
    )
    func slowReaderCatchesUp() throws {
        let fixture = try LiveFixture(
            configuration: LiveConfiguration(heartbeat: .seconds(30), batchInterval: .milliseconds(5), window: 8 << 20))
        let s = fixture.schema
        // A small receive buffer: the server's sends find the socket full long before the last event.
        let slow = try fixture.stream("/items?group=eq.8&select=id,note", receiveBufferSize: 4096)
        _ = try slow.events(through: "ready")
        let filler = String(repeating: "m", count: 24_000)
        for n in 0..<40 {
            try fixture.execute("INSERT INTO \(s).items (id, grp, title, note) VALUES (\(2000 + n), 8, 'slow', '\(filler)')")
        }
        // Events pile up while nobody reads.
        Thread.sleep(forTimeInterval: 1)
        var inserted: [String] = []
        while inserted.count < 40, let event = try slow.next(timeout: 10) {
            if event.name == "insert" { inserted.append(event.data) }
        }
        #expect(inserted == (0..<40).map { #"{"id":\#(2000 + $0),"note":"\#(filler)"}"# })
        #expect(!slow.wasCutOff)
        #expect(fixture.feed.statistics.dropped == 0)
    }

    /// Reads `stream` until an event whose data begins with `prefix`.
    static func read(_ stream: EventStreamClient, until prefix: String) throws {
        while let event = try stream.next() {
            if event.data.hasPrefix(prefix) { return }
        }
        throw EventStreamClient.Failure.malformed("the stream ended before \(prefix)")
    }

    static func waitUntil(seconds: Double = 10, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < deadline else { throw EventStreamClient.Failure.malformed("condition not met in \(seconds) s") }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }
}
