import Foundation
import HTTPTestClient
import PostgreSQL
import Testing

/// `sql-rest init` on a schema made to trip it: a table without columns,
/// tables whose first columns (or all) have no ordering, labels that
/// collide, names with quotes, spaces, dollars and capitals, names already
/// in camelCase, a materialized view, a view, columns named as the read
/// language's parameters. Every file it writes checks and serves, and
/// every value the server writes is taken back as a filter.
extension InitTests {
    static let oddSchema = #"""
        DROP SCHEMA IF EXISTS init_odd CASCADE;
        CREATE SCHEMA init_odd;
        GRANT USAGE ON SCHEMA init_odd TO employees_reader;
        CREATE TABLE init_odd.nothing ();
        INSERT INTO init_odd.nothing DEFAULT VALUES;
        CREATE TABLE init_odd.documents (data json, body xml, spot point, id int);
        CREATE TABLE init_odd.shapeless (data json, spot point, area box);
        CREATE TABLE init_odd.users (
            userid int PRIMARY KEY, "userId" int, user_id int, "USERID" text, "articleId" int,
            "createdAt" timestamp, "updatedAt" timestamptz, born date, price numeric, ratio float8, flag bool,
            code uuid, note text, tags text[], during tsrange, at_time time, blob bytea, span interval, cash money, host inet);
        CREATE TABLE init_odd."Quoted ""Name""" ("Column With Spaces" int PRIMARY KEY, "dollar$sign" text, "$$" int, "$" int, a_b int, "aB" int);
        CREATE TABLE init_odd."dollar$table" (id int);
        CREATE TABLE init_odd.dollar_table (id int);
        CREATE TABLE init_odd."a b" (id int);
        CREATE TABLE init_odd."a-b" (id int);
        CREATE TABLE init_odd."a.b" (id int);
        CREATE TABLE init_odd.health (id int);
        CREATE TABLE init_odd.jsonrpc (id int);
        CREATE TABLE init_odd."MixedCase" (id int PRIMARY KEY, "ParentId" int REFERENCES init_odd."MixedCase" (id));
        CREATE TABLE init_odd.articles ("articleId" int PRIMARY KEY, "authorId" int REFERENCES init_odd.users (userid), title text);
        CREATE TABLE init_odd.words ("limit" int, "offset" int, "order" text, "select" text, "or" int, "and" int, "not" int, details int);
        INSERT INTO init_odd.documents VALUES ('{"a": 1}', '<a/>', '(1,2)', 1);
        INSERT INTO init_odd.shapeless VALUES ('[1]', '(0,0)', '((0,0),(1,1))');
        INSERT INTO init_odd.users VALUES
            (1, 2, 3, 'X', 4, '2015-12-08T04:22:57.472738', '2015-12-08T04:22:57.472738+02', '2015-12-08', 10.50, 0.1, true,
             'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'it''s "quoted", (parenthesized), a+b & c', '{a,b}',
             '[2015-01-01,2015-02-01)', '04:05:06.789', '\x00ff10', '1 day 02:03:04', 12.5, '10.0.0.1/8'),
            (2, 5, 6, 'Y', 7, '2016-01-01T00:00:00', '2016-01-01T00:00:00Z', '2016-01-01', 1e-7, 1e300, false,
             'b0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12', 'plain', '{}', 'empty', '23:59:59', '\x', '-1 mons', -3, '::1');
        INSERT INTO init_odd."Quoted ""Name""" VALUES (1, 'x$y', 2, 3, 4, 5);
        INSERT INTO init_odd."MixedCase" VALUES (1, NULL), (2, 1);
        INSERT INTO init_odd.articles VALUES (7, 1, 'First');
        INSERT INTO init_odd.words VALUES (1, 2, 'o', 's', 3, 4, 5, 6);
        CREATE MATERIALIZED VIEW init_odd.author_totals AS SELECT "authorId", count(*) AS "articleCount" FROM init_odd.articles GROUP BY "authorId";
        CREATE VIEW init_odd."odd view" AS SELECT d.data, u."articleId", u."createdAt" FROM init_odd.users u, init_odd.documents d;
        GRANT SELECT ON ALL TABLES IN SCHEMA init_odd TO employees_reader;
        """#

    @Test("an odd schema: every relation gets files that check and serve, paths and labels by the documented rules")
    func oddSchemaChecksAndServes() throws {
        let connection = try Connection(try Environment.conninfo(user: "postgres"))
        try connection.executeScript(Self.oddSchema)
        let out = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let run = try ProcessTests.start(["init", "--out", out, "--schema", "init_odd"])
        #expect(run.wait(timeout: 60) == 0, "\(run.output)\n\(run.errors)")
        #expect(!run.errors.contains("skipped"), "\(run.errors)")
        let lists = [
            "nothing", "documents", "shapeless", "users", "Quoted-Name", "dollar-table", "dollar_table", "MixedCase",
            "articles", "words", "author_totals", "odd-view", "a-b", "init_odd-a-b", "init_odd-a-b-2",
            "init_odd-health", "init_odd-jsonrpc",
        ]
        for list in lists {
            #expect(FileManager.default.fileExists(atPath: "\(out)/\(list)/list.sql"), "\(list)")
        }
        let users = try String(contentsOfFile: "\(out)/users/list.sql", encoding: .utf8)
        #expect(
            users.contains(
                #"SELECT userid, "userId", user_id, "USERID", "articleId", "createdAt", "updatedAt", born, price, ratio, flag"#),
            "camelCase names stay, colliding labels fall back to the column's name:\n\(users)")
        let quoted = try String(contentsOfFile: "\(out)/Quoted-Name/list.sql", encoding: .utf8)
        #expect(
            quoted.contains(
                #"SELECT "Column With Spaces" AS "columnWithSpaces", "dollar$sign" AS "dollarSign", "$$" AS "column", "$" AS "column2", a_b AS "aB", "aB" AS "aB2""#
            ), "\(quoted)")
        let shapeless = try String(contentsOfFile: "\(out)/shapeless/list.sql", encoding: .utf8)
        #expect(shapeless.contains("FROM init_odd.shapeless;"), "no column has an ordering:\n\(shapeless)")
        let documents = try String(contentsOfFile: "\(out)/documents/list.sql", encoding: .utf8)
        #expect(
            documents.contains("-- @order id\n") && documents.contains("ORDER BY id;"), "the first column with an ordering:\n\(documents)")
        #expect(!shapeless.contains("@order"), "\(shapeless)")

        let server = try ProcessTests.start(["serve", "--services", out, "--port", "0"])
        let port = try server.servingPort()
        for list in lists {
            let reply = try TestClient.request("GET", "/\(list)", port: port)
            #expect(reply.status == 200, "/\(list): \(reply.status) \(reply.text)")
        }
        #expect(try TestClient.request("GET", "/nothing", port: port).text == "[{}]")
        let unordered = try TestClient.request("GET", "/documents?order=data", port: port)
        #expect(unordered.status == 400 && unordered.text.contains("order"), "json has no ordering: \(unordered.text)")
        #expect(try TestClient.request("GET", "/Quoted-Name/1", port: port).object["column2"] as? Int == 3)
        let child = try TestClient.request("GET", "/MixedCase/1?details=mixedCase", port: port).object
        #expect((child["mixedCase"] as? [[String: Any]])?.first?["parentId"] as? Int == 1, "\(child)")
        let embedded = try TestClient.request("GET", "/users?select=userid,articles(title)&userid=eq.1", port: port)
        #expect(embedded.text == #"[{"userid":1,"articles":[{"title":"First"}]}]"#, "\(embedded.text)")
        // Columns named as the read language's parameters are filters inside a logic tree, as PostgREST takes them.
        let words = try TestClient.request(
            "GET", "/words?and=(limit.eq.1,offset.eq.2,order.eq.o,select.eq.s,or.eq.3,and.eq.4,not.eq.5,details.eq.6)", port: port)
        #expect(words.objects.count == 1, "\(words.text)")
    }

    @Test("every value the server writes in a column is taken back as that column's filter value")
    func writtenValuesFilterBack() throws {
        let connection = try Connection(try Environment.conninfo(user: "postgres"))
        try connection.executeScript(Self.oddSchema)
        let out = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let run = try ProcessTests.start(["init", "--out", out, "--schema", "init_odd"])
        #expect(run.wait(timeout: 60) == 0, "\(run.output)\n\(run.errors)")
        let server = try ProcessTests.start(["serve", "--services", out, "--port", "0"])
        let port = try server.servingPort()
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        for row in try TestClient.request("GET", "/users", port: port).objects {
            for (label, value) in row.sorted(by: { $0.key < $1.key }) where !(value is [Any]) && !(value is NSNull) {
                let json = try JSONSerialization.data(withJSONObject: value, options: .fragmentsAllowed)
                let text = value as? String ?? String(decoding: json, as: UTF8.self)
                let encoded = try #require(text.addingPercentEncoding(withAllowedCharacters: allowed))
                let reply = try TestClient.request("GET", "/users?\(label)=eq.\(encoded)&select=userid", port: port)
                #expect(
                    reply.status == 200 && reply.objects.map { $0["userid"] as? Int } == [row["userid"] as? Int],
                    "\(label)=eq.\(text): \(reply.status) \(reply.text)")
            }
        }
    }
}
