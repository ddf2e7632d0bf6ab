import Foundation
import HTTPTestClient
import PostgreSQL
import Testing

/// `/rpc`: the `@function` files `sql-rest init` writes for a schema's
/// functions, called as PostgREST's clients call them, against `sql-rest
/// serve` and the real database (what a call writes is read back with a
/// connection of its own).
@Suite("Function calls (/rpc)", .serialized)
struct FunctionCallProcessTests {
    static let schema = """
        DROP SCHEMA IF EXISTS rpc_test CASCADE;
        CREATE SCHEMA rpc_test;
        GRANT USAGE ON SCHEMA rpc_test TO employees_reader;
        CREATE TABLE rpc_test.client (id int PRIMARY KEY, name text NOT NULL);
        CREATE TABLE rpc_test.project (id int PRIMARY KEY, name text NOT NULL, client_id int REFERENCES rpc_test.client (id));
        INSERT INTO rpc_test.client VALUES (1, 'Microsoft'), (2, 'Apple');
        INSERT INTO rpc_test.project VALUES (1, 'Windows 7', 1), (2, 'Windows 10', 1), (3, 'IOS', 2), (4, 'OSX', 2);
        GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA rpc_test TO employees_reader;
        CREATE FUNCTION rpc_test.add_them(a int, b int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT a + b';
        COMMENT ON FUNCTION rpc_test.add_them(int, int) IS 'Adds two numbers.';
        CREATE FUNCTION rpc_test.projects_below(id int) RETURNS SETOF rpc_test.project
          LANGUAGE sql STABLE AS 'SELECT * FROM rpc_test.project WHERE project.id < projects_below.id';
        CREATE FUNCTION rpc_test.numbers() RETURNS SETOF int LANGUAGE sql STABLE AS 'VALUES (1), (2), (3)';
        CREATE FUNCTION rpc_test.same(a int) RETURNS int LANGUAGE sql STABLE AS 'SELECT a';
        CREATE FUNCTION rpc_test.same(a text) RETURNS text LANGUAGE sql STABLE AS 'SELECT a';
        CREATE FUNCTION rpc_test.greet(name text DEFAULT 'world') RETURNS text LANGUAGE sql IMMUTABLE AS $$SELECT 'hello ' || name$$;
        CREATE FUNCTION rpc_test.total(VARIADIC v int[]) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT sum(x)::int FROM unnest(v) x';
        CREATE FUNCTION rpc_test.teapot() RETURNS void LANGUAGE plpgsql AS $$BEGIN RAISE SQLSTATE 'PT418' USING MESSAGE = 'short and stout'; END$$;
        CREATE FUNCTION rpc_test.divide(a int, b int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT a / b';
        CREATE FUNCTION rpc_test.add_client(id int, name text) RETURNS rpc_test.client
          LANGUAGE sql AS 'INSERT INTO rpc_test.client VALUES (id, name) RETURNING *';
        CREATE FUNCTION rpc_test.echo(jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS 'SELECT $1';
        CREATE FUNCTION rpc_test.stats() RETURNS TABLE (client_name text, project_count int)
          LANGUAGE sql STABLE AS 'SELECT c.name, count(p.*)::int FROM rpc_test.client c LEFT JOIN rpc_test.project p ON p.client_id = c.id GROUP BY c.name ORDER BY c.name';
        CREATE FUNCTION rpc_test.nothing() RETURNS void LANGUAGE sql AS '';
        CREATE FUNCTION rpc_test.sneaky() RETURNS int LANGUAGE sql STABLE AS 'SELECT 1';
        CREATE FUNCTION rpc_test.take(name text) RETURNS text LANGUAGE sql VOLATILE AS 'SELECT name';
        CREATE SEQUENCE rpc_test.ticket;
        GRANT USAGE ON SEQUENCE rpc_test.ticket TO employees_reader;
        CREATE FUNCTION rpc_test.next_ticket() RETURNS bigint LANGUAGE plpgsql STABLE AS $$BEGIN RETURN nextval('rpc_test.ticket'); END$$;
        """

    static let json = ("Content-Type", "application/json")

    static func send(_ method: String, _ target: String, _ body: String = "", port: Int, _ headers: [(String, String)] = [json]) throws
        -> TestClient.Response
    {
        try TestClient.request(method, target, port: port, headers: headers, body: Array(body.utf8))
    }

    @Test("init writes a file per function; scalars, rows, sets, overloads, defaults, variadic, errors and writes answer as PostgREST's")
    func calls() throws {
        let connection = try Connection(try Environment.conninfo(user: "postgres"))
        try connection.executeScript(Self.schema)
        let out = InitTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let run = try ProcessTests.start(["init", "--out", out, "--schema", "rpc_test"])
        #expect(run.wait(timeout: 60) == 0, "\(run.output)")
        // A POST file and a GET file for every function (a GET runs read-only).
        let files = try FileManager.default.subpathsOfDirectory(atPath: out + "/rpc").filter { $0.hasSuffix(".sql") }.sorted()
        #expect(files.contains("add_them/call.sql") && files.contains("add_them/read.sql"), "\(files)")
        #expect(files.contains("add_client/call.sql") && files.contains("add_client/read.sql"), "\(files)")
        let text = try String(contentsOfFile: out + "/rpc/add_them/read.sql", encoding: .utf8)
        #expect(text == "-- GET /rpc/add_them\n-- Adds two numbers.\n-- @function rpc_test.add_them\n", "\(text)")

        let server = try ProcessTests.start(["serve", "--services", out, "--port", "0"])
        let port = try server.servingPort()
        func expectAnswer(_ method: String, _ target: String, _ body: String = "", _ status: Int, _ text: String, line: Int = #line) throws
        {
            let answer = try Self.send(method, target, body, port: port)
            #expect(
                answer.status == status && answer.text == text, "\(method) \(target): \(answer.status) \(answer.text)",
                sourceLocation: SourceLocation(fileID: #fileID, filePath: #filePath, line: line, column: 1))
        }

        // A scalar is its bare value, by GET or POST; a default left out; variadic by a repeated argument or an array.
        try expectAnswer("GET", "/rpc/add_them?a=1&b=2", "", 200, "3")
        try expectAnswer("POST", "/rpc/add_them", #"{"a": 1, "b": 2}"#, 200, "3")
        try expectAnswer("GET", "/rpc/greet", "", 200, #""hello world""#)
        try expectAnswer("POST", "/rpc/greet", #"{"name": "you"}"#, 200, #""hello you""#)
        try expectAnswer("GET", "/rpc/total?v=1&v=2&v=3", "", 200, "6")
        try expectAnswer("POST", "/rpc/total", #"{"v": [4, 5]}"#, 200, "9")
        // A set of scalars is an array; void is 204; one unnamed jsonb argument takes the body.
        try expectAnswer("GET", "/rpc/numbers", "", 200, "[1,2,3]")
        try expectAnswer("POST", "/rpc/nothing", "", 204, "")
        try expectAnswer("POST", "/rpc/echo", #"{"x": [1, {"y": null}]}"#, 200, #"{"x": [1, {"y": null}]}"#)
        // A set of rows is a list in the read language: filters, select, order, embedding, pages, CSV, one object.
        try expectAnswer(
            "GET", "/rpc/projects_below?id=4&select=name,client(name)&name=like.Windows*&order=id.desc", "", 200,
            #"[{"name":"Windows 10","client":{"name":"Microsoft"}},{"name":"Windows 7","client":{"name":"Microsoft"}}]"#)
        try expectAnswer("POST", "/rpc/projects_below?select=id&limit=1&offset=1", #"{"id": 4}"#, 200, #"[{"id":2}]"#)
        let counted = try Self.send("GET", "/rpc/projects_below?id=4&limit=1", port: port, [("Prefer", "count=exact")])
        #expect(counted.status == 206 && counted.header("content-range") == "0-0/3", "\(counted)")
        let csv = try Self.send("GET", "/rpc/stats", port: port, [("Accept", "text/csv")])
        #expect(csv.text == "clientName,projectCount\r\nApple,2\r\nMicrosoft,2\r\n", "\(csv)")
        let one = try Self.send("GET", "/rpc/projects_below?id=2", port: port, [("Accept", "application/vnd.pgrst.object+json")])
        #expect(one.status == 200 && one.text == #"{"id":1,"name":"Windows 7","clientId":1}"#, "\(one)")
        let unknownColumn = try Self.send("GET", "/rpc/projects_below?id=4&nope=eq.1", port: port)
        #expect(unknownColumn.status == 400 && unknownColumn.text.contains("nope"), "\(unknownColumn)")

        // As PostgREST reads a call: a repeated argument's other values filter the rows, columns= chooses the
        // members that are arguments, an array body's first object is the arguments.
        try expectAnswer("GET", "/rpc/projects_below?id=4&id=gt.1&select=id", "", 200, #"[{"id":2},{"id":3}]"#)
        try expectAnswer("POST", "/rpc/add_them?columns=a,b", #"{"a": 1, "b": 2, "c": 3}"#, 200, "3")
        try expectAnswer("POST", "/rpc/add_them", #"[{"a": 1, "b": 2}, {"a": 4, "b": 6}]"#, 200, "3")
        // A STABLE function runs read-only by POST too: one that writes anyway is refused (405), and nothing changes.
        let stable = try Self.send("POST", "/rpc/next_ticket", port: port)
        #expect(stable.status == 405 && stable.text.contains("25006"), "\(stable)")
        #expect(try connection.fetchOne(Int.self, "SELECT CAST(last_value AS int) FROM rpc_test.ticket WHERE is_called") == nil)

        // Overloads: by argument names; none (404 PGRST202) or several (300 PGRST203) named.
        let ambiguous = try Self.send("GET", "/rpc/same?a=1", port: port)
        #expect(ambiguous.status == 300 && ambiguous.text.contains("PGRST203"), "\(ambiguous)")
        let unknown = try Self.send("POST", "/rpc/add_them", #"{"a": 1, "c": 2}"#, port: port)
        #expect(unknown.status == 404 && unknown.text.contains("PGRST202"), "\(unknown)")
        // A GET's every value that is not a filter is an argument, as PostgREST reads it: an unknown one is no overload's.
        let extra = try Self.send("GET", "/rpc/add_them?a=1&b=2&c=3", port: port)
        #expect(extra.status == 404 && extra.text.contains("PGRST202"), "\(extra)")
        try expectAnswer("GET", "/rpc/greet?name=x&name=y", "", 200, #""hello y""#)
        let missing = try Self.send("GET", "/rpc/add_them?a=1", port: port)
        #expect(missing.status == 404 && missing.text.contains("PGRST202"), "\(missing)")

        // A function's own RAISE answers its status and message; another error keeps its message in the log.
        let teapot = try Self.send("POST", "/rpc/teapot", port: port)
        #expect(teapot.status == 418 && teapot.text.contains("short and stout"), "\(teapot)")
        let divided = try Self.send("GET", "/rpc/divide?a=1&b=0", port: port)
        #expect(divided.status == 400 && !divided.text.contains("division by zero"), "\(divided)")
        let typed = try Self.send("GET", "/rpc/add_them?a=abc&b=1", port: port)
        #expect(typed.status == 400 && !typed.textWithoutRequestID.contains("abc"), "\(typed)")

        // A volatile function writes by POST, committed; by GET it runs read-only: one that only reads answers,
        // one that writes is refused (405, 25006) and writes nothing.
        try expectAnswer("POST", "/rpc/add_client", #"{"id": 3, "name": "Google"}"#, 200, #"{"id":3,"name":"Google"}"#)
        #expect(try connection.fetchOne(String.self, "SELECT name FROM rpc_test.client WHERE id = 3") == "Google")
        try expectAnswer("GET", "/rpc/take?name=x", "", 200, #""x""#)
        let refused = try Self.send("GET", "/rpc/add_client?id=5&name=Oracle", port: port)
        #expect(refused.status == 405 && refused.text.contains("25006"), "\(refused)")
        #expect(try connection.fetchOne(Int.self, "SELECT count(*)::int FROM rpc_test.client WHERE id = 5") == 0)
        // A body the call cannot read is refused, and nothing is written.
        let plain = try Self.send("POST", "/rpc/add_client", #"{"id": 4, "name": "IBM"}"#, port: port, [("Content-Type", "text/plain")])
        #expect(plain.status == 415, "\(plain)")
        // Without Content-Type the body is read as JSON, as PostgREST reads it.
        let untyped = try Self.send("POST", "/rpc/add_them", #"{"a": 2, "b": 2}"#, port: port, [])
        #expect(untyped.status == 200 && untyped.text == "4", "\(untyped)")
        #expect(try Self.send("POST", "/rpc/add_client", "id=4&name=IBM", port: port, []).status == 400)
        // A form's fields are arguments, as PostgREST reads them.
        let form = [("Content-Type", "application/x-www-form-urlencoded")]
        let greeted = try Self.send("POST", "/rpc/greet", "name=J%C3%BCrgen+K", port: port, form)
        #expect(greeted.status == 200 && greeted.text == #""hello Jürgen K""#, "\(greeted)")
        let scalar = try Self.send("POST", "/rpc/add_client", "4", port: port)
        #expect(scalar.status == 400, "\(scalar)")
        let broken = try Self.send("POST", "/rpc/add_client", #"{"id": 4, "name": "#, port: port)
        #expect(broken.status == 400, "\(broken)")
        #expect(try connection.fetchOne(Int.self, "SELECT count(*)::int FROM rpc_test.client WHERE id = 4") == 0)

        // Documented: ?api answers, and the OpenAPI document has each call.
        #expect(try Self.send("GET", "/rpc?api", port: port, []).status == 200)
        let document = try Self.send("GET", "/openapi.json", port: port, []).text
        #expect(document.contains("\"/rpc/add_them\"") && document.contains("Adds two numbers."))
        try connection.executeScript("DROP SCHEMA rpc_test CASCADE")
    }
}
