import Foundation
import HTTPServer
import PostgreSQL
import Testing
import WebServiceClient

/// The client's `rpc` calls: lists and objects against `sql-rest serve`
/// on files of the PostgREST contract's paths (`POST /rpc/f` with a JSON
/// object of named arguments, `GET /rpc/f?name=value` taking the read
/// language), and the bare values and 204 of scalar and void functions
/// against a small server of the test that answers them as PostgREST does.
@Suite("RPC through the client", .serialized)
struct RPCClientTests {
    /// Files served beside the folder `sql-rest init --writes` writes for the schema `client_rpc`.
    static let files = [
        "rpc/projects_of.sql": """
        -- GET /rpc/projects_of
        -- The projects of a client.
        -- @filter *
        -- @order *
        SELECT id, name, status FROM client_rpc.project WHERE client_id = :client::int ORDER BY id
        """,
        "rpc/projects_named.sql": """
        -- POST /rpc/projects_named
        -- The projects whose name is like the pattern.
        -- @returns list
        SELECT id, name FROM client_rpc.project WHERE name LIKE :pattern::text ORDER BY id
        """,
        "rpc/rename_project.sql": """
        -- POST /rpc/rename_project
        -- Renames a project; the project as it is now.
        -- @returns object
        UPDATE client_rpc.project SET name = :name::text WHERE id = :id::int RETURNING id, name, status, client_id AS "clientId"
        """,
    ]

    struct Renaming: Encodable {
        var id: Int
        var name: String
    }

    @Test("POST with an Encodable object of arguments: an object, a list; the database changed")
    func postForms() async throws {
        let (served, connection) = try TableWriteClientTests.start(schema: "client_rpc", files: Self.files)
        defer { served.stop() }
        let client = WebServiceClient(baseURL: served.baseURL)

        let renamed = try await client.rpc("rename_project", Renaming(id: 2, name: "b2"), as: TableWriteClientTests.Project.self)
        #expect(renamed == TableWriteClientTests.Project(id: 2, name: "b2", status: "open", clientId: 2))
        #expect(try TableWriteClientTests.projects(connection, schema: "client_rpc") == ["1|a|open|1", "2|b2|open|2"])

        let named = try await client.rpc("projects_named", ["pattern": "b%"], as: [TableWriteClientTests.Named].self)
        #expect(named == [TableWriteClientTests.Named(id: 2, name: "b2")])

        // No row: the file answers 204, an optional decodes it as nil.
        #expect(try await client.rpc("rename_project", Renaming(id: 99, name: "x"), as: TableWriteClientTests.Project?.self) == nil)
    }

    @Test("GET with the arguments in the query, then the ListQuery's filters, order, select and page")
    func getForm() async throws {
        let (served, connection) = try TableWriteClientTests.start(schema: "client_rpc", files: Self.files)
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
        let server = HTTPServer(configuration: .init(port: 0, shutdownTimeout: 2)) { request in
            Self.answer(request)
        }
        try server.start()
        defer { server.stop() }
        let client = WebServiceClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!)

        #expect(try await client.rpc("add_them", ["a": 1, "b": 2], as: Int.self) == 3)
        #expect(try await client.rpc("add_them", reading: ["a": 40, "b": 2], as: Int.self) == 42)
        #expect(try await client.rpc("touch", as: Data.self).isEmpty)
        #expect(try await client.rpc("touch", as: Int?.self) == nil)
        await #expect {
            try await client.rpc("add_them", ["a": 1], as: Int.self)
        } throws: { error in
            (error as? WebServiceError)?.status == 400
        }
    }

    /// PostgREST's answers for `add_them(a int, b int) RETURNS int` (POST with
    /// a JSON object, or GET) and `touch() RETURNS void` (POST with `{}`).
    static func answer(_ request: borrowing HTTPRequest) -> HTTPResponse {
        let path = String(request.rawPath.prefix { $0 != "?" })
        var arguments: [String: Int] = [:]
        if request.method == .get {
            for item in request.queryItems { arguments[item.name] = Int(item.value) }
        } else {
            guard request.contentType == "application/json",
                let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Int]
            else { return HTTPResponse(status: .badRequest, text: "not a JSON object of integers") }
            arguments = object
        }
        switch path {
        case "/rpc/add_them":
            guard arguments.count == 2, let a = arguments["a"], let b = arguments["b"] else {
                return HTTPResponse(status: .badRequest, text: "add_them takes a and b")
            }
            return HTTPResponse(json: Array(String(a + b).utf8))
        case "/rpc/touch" where request.method == .post && arguments.isEmpty:
            return HTTPResponse(status: .noContent)
        default:
            return HTTPResponse(status: .notFound, text: "no such function")
        }
    }
}
