import Foundation
import HTTPTestClient
import PostgreSQL
import PostgreSQLWebService
import Testing

/// SQL injection attempts in every parameter of every employees endpoint,
/// by query string, form body and JSON body. Values are bound, never
/// spliced into SQL: every attempt is an ordinary 2xx/4xx, a name search
/// finds nothing, and the data is the same afterwards (row count and an
/// order-independent checksum per table, the tables, roles and databases).
@Suite("SQL injection", .serialized)
struct InjectionTests {
    let server = HostileServer.shared

    static let payloads = [
        "' OR '1'='1", "'; DROP TABLE employees; --", "10001; DELETE FROM salaries", "10001 OR 1=1",
        "1) UNION SELECT usename, passwd, null FROM pg_shadow--", "$1", ":employeeNumber", "::text",
        "\\'; TRUNCATE titles; --", "d005'; UPDATE departments SET dept_name = 'x' WHERE '1'='1",
        "titles; DELETE FROM titles", "'||pg_sleep(10)||'", "$$; DROP TABLE dept_emp; $$",
        "1/**/OR/**/1=1", "E'\\x27'; DROP ROLE employees_reader; --", "\"; CREATE TABLE pwned (x int); --",
        "d005\"; DROP DATABASE employees; --", "%' OR 1=1 --", "_%", "\\", "';COMMIT;DROP TABLE salaries;BEGIN;--",
    ]

    /// Every parameter of every employees endpoint, as (path, name) or a
    /// path with the payload in place of `{}`.
    static let parameters: [(path: String, name: String?)] = [
        ("/employees", "name"), ("/employees", "details"), ("/employees", "limit"), ("/employees", "offset"),
        ("/employees/10001", "details"), ("/employees/{}", nil),
        ("/departments/d005", "details"), ("/departments/{}", nil),
    ]

    struct Fingerprint: Decodable, Equatable {
        var item: String
        var count: Int64
        var checksum: Int64
    }

    static func fingerprint() throws -> [Fingerprint] {
        let connection = try Connection("dbname=\(HostileServer.database)")
        defer { connection.close() }
        var sql = ["employees", "departments", "dept_emp", "dept_manager", "titles", "salaries"].map { table in
            "SELECT '\(table)' AS item, count(*)::int8 AS count, coalesce(sum(hashtext(t::text)::int8), 0)::int8 AS checksum FROM \(table) AS t"
        }
        sql.append(
            "SELECT 'relations', count(*)::int8, coalesce(sum(hashtext(relname)::int8), 0)::int8 FROM pg_class WHERE relnamespace = 'public'::regnamespace"
        )
        // Other suites, running meanwhile, make and drop roles and databases of their own
        // (auth_test_*, sqlrest_*, live_*, replica_test_*, write_no_temporary): only the
        // cluster's own and the sample's (sql/roles.sql, this database) count.
        sql.append(
            """
            SELECT 'roles', count(*)::int8, coalesce(sum(hashtext(rolname)::int8), 0)::int8 FROM pg_roles
            WHERE rolname LIKE 'pg\\_%' OR rolname = 'postgres' OR rolname LIKE 'employees\\_%'
            """)
        sql.append(
            """
            SELECT 'databases', count(*)::int8, coalesce(sum(hashtext(datname)::int8), 0)::int8 FROM pg_database
            WHERE datname IN ('postgres', 'template0', 'template1', '\(HostileServer.database)')
            """)
        return try connection.fetchAll(Fingerprint.self, sql.joined(separator: " UNION ALL "))
    }

    /// `{"name":"value"}`, escaped by Foundation.
    static func jsonObject(_ name: String, _ value: String) -> [UInt8] {
        Array(try! JSONSerialization.data(withJSONObject: [name: value]))
    }

    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    @Test("no attempt changes the data")
    func attempts() throws {
        let before = try Self.fingerprint()
        #expect(before.count == 9 && before[0].count == 300_024, "\(before)")
        var requests = 0
        for payload in Self.payloads {
            for (path, name) in Self.parameters {
                let target = path.replacingOccurrences(of: "{}", with: Self.encoded(payload))
                var responses: [(String, TestClient.Response)] = []
                if let name {
                    responses.append(("query", try server.send("\(target)?\(name)=\(Self.encoded(payload))")))
                    responses.append(
                        (
                            "form",
                            try server.send(
                                target, headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                body: Array("\(name)=\(Self.encoded(payload))".utf8))
                        ))
                    responses.append(
                        (
                            "json",
                            try server.send(
                                target, headers: [("Content-Type", "application/json")],
                                body: Self.jsonObject(name, payload))
                        ))
                } else {
                    responses.append(("path", try server.send(target)))
                }
                for (transport, response) in responses {
                    requests += 1
                    let label = "\(path) \(name ?? "path") by \(transport): \(payload)"
                    if response.status == 200 {
                        #expect(name == "name" && response.text == "[]", "\(label): \(response)")
                    } else {
                        expectProblem(response, 400...404, label)
                    }
                }
            }
        }
        #expect(requests == Self.payloads.count * 20)
        let after = try Self.fingerprint()
        #expect(after == before, "changed: \(after.filter { !before.contains($0) })")
    }
}

/// The SQL layer's own guard, behind the HTTP layer's: a NUL would cut a
/// C string short, so a bound value holding one is refused, and the
/// refusal answers 400.
@Suite("NUL in a bound value")
struct BoundNulTests {
    @Test("a value with a NUL is refused, which answers 400")
    func refused() throws {
        let pool = HostileServer.shared.pool
        let sql = "SELECT :x AS item, 0::int8 AS count, 0::int8 AS checksum"
        do {
            _ = try pool.withConnection { try $0.fetchAll(InjectionTests.Fingerprint.self, sql, ["x": "bal\u{0}zzz"]) }
            Issue.record("a NUL was accepted")
        } catch let error as ParameterError {
            #expect(error.reason == .nulCharacter)
            #expect(error.httpError?.status.code == 400)
        }
        let clean = try pool.withConnection { try $0.fetchAll(InjectionTests.Fingerprint.self, sql, ["x": "bal"]) }
        #expect(clean.map(\.item) == ["bal"])
    }
}
