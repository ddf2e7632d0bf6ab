import Foundation
import HTTPTestClient
import PostgreSQL
import Testing
import WebServiceClient

/// The client's table writes (`insert`, `upsert`, `update`, `delete`)
/// against `sql-rest serve` on a folder `sql-rest init --writes` wrote for
/// a schema of the test's: after each call, the table's rows are read back
/// with a connection of the test's own.
@Suite("Table writes through the client", .serialized)
struct TableWriteClientTests {
    /// The script that makes `schema` anew, with its table `project`.
    static func script(_ schema: String) -> String {
        """
        DROP SCHEMA IF EXISTS \(schema) CASCADE;
        CREATE SCHEMA \(schema);
        GRANT USAGE ON SCHEMA \(schema) TO employees_reader;
        CREATE TABLE \(schema).project (
            id serial PRIMARY KEY,
            name text NOT NULL UNIQUE,
            status text NOT NULL DEFAULT 'open',
            client_id int DEFAULT 7
        );
        GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA \(schema) TO employees_reader;
        GRANT USAGE ON ALL SEQUENCES IN SCHEMA \(schema) TO employees_reader;
        """
    }

    struct Project: Codable, Equatable {
        var id: Int
        var name: String
        var status: String
        var clientId: Int?
    }

    struct NewProject: Encodable {
        var name: String
        var clientId: Int?
    }

    struct Named: Decodable, Equatable {
        var id: Int
        var name: String
    }

    /// `schema` made anew, with projects a (client 1) and b (client 2), and
    /// its folder served with `files` added; a connection as `postgres`.
    static func start(schema: String = "client_writes", files: [String: String] = [:]) throws -> (SQLRestFolder, Connection) {
        let connection = try Connection(try SampleDatabase.conninfo(user: "postgres"))
        try connection.executeScript(script(schema))
        try connection.execute("INSERT INTO \(schema).project (name, client_id) VALUES ('a', 1), ('b', 2)")
        return (try SQLRestFolder(schema: schema, files: files), connection)
    }

    /// The rows of `schema`'s projects, `id|name|status|client_id` each, by id.
    static func projects(_ connection: Connection, schema: String = "client_writes") throws -> [String] {
        try SQLRestFolder.lines("SELECT ARRAY[id::text, name, status, client_id::text] FROM \(schema).project ORDER BY id", connection)
    }

    @Test("insert of many: one statement; a member some rows leave out is NULL there, or its default with missingAsDefault")
    func insertMany() async throws {
        let (served, connection) = try Self.start()
        defer { served.stop() }
        let client = WebServiceClient(baseURL: served.baseURL)

        let plain = try await client.insert("/project", [NewProject(name: "c"), NewProject(name: "d", clientId: 5)])
        #expect(plain.status == 201 && plain.rows.isEmpty && plain.count == nil)
        #expect(try Self.projects(connection).suffix(2) == ["3|c|open|NULL", "4|d|open|5"])

        let defaulted = try await client.insert(
            "/project", [NewProject(name: "e"), NewProject(name: "f", clientId: 6)], missingAsDefault: true, counted: true)
        #expect(defaulted.count == 2)
        #expect(try Self.projects(connection).suffix(2) == ["5|e|open|7", "6|f|open|6"])

        // A column no row gives takes its default; the rows come back shaped by select.
        let shaped = try await client.insert(
            "/project", [NewProject(name: "g")], returning: .representation(Named.self), query: ListQuery().selecting("id", "name"))
        #expect(shaped.rows == [Named(id: 7, name: "g")])
        #expect(try Self.projects(connection).last == "7|g|open|7")

        // columns= named by the caller: a member it leaves out is not written.
        let chosen = try await client.insert(
            "/project", [NewProject(name: "h", clientId: 9)], columns: ["name"], returning: .representation(Project.self))
        #expect(chosen.rows == [Project(id: 8, name: "h", status: "open", clientId: 7)])

        let located = try await client.insert("/project", [NewProject(name: "i")], returning: .headersOnly)
        #expect(located.location == "/project?id=eq.9")

        // A row the database refuses: nothing of the call is kept, and the error is the server's.
        await #expect {
            try await client.insert("/project", [NewProject(name: "j"), NewProject(name: "a")])
        } throws: { error in
            (error as? WebServiceError)?.status == 409
        }
        #expect(try Self.projects(connection).count == 9)
    }

    @Test("upsert: merge on the primary key, or ignore on on_conflict's columns")
    func upsert() async throws {
        let (served, connection) = try Self.start()
        defer { served.stop() }
        let client = WebServiceClient(baseURL: served.baseURL)

        let merged = try await client.upsert(
            "/project",
            [Project(id: 1, name: "a2", status: "done", clientId: 1), Project(id: 20, name: "new", status: "open", clientId: nil)],
            returning: .representation(Project.self), counted: true)
        #expect(merged.count == 2 && merged.rows.map(\.name) == ["a2", "new"])
        #expect(try Self.projects(connection) == ["1|a2|done|1", "2|b|open|2", "20|new|open|NULL"])

        let ignored = try await client.upsert(
            "/project", [NewProject(name: "b", clientId: 99), NewProject(name: "k")], onConflict: ["name"], ignoringDuplicates: true,
            returning: .representation(Named.self), query: ListQuery().selecting("id", "name"))
        #expect(ignored.rows.map(\.name) == ["k"])
        #expect(try Self.projects(connection).contains("2|b|open|2"))

        let renamed = try await client.upsert("/project", [NewProject(name: "k", clientId: 3)], onConflict: ["name"])
        // Every row updated, none inserted: 200, as PostgREST answers an upsert that created nothing.
        #expect(renamed.status == 200)
        #expect(try Self.projects(connection).contains { $0.hasSuffix("|k|open|3") })
    }

    @Test("update by filter: the members given change, a nil optional changes nothing")
    func update() async throws {
        let (served, connection) = try Self.start()
        defer { served.stop() }
        let client = WebServiceClient(baseURL: served.baseURL)
        try await client.insert("/project", [NewProject(name: "c", clientId: 3), NewProject(name: "d", clientId: 4)])

        let done = try await client.update(
            "/project", ListQuery().where("name", .in(["a", "b"])), set: ["status": "done"], returning: .representation(Project.self),
            counted: true)
        #expect(done.count == 2 && done.rows.map(\.status) == ["done", "done"])
        #expect(try Self.projects(connection) == ["1|a|done|1", "2|b|done|2", "3|c|open|3", "4|d|open|4"])

        try await client.update("/project", ListQuery().where("id", .eq(3)), set: NewProject(name: "c2", clientId: nil))
        #expect(try Self.projects(connection)[2] == "3|c2|open|3")

    }

    @Test("delete by filter, counted and returned")
    func delete() async throws {
        let (served, connection) = try Self.start()
        defer { served.stop() }
        let client = WebServiceClient(baseURL: served.baseURL)
        try await client.insert("/project", [NewProject(name: "c"), NewProject(name: "d")])

        let removed = try await client.delete("/project", ListQuery().where("name", .in(["a", "c"])), counted: true)
        #expect(removed.status == 204 && removed.count == 2)
        #expect(try Self.projects(connection).map { $0.prefix(2) } == ["2|", "4|"])
        let returned = try await client.delete("/project", ListQuery().where("id", .gte(4)), returning: .representation(Named.self))
        #expect(returned.rows == [Named(id: 4, name: "d")])
        #expect(try Self.projects(connection) == ["2|b|open|2"])
    }

    @Test("a write without conditions is refused by the server, one with an order or a page by the client: every row kept")
    func writesWithoutConditionsAreRefused() async throws {
        let (served, connection) = try Self.start()
        defer { served.stop() }
        let client = WebServiceClient(baseURL: served.baseURL)
        await #expect {
            try await client.delete("/project", ListQuery())
        } throws: { error in
            (error as? WebServiceError)?.status == 400
        }
        await #expect {
            try await client.update("/project", ListQuery(), set: ["status": "done"])
        } throws: { error in
            (error as? WebServiceError)?.status == 400
        }
        // An order or a page would reach the server as conditions of none: refused before sending.
        for query in [ListQuery().ordered(by: "id"), ListQuery().where("id", .gt(0)).page(limit: 1)] {
            await #expect {
                try await client.update("/project", query, set: ["status": "done"])
            } throws: { error in
                (error as? WebServiceError)?.code == .invalidRequest
            }
        }
        #expect(try Self.projects(connection) == ["1|a|open|1", "2|b|open|2"])
    }
}
