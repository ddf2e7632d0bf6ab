import Foundation
import HTTPTestClient
import PostgreSQL
import SQLServices
import Testing

/// `live.sql`, as `sql-rest init --live` writes it, applied to a real
/// schema: what its triggers send for each kind of change.
@Suite("The migration of live results")
struct LiveMigrationTests {
    /// A schema with a composite key, a foreign key, a table without a key
    /// and a key of time, live.sql applied; the notifications it sends.
    final class Schema {
        let name = "live_migration_" + String(UInt32.random(in: 0x1000_0000...UInt32.max), radix: 16)
        let admin: Connection
        let listener: Connection

        init() throws {
            let connection = try Connection(try SampleDatabase.conninfo(user: "postgres"))
            admin = connection
            try admin.executeScript(
                """
                CREATE SCHEMA \(name);
                CREATE TABLE \(name).people (id int PRIMARY KEY, name text);
                CREATE TABLE \(name).wages (person int REFERENCES \(name).people, since date, amount int, PRIMARY KEY (person, since));
                CREATE TABLE \(name).notes (person int REFERENCES \(name).people, body text);
                CREATE TABLE \(name).events (at timestamptz PRIMARY KEY, what text);
                CREATE TABLE \(name).labels (label text PRIMARY KEY);
                """)
            let catalog = try DatabaseCatalog.read(schemas: [name], on: admin)
            try LiveFixture.lockSetup(on: admin)
            defer { LiveFixture.unlockSetup(on: connection) }
            try admin.executeScript(ServiceScaffold(catalog: catalog).liveMigration)
            listener = try Connection(try SampleDatabase.conninfo(user: "postgres"))
            try listener.listen(ServiceScaffold.liveChannel)
        }

        /// Applies `migration` while no other test sets up.
        func apply(_ migration: String) throws {
            try LiveFixture.lockSetup(on: admin)
            defer { LiveFixture.unlockSetup(on: admin) }
            try admin.executeScript(migration)
        }

        deinit {
            _ = try? admin.executeScript(LiveFixture.dropping(name))
            admin.close()
            listener.close()
        }

        /// The payloads of this schema's tables that `sql` sends, once committed.
        func payloads(_ sql: String) throws -> [String] {
            try admin.executeScript(sql)
            var payloads: [String] = []
            let deadline = Date().addingTimeInterval(2)
            while Date() < deadline {
                payloads += try listener.receiveNotifications().map(\.payload).filter { $0.contains("\"\(name).") }
                if !payloads.isEmpty { Thread.sleep(forTimeInterval: 0.1) } else { Thread.sleep(forTimeInterval: 0.02) }
                if !payloads.isEmpty, try listener.receiveNotifications().isEmpty { break }
            }
            return payloads
        }
    }

    @Test(
        "insert, update (of the key too), delete and truncate send the table, the operation, the keys before and after and the keys referred to; never a value"
    )
    func payloadsOfEachChange() throws {
        let schema = try Schema()
        let s = schema.name
        #expect(
            try schema.payloads("INSERT INTO \(s).people VALUES (1, 'Ada')") == [
                #"{"op": "INSERT", "keys": [["1"]], "refs": {}, "relation": "\#(s).people"}"#
            ])
        #expect(
            try schema.payloads("INSERT INTO \(s).wages VALUES (1, '2024-05-01', 100)") == [
                #"{"op": "INSERT", "keys": [["1", "2024-05-01"]], "refs": {"\#(s).people": [["1"]]}, "relation": "\#(s).wages"}"#
            ])
        try schema.admin.executeScript("INSERT INTO \(s).people VALUES (2, 'Bob')")
        _ = try schema.payloads("SELECT 1")
        #expect(
            try schema.payloads("UPDATE \(s).wages SET person = 2, amount = 200") == [
                #"{"op": "UPDATE", "keys": [["1", "2024-05-01"], ["2", "2024-05-01"]], "refs": {"\#(s).people": [["1"], ["2"]]}, "relation": "\#(s).wages"}"#
            ])
        #expect(
            try schema.payloads("INSERT INTO \(s).notes VALUES (2, 'secret body')") == [
                #"{"op": "INSERT", "keys": [], "refs": {"\#(s).people": [["2"]]}, "relation": "\#(s).notes"}"#
            ])
        #expect(
            try schema.payloads("DELETE FROM \(s).notes") == [
                #"{"op": "DELETE", "keys": [], "refs": {"\#(s).people": [["2"]]}, "relation": "\#(s).notes"}"#
            ])
        #expect(try schema.payloads("TRUNCATE \(s).notes") == [#"{"op": "TRUNCATE", "whole": true, "relation": "\#(s).notes"}"#])
        #expect(try schema.payloads("UPDATE \(s).people SET name = 'Ada L.' WHERE id = 1; ROLLBACK").isEmpty)
    }

    @Test(
        "keys are written in ISO dates and UTC whatever the writer's session says; a payload past PostgreSQL's limit says the whole table")
    func keysOfTimeAndLongKeys() throws {
        let schema = try Schema()
        let s = schema.name
        let payloads = try schema.payloads(
            "SET datestyle TO 'German'; SET timezone TO 'Asia/Tokyo'; INSERT INTO \(s).events VALUES ('2024-05-01 12:00:00+02', 'x')")
        #expect(payloads == [#"{"op": "INSERT", "keys": [["2024-05-01 10:00:00+00"]], "refs": {}, "relation": "\#(s).events"}"#])
        let long = String(repeating: "k", count: 9_000)
        #expect(
            try schema.payloads("INSERT INTO \(s).labels VALUES ('\(long)')") == [
                #"{"op": "INSERT", "whole": true, "relation": "\#(s).labels"}"#
            ])
    }

    @Test("sql-rest init --live writes live.sql beside the service folder, never in it, and the folder still checks")
    func initWritesTheMigrationBesideTheFolder() throws {
        let schema = try Schema()
        let folder = FileManager.default.temporaryDirectory.appending(path: "live-init-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let outcome = try ToolProcess.outcome(
            try ChildProcess.packageExecutable("sql-rest"),
            [
                "init", "--database-url", try SampleDatabase.conninfo(user: "postgres"), "--schema", schema.name, "--out", folder + "/api",
                "--live",
            ])
        #expect(outcome.status == 0, "\(outcome.text)\(outcome.errors)")
        #expect(outcome.text.contains("wrote \(folder)/live.sql"))
        let migration = try String(contentsOfFile: folder + "/live.sql", encoding: .utf8)
        #expect(migration.contains("CREATE TRIGGER sql_rest_live AFTER INSERT OR UPDATE OR DELETE ON \"\(schema.name)\".\"wages\""))
        #expect(!FileManager.default.fileExists(atPath: folder + "/api/live.sql"))
        // Applying it again replaces what it made.
        try schema.apply(migration)
        try schema.apply(migration)
    }
}
