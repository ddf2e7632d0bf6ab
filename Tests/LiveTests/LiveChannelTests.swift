import Foundation
import HTTPTestClient
import PostgreSQL
import SQLServices
import Testing
import WebService

/// `-- @listen channel`: a service file whose list's event streams relay
/// `NOTIFY channel` after its rows, to the roles that may run its statement.
@Suite("Channels relayed by service files")
struct LiveChannelTests {
    /// A fixture whose server also serves a folder with `GET /chat/messages`, listening on a channel of its own.
    static func fixture() throws -> (fixture: LiveFixture, channel: String) {
        let channel = "live_chat_" + String(UInt32.random(in: 0x1000_0000...UInt32.max), radix: 16)
        let fixture = try LiveFixture { schema, admin in
            try admin.executeScript(
                """
                CREATE TABLE \(schema).messages (id int PRIMARY KEY, body text NOT NULL);
                INSERT INTO \(schema).messages VALUES (1, 'first'), (2, 'second');
                GRANT SELECT ON \(schema).messages TO live_all, employees_reader;
                """)
            let folder = FileManager.default.temporaryDirectory.appending(path: "live-\(schema)").path
            try FileManager.default.createDirectory(atPath: folder + "/chat", withIntermediateDirectories: true)
            try """
            -- GET /chat/messages
            -- The room's messages, then each one as it is posted.
            -- @listen \(channel)
            SELECT id, body FROM \(schema).messages ORDER BY id
            """.write(toFile: folder + "/chat/messages.sql", atomically: true, encoding: .utf8)
            let loaded = try ServiceFolder(folder).load(on: admin)
            try? FileManager.default.removeItem(atPath: folder)
            return loaded.services
        }
        return (fixture, channel)
    }

    @Test(
        "the statement's rows, ready, then each NOTIFY payload as an event with an id: its JSON as it is, a payload that is not JSON as a JSON string; Last-Event-ID resumes"
    )
    func relaysNotifications() throws {
        let (fixture, channel) = try Self.fixture()
        let stream = try fixture.stream("/messages", service: "/chat")
        #expect(stream.status == 200)
        let opening = try stream.events(through: "ready")
        #expect(EventStreamClient.rows(of: opening).compactMap { $0["body"] as? String } == ["first", "second"])
        try fixture.execute("NOTIFY \(channel), '{\"id\": 3, \"body\": \"hi\"}'")
        let first = try #require(try stream.next())
        #expect(first.name == "message")
        #expect(first.data == #"{"id": 3, "body": "hi"}"#)
        try fixture.execute("SELECT pg_notify('\(channel)', 'not json')")
        let second = try #require(try stream.next())
        #expect(second.data == #""not json""#)
        #expect(first.id != nil && second.id != nil && first.id != second.id)
        // A notification on another channel, or rolled back, is not relayed.
        try fixture.execute("BEGIN; NOTIFY \(channel), '\"rolled back\"'; ROLLBACK; NOTIFY \(channel)_other, '\"elsewhere\"'")
        #expect(try stream.isQuiet(for: 0.5))

        let resumed = try fixture.stream("/messages", service: "/chat", lastEventID: first.id)
        #expect(try resumed.next()?.data == #""not json""#)
    }

    @Test("a role that may not run the file's statement is refused (403): it never hears the channel")
    func grantsDecideWhoHears() throws {
        let (fixture, channel) = try Self.fixture()
        let refused = try fixture.stream("/messages", service: "/chat", role: "live_public")
        #expect(refused.status == 403)
        let allowed = try fixture.stream("/messages", service: "/chat", role: "live_all")
        _ = try allowed.events(through: "ready")
        try fixture.execute("NOTIFY \(channel), '\"for those allowed\"'")
        #expect(try allowed.next()?.data == #""for those allowed""#)
    }
}
