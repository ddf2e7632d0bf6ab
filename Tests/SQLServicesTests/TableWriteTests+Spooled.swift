import Foundation
import HTTPTestClient
import PostgreSQL
import Testing

extension TableWriteTests {
    /// A JSON array of `count` projects named `prefix-n`, each object
    /// `extra(n)` more members, pretty-printed with tabs and new lines
    /// (whitespace that COPY's text format would read as separators).
    static func projectArray(_ count: Int, prefix: String, extra: (Int) -> String = { _ in "" }) -> String {
        var text = "[\n"
        for index in 0..<count {
            if index > 0 { text += ",\n" }
            text += "\t{\"name\":\t\"\(prefix)-\(index)\(String(repeating: " ", count: 60))\"\(extra(index))}"
        }
        return text + "\n]"
    }

    @Test("a body past the server's memory limit is copied into PostgreSQL an object at a time: every write form, every refusal")
    func spooledBodies() throws {
        let connection = try Connection(try Environment.conninfo(user: "postgres"))
        try connection.executeScript(Self.schema)
        try connection.executeScript(
            """
            CREATE TABLE write_test.measure (id serial PRIMARY KEY, label text, amount numeric, flag boolean, doc jsonb, tags text[]);
            GRANT SELECT, INSERT ON write_test.measure TO employees_reader;
            GRANT USAGE ON ALL SEQUENCES IN SCHEMA write_test TO employees_reader;
            """)
        let out = InitTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        #expect(try ProcessTests.start(["init", "--out", out, "--schema", "write_test", "--writes"]).wait(timeout: 60) == 0)
        let server = try ProcessTests.start(["serve", "--services", out, "--port", "0"])
        let port = try server.servingPort()
        func count(_ condition: String = "true") throws -> String {
            try Self.rows("SELECT ARRAY[count(*)::text] FROM write_test.project WHERE \(condition)", connection)[0]
        }

        // 15,000 objects (1.4 MB, past the 1 MiB held in memory): null stored as NULL, rows in the body's order,
        // escapes kept (a backslash, a quote, a tab, non-ASCII text).
        let body = Self.projectArray(15_000, prefix: "bulk") { index in
            index == 7 ? #", "client_id": null, "status": "done""# : #", "client_id": \#(index), "status": "open""#
        }
        .replacingOccurrences(of: "bulk-3 ", with: #"bulk-3 \\ \" \t é "#)
        #expect(body.utf8.count > 1 << 20)
        let inserted = try Self.send("POST", "/project", body, port: port)
        #expect(inserted.status == 201 && inserted.body.isEmpty, "\(inserted)")
        #expect(try count("name LIKE 'bulk-%'") == "15000")
        #expect(try count("name LIKE 'bulk-7 %' AND client_id IS NULL AND status = 'done'") == "1")
        #expect(try count("name LIKE E'bulk-3 \\\\\\\\ \" \\t é %'") == "1")
        let order = try Self.rows(
            "SELECT ARRAY[string_agg(split_part(name, ' ', 1), ',' ORDER BY id)] FROM (SELECT id, name FROM write_test.project"
                + " WHERE name LIKE 'bulk-%' ORDER BY id LIMIT 3) AS first", connection)
        #expect(order == ["bulk-0,bulk-1,bulk-2"])

        // Prefer: missing=default with objects that differ, and the rows returned (representation, count).
        let mixed = Self.projectArray(12_000, prefix: "mixed") { index in index % 2 == 0 ? #", "status": "done""# : "" }
        let represented = try Self.send(
            "POST", "/project?select=name,status", mixed, port: port,
            [Self.json, ("Prefer", "missing=default, return=representation, count=exact")])
        #expect(represented.status == 201 && represented.objects.count == 12_000, "\(represented.status)")
        #expect(represented.objects.last?["status"] as? String == "open")
        #expect(try count("name LIKE 'mixed-%' AND status = 'open' AND client_id = 7") == "6000")

        // An upsert by a unique key: the rows that exist are updated (200 when none is new).
        let upsert = Self.projectArray(12_000, prefix: "mixed") { _ in #", "status": "done""# }
        let merged = try Self.send(
            "POST", "/project?on_conflict=name", upsert, port: port,
            [Self.json, ("Prefer", "resolution=merge-duplicates")])
        #expect(merged.status == 200, "\(merged)")
        #expect(try count("name LIKE 'mixed-%' AND status = 'done'") == "12000")

        // Refused: nothing is written, whichever object breaks the rule, however far into the body.
        let before = try count()
        let refused: [(String, Int)] = [
            (Self.projectArray(12_000, prefix: "late") { $0 == 11_999 ? #", "status": "lost""# : "" }, 400),  // a check
            (Self.projectArray(12_000, prefix: "bulk"), 409),  // the unique key
            (Self.projectArray(12_000, prefix: "keys") { $0 == 9_000 ? #", "status": "done""# : "" }, 400),  // keys that differ
            (Self.projectArray(12_000, prefix: "bad") { $0 == 11_000 ? #", "client_id": tru"# : "" }, 400),  // not JSON
            (Self.projectArray(12_000, prefix: "open") + ",", 400),  // text after the array
            (String(Self.projectArray(12_000, prefix: "cut").dropLast(2)), 400),  // cut short
            ("[1, " + Self.projectArray(12_000, prefix: "scalar").dropFirst(), 400),  // not an object
        ]
        for (text, status) in refused {
            let answer = try Self.send("POST", "/project", text, port: port)
            #expect(answer.status == status, "\(answer.status) \(answer.text.prefix(300))")
            #expect(answer.object["message"] != nil || answer.object["detail"] != nil, "\(answer.text.prefix(300))")
        }
        #expect(try Self.send("POST", "/project", body, port: port, [("Content-Type", "text/plain")]).status == 415)
        #expect(try count() == before)

        // Row-level security holds for the copied rows as for others: one hidden row refuses them all.
        let notes = try Self.rows("SELECT ARRAY[count(*)::text] FROM write_test.note", connection)
        var noteBody = "["
        for index in 0..<12_000 {
            noteBody +=
                (index > 0 ? "," : "") + #"{"body": "note \#(index) \#(String(repeating: "x", count: 80))", "shared": \#(index != 6_000)}"#
        }
        #expect(try Self.send("POST", "/note", noteBody + "]", port: port).status == 403)
        #expect(try Self.rows("SELECT ARRAY[count(*)::text] FROM write_test.note", connection) == notes)

        // Every JSON value as its column's type reads it: strings with their escapes, numbers, booleans, JSON
        // columns taking any value whole; an array for an array column (copied as JSON objects then).
        var measures = "["
        for index in 0..<10_000 {
            if index > 0 { measures += ",\n" }
            let label =
                index == 1 ? #"tab\tnew\nline \"q\" back\\slash \u00e9 \ud83d\ude00 \/"# : "m\(index) \(String(repeating: "z", count: 60))"
            measures += #"{"label": "\#(label)", "amount": \#(index)e-2, "flag": \#(index % 2 == 0), "doc": {"n": [\#(index), "x"]}}"#
        }
        measures += "]"
        #expect(try Self.send("POST", "/measure", measures, port: port).status == 201)
        let measured = try Self.rows(
            "SELECT ARRAY[count(*)::text, sum(amount)::text, count(*) FILTER (WHERE flag)::text, max((doc->'n'->>0)::int)::text] FROM write_test.measure",
            connection)
        #expect(measured == ["10000|499950.00|5000|9999"])
        #expect(
            try Self.rows("SELECT ARRAY[label] FROM write_test.measure WHERE id = 2", connection)
                == ["tab\tnew\nline \"q\" back\\slash é 😀 /"])
        let tagged = Self.projectArray(10_000, prefix: "tags").replacingOccurrences(of: #"{"name""#, with: #"{"tags": ["a", "b"], "label""#)
        #expect(try Self.send("POST", "/measure", tagged, port: port).status == 201)
        #expect(try Self.rows("SELECT ARRAY[count(*)::text] FROM write_test.measure WHERE tags = '{a,b}'", connection) == ["10000"])
        let measureCount = try Self.rows("SELECT ARRAY[count(*)::text] FROM write_test.measure", connection)
        for bad in [#""\ud83d x""#, "\"a\u{01}b\"", #""\u0000""#, "01", "1.", "-", "nul", "\"\\x\""] {
            let text = Self.projectArray(10_000, prefix: "bad").replacingOccurrences(of: #"{"name""#, with: #"{"amount": 1, "label""#)
                .replacingOccurrences(of: "{\"amount\": 1, \"label\":\t\"bad-9999", with: "{\"amount\": \(bad), \"label\":\t\"bad-9999")
            let answer = try Self.send("POST", "/measure", text, port: port)
            #expect(answer.status == 400, "\(bad): \(answer.status) \(answer.text.prefix(200))")
        }
        #expect(try Self.rows("SELECT ARRAY[count(*)::text] FROM write_test.measure", connection) == measureCount)

        // One object past the limit is read whole, as any object is.
        let large = #"{"body": "large \#(String(repeating: "y", count: 1_200_000))"}"#
        let whole = try Self.send("POST", "/note", large, port: port)
        #expect(whole.status == 201, "\(whole.status) \(whole.text.prefix(300))")
        #expect(try Self.rows("SELECT ARRAY[count(*)::text] FROM write_test.note WHERE length(body) > 1000000", connection) == ["1"])
    }

    @Test("a bulk insert of 25 MB leaves the server's peak memory where 1 MB leaves it")
    func bulkInsertKeepsMemoryFlat() throws {
        let connection = try Connection(try Environment.conninfo(user: "postgres"))
        try connection.executeScript(Self.schema)
        let out = InitTests.folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        #expect(try ProcessTests.start(["init", "--out", out, "--schema", "write_test", "--writes"]).wait(timeout: 60) == 0)
        let server = try ProcessTests.start(["serve", "--services", out, "--port", "0", "--max-body-size", "64000000"])
        let port = try server.servingPort()
        func peakKB() -> Int {
            let status = (try? String(contentsOfFile: "/proc/\(server.pid)/status", encoding: .utf8)) ?? ""
            return status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
                .flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        }
        let small = try Self.send("POST", "/project", Self.projectArray(12_000, prefix: "small"), port: port)
        #expect(small.status == 201, "\(small)")
        let before = peakKB()
        let body = Self.projectArray(250_000, prefix: "large") { #", "client_id": \#($0)"# }
        #expect(body.utf8.count > 25_000_000)
        let large = try Self.send("POST", "/project", body, port: port)
        #expect(large.status == 201, "\(large)")
        #expect(try Self.rows("SELECT ARRAY[count(*)::text] FROM write_test.project WHERE name LIKE 'large-%'", connection) == ["250000"])
        let growth = peakKB() - before
        #expect(growth < 8 << 10, "peak memory grew by \(growth) kB for a 25 MB body")
    }
}
