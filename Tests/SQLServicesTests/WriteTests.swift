import Foundation
import HTTPServer
import HTTPTestClient
import PostgreSQL
import SQLServices
import Testing

/// POST, PUT, PATCH and DELETE files on tables of a scratch schema:
/// statements in one transaction, the last one's rows as the answer,
/// constraint violations as 409 and 400 problems.
@Suite("Writes from service files", .serialized)
struct WriteTests {
    static let schema = """
        CREATE TYPE kind AS ENUM ('tool', 'toy');
        CREATE TABLE items (
            id serial PRIMARY KEY,
            name text NOT NULL CONSTRAINT items_name_key UNIQUE,
            price numeric(10, 2) CONSTRAINT items_price_check CHECK (price >= 0),
            kind kind,
            tags text[]
        );
        CREATE TABLE notes (
            id serial PRIMARY KEY,
            item_id int NOT NULL CONSTRAINT notes_item_fkey REFERENCES items (id),
            body text NOT NULL
        );
        """

    static let files = [
        "items/item.sql": """
        -- GET /items/{id}
        -- One item.
        SELECT id, name, price, kind, tags FROM items WHERE id = :id
        """,
        "items/create.sql": """
        -- POST /items
        -- Adds an item.
        -- @param name Its name, unique.
        INSERT INTO items (name, price, kind, tags) VALUES (:name, :price, :kind, :tags)
        RETURNING id, name, price, kind, tags
        """,
        "items/with-note.sql": """
        -- POST /items/noted
        -- Adds an item and a note on it, or neither.
        INSERT INTO items (name) VALUES (:name);
        -- The note refers to the item just added.
        INSERT INTO notes (item_id, body) VALUES (currval('items_id_seq'), :note)
        RETURNING item_id AS id, body AS note
        """,
        "items/rename.sql": """
        -- PUT /items/{id}
        -- Renames an item; 204 when there is none.
        UPDATE items SET name = :name WHERE id = :id RETURNING id, name
        """,
        "items/reprice.sql": """
        -- PATCH /items/{id}/price
        -- @returns list
        UPDATE items SET price = :price WHERE id = :id OR name = :name RETURNING id, price
        """,
        "items/delete.sql": """
        -- DELETE /items/{id}
        DELETE FROM items WHERE id = :id
        """,
        "notes/create.sql": """
        -- POST /notes
        INSERT INTO notes (item_id, body) VALUES (:item, :body) RETURNING id
        """,
    ]

    let scratch: ScratchSchema
    let pool: ConnectionPool
    let server: HTTPServer
    let loaded: LoadedServices

    init() throws {
        scratch = try ScratchSchema(Self.schema)
        pool = try scratch.pool()
        let folder = try Environment.folder(Self.files)
        loaded = try Environment.load(folder, pool: pool)
        try? FileManager.default.removeItem(atPath: folder)
        server = try Environment.serve(loaded.services, pool: pool)
    }

    func finish() {
        server.stop()
        pool.close()
        scratch.drop()
    }

    func send(_ method: String, _ target: String, json: String? = nil, form: String? = nil) throws -> TestClient.Response {
        if let json {
            return try TestClient.request(
                method, target, port: server.port, headers: [("Content-Type", "application/json")], body: Array(json.utf8))
        }
        if let form {
            return try TestClient.request(
                method, target, port: server.port, headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Array(form.utf8))
        }
        return try TestClient.request(method, target, port: server.port)
    }

    func count(_ sql: String) throws -> Int {
        let connection = try Connection(try Environment.conninfo(user: "postgres", searchPath: scratch.name))
        defer { connection.close() }
        return try connection.fetchOne(Int.self, sql) ?? -1
    }

    @Test("POST answers 201 with the row and a Location where the service reads it again")
    func created() throws {
        defer { finish() }
        let reply = try send("POST", "/items", json: #"{"name": "pen", "price": 1.5, "kind": "tool", "tags": ["blue", "a,b"]}"#)
        #expect(reply.status == 201)
        let id = try #require(reply.object["id"] as? Int)
        #expect(reply.text == #"{"id":\#(id),"name":"pen","price":1.50,"kind":"tool","tags":["blue","a,b"]}"#)
        #expect(reply.header("Location") == "/items/\(id)")
        let again = try send("GET", "/items/\(id)")
        #expect(again.status == 200 && again.text == reply.text)

        let form = try send("POST", "/items", form: "name=cup&price=2")
        #expect(form.status == 201 && form.object["name"] as? String == "cup", "a form's fields are arguments")
    }

    @Test("several statements are one transaction: all or nothing")
    func transaction() throws {
        defer { finish() }
        let reply = try send("POST", "/items/noted", json: #"{"name": "lamp", "note": "bright"}"#)
        #expect(reply.status == 201)
        let id = try #require(reply.object["id"] as? Int)
        #expect(reply.header("Location") == "/items/\(id)")
        #expect(reply.object["note"] as? String == "bright")

        let failed = try send("POST", "/items/noted", json: #"{"name": "chair"}"#)
        #expect(failed.status == 400, "the note is missing: NOT NULL")
        #expect(failed.object["column"] as? String == "body")
        #expect(try count("SELECT count(*) FROM items WHERE name = 'chair'") == 0, "the first statement was rolled back")
    }

    @Test("PUT and PATCH answer 200 with the rows, DELETE 204; no row is 204")
    func updates() throws {
        defer { finish() }
        let id = try #require(try send("POST", "/items", json: #"{"name": "box"}"#).object["id"] as? Int)
        let renamed = try send("PUT", "/items/\(id)", json: #"{"name": "crate"}"#)
        #expect(renamed.status == 200 && renamed.text == #"{"id":\#(id),"name":"crate"}"#)
        #expect(renamed.header("Location") == nil)
        #expect(try send("PUT", "/items/999999", json: #"{"name": "ghost"}"#).status == 204)
        let repriced = try send("PATCH", "/items/\(id)/price?price=3.25")
        #expect(repriced.status == 200 && repriced.text == #"[{"id":\#(id),"price":3.25}]"#, "@returns list: every row")
        #expect(try send("PATCH", "/items/999999/price?price=1").text == "[]")
        #expect(try send("DELETE", "/items/\(id)").status == 204)
        #expect(try send("GET", "/items/\(id)").status == 404)
    }

    @Test("constraint violations: 409 for unique and foreign keys, 400 for checks and NOT NULL, naming the constraint, never the value")
    func violations() throws {
        defer { finish() }
        #expect(try send("POST", "/items", json: #"{"name": "secret-name"}"#).status == 201)
        let duplicate = try send("POST", "/items", json: #"{"name": "secret-name"}"#)
        #expect(duplicate.status == 409)
        #expect(duplicate.object["constraint"] as? String == "items_name_key")
        #expect(duplicate.object["detail"] as? String == "The request conflicts with an existing record (constraint \"items_name_key\").")
        #expect(!duplicate.text.contains("secret-name"))

        let negative = try send("POST", "/items", json: #"{"name": "neg", "price": -1}"#)
        #expect(negative.status == 400 && negative.object["constraint"] as? String == "items_price_check")

        let unnamed = try send("POST", "/items", json: #"{"price": 1}"#)
        #expect(unnamed.status == 400 && unnamed.object["column"] as? String == "name")
        #expect(unnamed.object["detail"] as? String == "A required value is missing (column \"name\").")

        let orphan = try send("POST", "/notes", json: #"{"item": 987654, "body": "x"}"#)
        #expect(orphan.status == 409 && orphan.object["constraint"] as? String == "notes_item_fkey")
        #expect(!orphan.textWithoutRequestID.contains("987654"))

        let badKind = try send("POST", "/items", json: #"{"name": "k", "kind": "food"}"#)
        #expect(badKind.status == 400)
        #expect(badKind.object["detail"] as? String == "The parameter \"kind\" expects one of tool, toy (kind); received \"food\".")
        #expect(badKind.object["allowedValues"] as? [String] == ["tool", "toy"])
    }

    @Test("?api documents the writes: parameters typed by PostgreSQL, results from RETURNING, nothing for a DELETE")
    func documentation() throws {
        defer { finish() }
        let api = try TestClient.request("GET", "/items?api", port: server.port, headers: [("Accept", "application/json")]).object
        let endpoints = try #require(api["endpoints"] as? [[String: Any]])
        let operations = endpoints.flatMap { ($0["operations"] as? [[String: Any]]) ?? [] }
        let create = try #require(
            operations.first { $0["method"] as? String == "POST" && ($0["description"] as? String)?.hasPrefix("Adds an item.") == true })
        let parameters = try #require(create["parameters"] as? [[String: Any]])
        #expect(parameters.map { $0["name"] as? String } == ["name", "price", "kind", "tags"])
        #expect(parameters.map { $0["type"] as? String } == ["string", "double", "kind", "[string]"])
        #expect(parameters.map { $0["required"] as? Bool } == [false, false, false, false])
        #expect(create["result"] as? String == "Item")
        let delete = try #require(operations.first { $0["method"] as? String == "DELETE" })
        #expect(delete["result"] == nil, "no body: 204")
        let structures = try #require(api["structures"] as? [[String: Any]])
        let item = try #require(structures.first { $0["name"] as? String == "Item" })
        let fields = try #require(item["fields"] as? [[String: Any]])
        #expect(fields.map { $0["name"] as? String } == ["id", "name", "price", "kind", "tags"])
        #expect(fields.map { $0["required"] as? Bool } == [true, true, false, false, false], "NOT NULL columns are required")
        let enumerations = try #require(api["enumerations"] as? [[String: Any]])
        #expect(enumerations.contains { $0["name"] as? String == "kind" && $0["values"] as? [String] == ["tool", "toy"] })
    }
}
