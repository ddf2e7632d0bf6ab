import Foundation
import HTTPTestClient
import PostgreSQL
import Testing

/// `sql-rest init` on the employees database and on a schema of its own
/// (composite keys, a view, a self-reference, two foreign keys to one
/// table, an enumeration, a table without a key): the folder it writes
/// checks, and serves at once.
@Suite("sql-rest init", .serialized)
struct InitTests {
    static let schema = """
        DROP SCHEMA IF EXISTS init_test CASCADE;
        CREATE SCHEMA init_test;
        GRANT USAGE ON SCHEMA init_test TO employees_reader;
        CREATE TYPE init_test.status AS ENUM ('open', 'paid');
        CREATE TABLE init_test.customer (
            id serial PRIMARY KEY,
            full_name text NOT NULL,
            referred_by int REFERENCES init_test.customer (id)
        );
        COMMENT ON TABLE init_test.customer IS 'People who buy.';
        COMMENT ON COLUMN init_test.customer.full_name IS 'The customer''s full name.';
        CREATE TABLE init_test.invoice (
            id serial PRIMARY KEY,
            customer_id int NOT NULL REFERENCES init_test.customer (id),
            billed_to int REFERENCES init_test.customer (id),
            status init_test.status NOT NULL DEFAULT 'open',
            total numeric(10, 2) NOT NULL
        );
        CREATE TABLE init_test.invoice_line (
            invoice_id int REFERENCES init_test.invoice (id),
            line_no int,
            amount numeric(10, 2) NOT NULL,
            PRIMARY KEY (invoice_id, line_no)
        );
        CREATE TABLE init_test.audit_log (at timestamptz NOT NULL DEFAULT now(), message text);
        CREATE VIEW init_test.unpaid AS SELECT id, total FROM init_test.invoice WHERE status = 'open';
        INSERT INTO init_test.customer (full_name, referred_by) VALUES ('Ada', NULL), ('Brian', 1);
        INSERT INTO init_test.invoice (customer_id, billed_to, total) VALUES (1, 2, 10.50), (2, NULL, 99);
        INSERT INTO init_test.invoice_line VALUES (1, 1, 4.50), (1, 2, 6.00);
        INSERT INTO init_test.audit_log (message) VALUES ('made');
        GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA init_test TO employees_reader;
        GRANT USAGE ON ALL SEQUENCES IN SCHEMA init_test TO employees_reader;
        """

    static func folder() -> String {
        FileManager.default.temporaryDirectory.appending(path: "init-\(UUID().uuidString)").path
    }

    @Test("a second schema: every table and view, composite keys, details named after their tables, writes; a second run leaves every file")
    func secondSchema() throws {
        let connection = try Connection(try Environment.conninfo(user: "postgres"))
        try connection.executeScript(Self.schema)
        let out = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let start = Date()
        let run = try ProcessTests.start(["init", "--out", out, "--schema", "init_test", "--writes"])
        #expect(run.wait(timeout: 30) == 0, "\(run.output)\n\(run.errors)")
        print(
            "init wrote \(run.output.split(separator: "\n").filter { $0.hasPrefix("wrote") }.count) files in \(Date().timeIntervalSince(start)) s"
        )
        for file in [
            "customer/list.sql", "customer/one.sql", "customer/create.sql", "customer/update.sql", "customer/delete.sql",
            "invoice/one.sql", "invoice_line/one.sql", "audit_log/list.sql", "unpaid/list.sql",
        ] {
            #expect(FileManager.default.fileExists(atPath: "\(out)/\(file)"), "\(file)")
        }
        #expect(!FileManager.default.fileExists(atPath: "\(out)/audit_log/one.sql"), "no key, no one.sql")
        #expect(!FileManager.default.fileExists(atPath: "\(out)/unpaid/one.sql"), "a view: a list only")
        let one = try String(contentsOfFile: "\(out)/customer/one.sql", encoding: .utf8)
        #expect(one.hasPrefix("-- GET /customer/{id}\n-- People who buy.\n"))
        #expect(one.contains("-- @detail invoiceByCustomerId "), "two keys of invoice refer to customer:\n\(one)")
        #expect(one.contains("-- @detail invoiceByBilledTo "))
        #expect(one.contains("-- @detail customer "), "the self-reference:\n\(one)")
        // The key of the first row, for ?api's example request.
        #expect(one.contains("-- @example id 1\n"), "\(one)")
        let lineFile = try String(contentsOfFile: "\(out)/invoice_line/one.sql", encoding: .utf8)
        #expect(lineFile.contains("-- @example invoiceId 1\n-- @example lineNo 1\n"), "\(lineFile)")
        #expect(try String(contentsOfFile: "\(out)/customer/create.sql", encoding: .utf8).contains("-- @writes init_test.customer\n"))

        let again = try ProcessTests.start(["init", "--out", out, "--schema", "init_test", "--writes"])
        #expect(again.wait(timeout: 30) == 0)
        #expect(!again.output.contains("wrote "), "\(again.output)")
        #expect(again.output.contains("left \(out)/customer/one.sql (it exists)"))

        let server = try ProcessTests.start(["serve", "--services", out, "--port", "0"])
        let port = try server.servingPort()
        let brian = try TestClient.request("GET", "/customer/2?details=customer,invoiceByCustomerId", port: port)
        #expect(brian.object["fullName"] as? String == "Brian", "\(brian)")
        #expect((brian.object["invoiceByCustomerId"] as? [[String: Any]])?.count == 1)
        let line = try TestClient.request("GET", "/invoice_line/1/2", port: port)
        #expect(line.object["amount"] as? Double == 6, "\(line)")
        #expect(try TestClient.request("GET", "/invoice_line/1/9", port: port).status == 404)
        #expect(try TestClient.request("GET", "/unpaid", port: port).objects.count == 2)
        #expect(try TestClient.request("GET", "/audit_log", port: port).objects.first?["message"] as? String == "made")
        // A table without a key takes POST, and PATCH and DELETE by filter (its rows chosen by their address), none by key.
        #expect(FileManager.default.fileExists(atPath: "\(out)/audit_log/update-where.sql"), "no key, PATCH by filter")
        #expect(!FileManager.default.fileExists(atPath: "\(out)/audit_log/update.sql"), "no key, no PATCH by key")
        #expect(!FileManager.default.fileExists(atPath: "\(out)/audit_log/replace.sql"), "no key, no PUT")
        let logged = try TestClient.request(
            "POST", "/audit_log?select=message", port: port,
            headers: [("Content-Type", "application/json"), ("Prefer", "return=representation")],
            body: Array(#"[{"message": "one"}, {"message": "two"}]"#.utf8))
        #expect(logged.status == 201 && logged.text == #"[{"message":"one"},{"message":"two"}]"#, "\(logged)")
        let renamed = try TestClient.request(
            "PATCH", "/audit_log?message=eq.one&select=message", port: port,
            headers: [("Content-Type", "application/json"), ("Prefer", "return=representation")], body: Array(#"{"message": "uno"}"#.utf8))
        #expect(renamed.status == 200 && renamed.text == #"[{"message":"uno"}]"#, "\(renamed.status) \(renamed.text)")
        #expect(try TestClient.request("DELETE", "/audit_log?message=in.(uno,two)", port: port).status == 204)
        #expect(try TestClient.request("DELETE", "/audit_log", port: port).status == 400, "no filter")
        #expect(try TestClient.request("GET", "/audit_log", port: port).objects.map { $0["message"] as? String } == ["made"])
        let json = [("Content-Type", "application/json"), ("Prefer", "return=representation")]
        let created = try TestClient.request(
            "POST", "/invoice", port: port, headers: json, body: Array(#"{"customerId": 1, "total": 5}"#.utf8))
        #expect(created.status == 201)
        #expect(created.objects.first?["status"] as? String == "open", "the default: \(created)")
        let id = try #require(created.objects.first?["id"] as? Int)
        let patched = try TestClient.request("PATCH", "/invoice/\(id)", port: port, headers: json, body: Array(#"{"status": "paid"}"#.utf8))
        #expect(patched.objects.first?["status"] as? String == "paid" && patched.objects.first?["total"] as? Double == 5, "\(patched)")
        #expect(try TestClient.request("DELETE", "/invoice/\(id)", port: port).status == 204)
        #expect(try TestClient.request("GET", "/invoice/\(id)", port: port).status == 404)
        let document = try TestClient.request("GET", "/openapi.json", port: port).object
        #expect((document["paths"] as? [String: Any])?.keys.contains("/invoice_line/{invoiceId}/{lineNo}") == true)
        // Every example of the generated pages answers on the first try.
        for service in ["customer", "invoice", "invoice_line", "audit_log", "unpaid"] {
            let page = try TestClient.request("GET", "/\(service)?api", port: port, headers: [("Accept", "application/json")])
            for endpoint in page.object["endpoints"] as? [[String: Any]] ?? [] {
                for operation in endpoint["operations"] as? [[String: Any]] ?? [] where operation["method"] as? String == "GET" {
                    let example = try #require(operation["example"] as? String)
                    let target = try #require(example.firstMatch(of: /curl 'http:\/\/[^\/]+(\/[^']*)'/)?.1, "\(example)")
                    let reply = try TestClient.request("GET", String(target), port: port)
                    #expect(reply.status == 200 && reply.body.count > 2, "\(example): \(reply.status) \(reply.text)")
                }
            }
        }
    }

    @Test("a hostile schema: names that would leave the folder, break a label or a header, or carry SQL in a comment, are written harmless")
    func hostileNames() throws {
        let connection = try Connection(try Environment.conninfo(user: "postgres"))
        try connection.executeScript(
            #"""
            DROP SCHEMA IF EXISTS init_hostile CASCADE;
            CREATE SCHEMA init_hostile;
            GRANT USAGE ON SCHEMA init_hostile TO employees_reader;
            CREATE TABLE init_hostile."../../escaped" (id int PRIMARY KEY, "X"",(select 1)as""y" text, "Order" int, "left" int);
            COMMENT ON TABLE init_hostile."../../escaped" IS E'A table.\r\n-- @detail injected\r\nSELECT 1;\rDROP TABLE x;';
            COMMENT ON COLUMN init_hostile."../../escaped".id IS E'The id.\n-- @notfound gotcha';
            CREATE TABLE init_hostile.controlled (U&"a\0009b" int);
            GRANT SELECT ON ALL TABLES IN SCHEMA init_hostile TO employees_reader;
            INSERT INTO init_hostile."../../escaped" VALUES (1, 'text', 2, 3);
            """#)
        let parent = Self.folder()
        let out = parent + "/api"
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let run = try ProcessTests.start(["init", "--out", out, "--schema", "init_hostile"])
        #expect(run.wait(timeout: 30) == 0, "\(run.output)\n\(run.errors)")
        #expect(run.errors.contains("skipped \"init_hostile\".\"controlled\""), "\(run.errors)")
        let written = try FileManager.default.subpathsOfDirectory(atPath: parent).filter { $0.hasSuffix(".sql") }.sorted()
        #expect(written == ["api/escaped/list.sql", "api/escaped/one.sql"], "\(written)")
        let one = try String(contentsOfFile: out + "/escaped/one.sql", encoding: .utf8)
        // The comments' lines are description text: none starts a directive or a statement.
        #expect(!one.contains("\n-- @detail injected") && !one.contains("\n-- @notfound gotcha") && !one.contains("\nSELECT 1;"), "\(one)")
        #expect(one.contains("-- DROP TABLE x;"), "\(one)")
        let server = try ProcessTests.start(["serve", "--services", out, "--port", "0"])
        let port = try server.servingPort()
        let row = try TestClient.request("GET", "/escaped/1", port: port).object
        #expect(row["xSelect1AsY"] as? String == "text", "\(row)")
        #expect(row["order"] as? Int == 2 && row["left"] as? Int == 3, "\(row)")
    }

    @Test("the employees database: a folder of six services that checks and serves, no file written by hand")
    func employees() throws {
        let out = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let run = try ProcessTests.start(["init", "--out", out])
        #expect(run.wait(timeout: 30) == 0, "\(run.output)\n\(run.errors)")
        #expect(run.output.contains("12 files written, 0 left, for 6 tables and views"), "\(run.output)")
        let server = try ProcessTests.start(["serve", "--services", out, "--port", "0"])
        let port = try server.servingPort()
        let employee = try TestClient.request("GET", "/employees/10004?details=titles", port: port)
        #expect(employee.object["lastName"] as? String == "Birge")
        #expect((employee.object["titles"] as? [[String: Any]])?.count == 2)
        let page = try TestClient.request("GET", "/employees?limit=2", port: port)
        #expect(page.objects.map { $0["empNo"] as? Int } == [10001, 10002])
        // The example of a composite key is the first row's, which is there.
        let api = try TestClient.request("GET", "/dept_emp?api", port: port, headers: [("Accept", "application/json")]).text
        let target = try #require(api.firstMatch(of: /curl 'http:\/\/127\.0\.0\.1(\/dept_emp\/10001\/d\d{3})'/)?.1, "\(api)")
        #expect(try TestClient.request("GET", String(target), port: port).object["empNo"] as? Int == 10001)
    }
}
