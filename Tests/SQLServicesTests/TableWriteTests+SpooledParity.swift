import Foundation
import HTTPTestClient
import PostgreSQL
import Testing

extension TableWriteTests {
    @Test("a body past 1 MiB stores what the same objects under it store, and refuses what they refuse: the copied path as an attack")
    func spooledMatchesInMemory() throws {
        let connection = try Connection(try Environment.conninfo(user: "postgres"))
        try connection.executeScript(Self.schema)
        try connection.executeScript(
            """
            DROP SCHEMA IF EXISTS write_private CASCADE;
            CREATE SCHEMA write_private;
            CREATE TYPE write_private.tone AS ENUM ('low', 'high');
            CREATE DOMAIN write_test.document AS jsonb;
            CREATE TABLE write_test.parity (
                id serial PRIMARY KEY, k text, j json, d write_test.document, tone write_private.tone, other_name text);
            GRANT SELECT, INSERT ON write_test.parity TO employees_reader;
            GRANT USAGE ON ALL SEQUENCES IN SCHEMA write_test TO employees_reader;
            """)
        let out = InitTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        #expect(try ProcessTests.start(["init", "--out", out, "--schema", "write_test", "--writes"]).wait(timeout: 60) == 0)
        let server = try ProcessTests.start(["serve", "--services", out, "--port", "0"])
        let port = try server.servingPort()

        /// The status and the rows stored for `objects` alone, then for them followed by enough
        /// `padding` objects (`pad-N` for `N`) to pass the 1 MiB a server holds in memory.
        func stored(_ objects: [String], _ query: String = "", padding: String) throws -> [Stored] {
            var answers: [Stored] = []
            for isLarge in [false, true] {
                try connection.execute("DELETE FROM write_test.parity")
                var body = "[" + objects.joined(separator: ",")
                var index = 0
                while isLarge, body.utf8.count <= 1_100_000 {
                    body += "," + padding.replacingOccurrences(of: "N", with: String(index))
                    index += 1
                }
                let answer = try Self.send("POST", "/parity" + query, body + "]", port: port)
                let rows = try Self.rows(
                    "SELECT ARRAY[k, j::text, d::text, tone::text, other_name] FROM write_test.parity WHERE k NOT LIKE 'pad-%' ORDER BY id",
                    connection)
                answers.append(Stored(status: answer.status, rows: rows))
            }
            return answers
        }

        let padding = #"{"k": "pad-N", "j": null, "d": null, "tone": null}"#
        let cases: [(objects: [String], query: String, padding: String, stored: Stored)] = [
            // A string for a JSON column is read, then written again as PostgreSQL writes it; other values whole.
            (
                [#"{"k": "a", "j": "\u00e9\/\t\u001F", "d": "text", "tone": "high"}"#], "", padding,
                .init(status: 201, rows: [#"a|"é/\t\u001f"|"text"|high|NULL"#])
            ),
            (
                [#"{"k": "a", "j": {"b": "\u00e9\/",  "c": [1e400]}, "d": {"e": 1}, "tone": null}"#], "", padding,
                .init(status: 201, rows: [#"a|{"b": "\u00e9\/",  "c": [1e400]}|{"e": 1}|NULL|NULL"#])
            ),
            // What PostgreSQL refuses in any string of a body it reads into records, a JSON column's included.
            ([#"{"k": "a", "j": [{"b": "\u0000"}], "d": null, "tone": null}"#], "", padding, .init(status: 400, rows: [])),
            ([#"{"k": "a", "j": {"\ud800": 1}, "d": null, "tone": null}"#], "", padding, .init(status: 400, rows: [])),
            ([#"{"k": "a", "j": "\ude00\ud83d", "d": null, "tone": null}"#], "", padding, .init(status: 400, rows: [])),
            // Members columns= leaves out are read all the same: not JSON, or not text, they refuse the body.
            ([#"{"k": "a", "other_name": "x", "extra": tru}"#], "?columns=k,other_name", #"{"k": "pad-N"}"#, .init(status: 400, rows: [])),
            (
                [#"{"k": "a", "other_name": "x", "extra": "\u0000"}"#], "?columns=k,other_name", #"{"k": "pad-N"}"#,
                .init(status: 400, rows: [])
            ),
            // A column is read by its name when an object spells it so, else by its label, for every object.
            (
                [#"{"k": "a", "other_name": "by name"}"#, #"{"k": "b", "otherName": "by label"}"#], "?columns=k,other_name",
                #"{"k": "pad-N"}"#, .init(status: 201, rows: ["a|NULL|NULL|NULL|by name", "b|NULL|NULL|NULL|NULL"])
            ),
        ]
        for (objects, query, padding, expected) in cases {
            let answers = try stored(objects, query, padding: padding)
            #expect(answers[1] == answers[0], "\(objects[0])")
            #expect(answers[0] == expected, "\(objects[0])")
        }
    }

    @Test("a role that may not create temporary tables is answered 403 for a body past 1 MiB, saying why, and nothing is written")
    func spooledWithoutTemporaryPrivilege() throws {
        // A database of its own: TEMPORARY is PUBLIC's, taken from every role of a database at once.
        let admin = try Connection(try Environment.conninfo(user: "postgres"))
        try admin.execute("DROP DATABASE IF EXISTS write_no_temporary WITH (FORCE)")
        try admin.execute("CREATE DATABASE write_no_temporary")
        defer { _ = try? admin.execute("DROP DATABASE IF EXISTS write_no_temporary WITH (FORCE)") }
        let connection = try Connection(try Environment.conninfo(user: "postgres") + " dbname=write_no_temporary")
        try connection.executeScript(
            """
            REVOKE TEMPORARY ON DATABASE write_no_temporary FROM PUBLIC;
            CREATE SCHEMA write_test;
            GRANT USAGE ON SCHEMA write_test TO employees_reader;
            CREATE TABLE write_test.project (id serial PRIMARY KEY, name text NOT NULL);
            GRANT SELECT, INSERT ON write_test.project TO employees_reader;
            GRANT USAGE ON ALL SEQUENCES IN SCHEMA write_test TO employees_reader;
            """)
        let out = InitTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let database = ["--database-url", "dbname=write_no_temporary"]
        #expect(try ProcessTests.start(["init", "--out", out, "--schema", "write_test", "--writes"] + database).wait(timeout: 60) == 0)
        let server = try ProcessTests.start(["serve", "--services", out, "--port", "0"] + database)
        let port = try server.servingPort()
        let large = Self.projectArray(15_000, prefix: "large")
        #expect(large.utf8.count > 1 << 20)
        let refused = try Self.send("POST", "/project", large, port: port)
        #expect(refused.status == 403, "\(refused)")
        #expect((refused.object["detail"] as? String)?.contains("TEMPORARY privilege") == true, "\(refused.text)")
        #expect(try Self.send("POST", "/project", Self.projectArray(10, prefix: "small"), port: port).status == 201)
        #expect(try Self.rows("SELECT ARRAY[count(*)::text] FROM write_test.project", connection) == ["10"])
    }

    /// A write's status and the rows it left.
    struct Stored: Equatable {
        let status: Int
        let rows: [String]
    }
}
