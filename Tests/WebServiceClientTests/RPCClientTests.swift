import Foundation
import HTTPTestClient
import PostgreSQL
import Testing
import WebServiceClient

/// The client's `rpc` calls against `sql-rest serve` on the folder
/// `sql-rest init` writes for a schema with functions (`@function` files,
/// PostgREST's `/rpc`): an object, lists read with the `ListQuery`'s
/// filters, order, select and page, a scalar's bare value and a void
/// function's 204; what a call writes is read back from the database.
@Suite("RPC through the client", .serialized)
struct RPCClientTests {
    static let functions = """
        CREATE FUNCTION client_rpc.projects_of(client int) RETURNS SETOF client_rpc.project
          LANGUAGE sql STABLE AS 'SELECT * FROM client_rpc.project WHERE client_id = client ORDER BY id';
        CREATE FUNCTION client_rpc.projects_named(pattern text) RETURNS SETOF client_rpc.project
          LANGUAGE sql STABLE AS 'SELECT * FROM client_rpc.project WHERE name LIKE pattern ORDER BY id';
        CREATE FUNCTION client_rpc.rename_project(id int, name text) RETURNS client_rpc.project
          LANGUAGE sql AS 'UPDATE client_rpc.project SET name = rename_project.name WHERE project.id = rename_project.id RETURNING *';
        CREATE FUNCTION client_rpc.add_them(a int, b int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT a + b';
        CREATE FUNCTION client_rpc.touch() RETURNS void LANGUAGE sql AS '';
        """

    /// The server on the folder init writes for `client_rpc`, its functions made first.
    static func start() throws -> (SQLRestFolder, Connection) {
        let connection = try Connection(try SampleDatabase.conninfo(user: "postgres"))
        try connection.executeScript(TableWriteClientTests.script("client_rpc") + "\n" + functions)
        try connection.execute("INSERT INTO client_rpc.project (name, client_id) VALUES ('a', 1), ('b', 2)")
        return (try SQLRestFolder(schema: "client_rpc"), connection)
    }

    struct Renaming: Encodable {
        var id: Int
        var name: String
    }

    @Test("POST with an Encodable object of arguments: an object, a list; the database changed")
    func postForms() async throws {
        let (served, connection) = try Self.start()
        defer { served.stop() }
        let client = WebServiceClient(baseURL: served.baseURL)

        let renamed = try await client.rpc("rename_project", Renaming(id: 2, name: "b2"), as: TableWriteClientTests.Project.self)
        #expect(renamed == TableWriteClientTests.Project(id: 2, name: "b2", status: "open", clientId: 2))
        #expect(try TableWriteClientTests.projects(connection, schema: "client_rpc") == ["1|a|open|1", "2|b2|open|2"])

        let named = try await client.rpc("projects_named", ["pattern": "b%"], as: [TableWriteClientTests.Named].self)
        #expect(named == [TableWriteClientTests.Named(id: 2, name: "b2")])
    }

    @Test("GET with the arguments in the query, then the ListQuery's filters, order, select and page")
    func getForm() async throws {
        let (served, connection) = try Self.start()
        defer { served.stop() }
        try connection.execute("INSERT INTO client_rpc.project (name, client_id, status) VALUES ('c', 1, 'done'), ('d', 1, 'open')")
        let client = WebServiceClient(baseURL: served.baseURL)

        let all = try await client.rpc("projects_of", reading: ["client": 1], as: [TableWriteClientTests.Named].self)
        #expect(all.map(\.name) == ["a", "c", "d"])
        let query = ListQuery().where("status", .eq("open")).ordered(by: "id", .descending).selecting("id", "name").page(limit: 1)
        let page = try await client.rpc("projects_of", reading: ["client": 1], query: query, as: [TableWriteClientTests.Named].self)
        #expect(page == [TableWriteClientTests.Named(id: 4, name: "d")])
    }

    @Test("a scalar function's bare value, POST and GET; a void function's 204")
    func bareValues() async throws {
        let (served, _) = try Self.start()
        defer { served.stop() }
        let client = WebServiceClient(baseURL: served.baseURL)

        #expect(try await client.rpc("add_them", ["a": 1, "b": 2], as: Int.self) == 3)
        #expect(try await client.rpc("add_them", reading: ["a": 40, "b": 2], as: Int.self) == 42)
        #expect(try await client.rpc("touch", as: Data.self).isEmpty)
        #expect(try await client.rpc("touch", as: Int?.self) == nil)
        await #expect {
            try await client.rpc("add_them", ["a": 1], as: Int.self)
        } throws: { error in
            (error as? WebServiceError)?.status == 404
        }
    }
}
