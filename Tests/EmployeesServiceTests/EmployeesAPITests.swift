import EmployeesService
import Foundation
import HTTPTestClient
import PostgreSQL
import PostgreSQLWebService
import Testing
import WebService

/// `GET /employees/{n}` over a real socket, checked against the database's
/// own rows.
@Suite("GET /employees/{employeeNumber}")
struct EmployeeAPITests {
    let server: TestServer

    init() throws {
        server = try TestServer.shared()
    }

    // MARK: - One employee

    @Test("10004: the six fields in order, with their JSON types and ISO dates")
    func oneEmployee() throws {
        let reply = try server.get("/employees/10004")
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type") == "application/json; charset=utf-8")
        #expect(
            JSONReader.keyOrder(ofObject: reply.text)
                == ["employeeNumber", "firstName", "lastName", "birthDate", "gender", "hireDate"])
        let employee = reply.object
        #expect(employee["employeeNumber"] as? Int == 10004)
        #expect(employee["firstName"] is String)
        #expect(employee["lastName"] is String)
        #expect(["M", "F"].contains(employee["gender"] as? String ?? ""))
        for key in ["birthDate", "hireDate"] {
            #expect((employee[key] as? String)?.wholeMatch(of: /\d{4}-\d{2}-\d{2}/) != nil, "\(key)")
        }
        let database = try TestEnvironment.rows(
            """
            SELECT emp_no, first_name, last_name, birth_date::text, gender::text, hire_date::text
            FROM employees WHERE emp_no = 10004
            """)
        #expect(
            JSONReader.table([employee], ["employeeNumber", "firstName", "lastName", "birthDate", "gender", "hireDate"])
                == database)
    }

    @Test("titles and salaries, repeated or comma-separated, equal the database's rows ordered by fromDate")
    func titlesAndSalaries() throws {
        let repeated = try server.get("/employees/10004?details=titles&details=salaries")
        let commas = try server.get("/employees/10004?details=titles,salaries")
        #expect(repeated.status == 200)
        #expect(repeated.text == commas.text)
        #expect(try server.get("/employees/10004?details=salaries,titles,titles").status == 200)

        let employee = repeated.object
        let titles = try #require(employee["titles"] as? [[String: Any]])
        let salaries = try #require(employee["salaries"] as? [[String: Any]])
        #expect(employee["departments"] == nil)
        #expect(!titles.isEmpty && !salaries.isEmpty)
        #expect(
            JSONReader.table(titles, ["title", "fromDate", "toDate"])
                == (try TestEnvironment.rows(
                    """
                    SELECT title, from_date::text, to_date::text FROM titles WHERE emp_no = 10004 ORDER BY from_date, title
                    """)))
        #expect(
            JSONReader.table(salaries, ["salary", "fromDate", "toDate"])
                == (try TestEnvironment.rows(
                    """
                    SELECT salary, from_date::text, to_date::text FROM salaries WHERE emp_no = 10004 ORDER BY from_date
                    """)))
        for list in [titles, salaries] {
            let dates = list.compactMap { $0["fromDate"] as? String }
            #expect(dates == dates.sorted())
        }
        #expect(salaries.allSatisfy { $0["salary"] is Int })
    }

    @Test("details=departments nests the department history")
    func departments() throws {
        let reply = try server.get("/employees/10004?details=departments")
        #expect(reply.status == 200)
        let departments = try #require(reply.object["departments"] as? [[String: Any]])
        #expect(reply.object["titles"] == nil)
        #expect(
            JSONReader.table(departments, ["departmentNumber", "departmentName", "fromDate", "toDate"])
                == (try TestEnvironment.rows(
                    """
                    SELECT de.dept_no, d.dept_name, de.from_date::text, de.to_date::text
                    FROM dept_emp de JOIN departments d USING (dept_no) WHERE de.emp_no = 10004 ORDER BY de.from_date, de.dept_no
                    """)))
    }

    // MARK: - Errors

    @Test("an unknown employee is 404 problem+json")
    func unknownEmployee() throws {
        // Numbers beyond emp_no's int4 range are valid numbers of no employee.
        for number in ["99999999", "10000", "0", "-1", "2147483648", "-9223372036854775808", "9223372036854775807"] {
            let reply = try server.get("/employees/\(number)")
            #expect(reply.status == 404, "\(number)")
            #expect(reply.header("Content-Type") == "application/problem+json")
            #expect(reply.object["status"] as? Int == 404)
            #expect(reply.object["parameter"] as? String == "employeeNumber")
        }
    }

    @Test("a non-numeric employee number is 400 naming employeeNumber")
    func nonNumeric() throws {
        for number in ["abc", "10004x", "1.5", "99999999999999999999999"] {
            let reply = try server.get("/employees/\(number)")
            #expect(reply.status == 400, "\(number)")
            #expect(reply.header("Content-Type") == "application/problem+json")
            #expect(reply.object["parameter"] as? String == "employeeNumber", "\(number)")
        }
    }

    @Test("an unknown details value is 400 listing the allowed values")
    func unknownDetail() throws {
        for target in [
            "/employees/10004?details=titles,bogus", "/employees/10004?details=Titles",
            "/employees?details=bogus&limit=1", "/employees/10004?details=titles&details=",
        ] {
            let reply = try server.get(target)
            #expect(reply.status == 400, "\(target)")
            #expect(reply.object["parameter"] as? String == "details")
            #expect(reply.object["allowedValues"] as? [String] == ["titles", "salaries", "departments"], "\(target)")
        }
    }

    @Test("writing methods are 405 with Allow; HEAD answers without a body")
    func methods() throws {
        for method in ["POST", "PUT", "PATCH", "DELETE"] {
            for target in ["/employees/10004", "/employees", "/departments/d005"] {
                let reply = try TestClient.request(method, target, port: server.port, headers: [("Content-Length", "0")])
                #expect(reply.status == 405, "\(method) \(target)")
                #expect(reply.header("Allow") == "GET, HEAD, OPTIONS", "\(method) \(target)")
            }
        }
        let head = try TestClient.request("HEAD", "/employees/10004?details=titles", port: server.port)
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(try TestEnvironment.integer("SELECT count(*) FROM employees WHERE emp_no = 10004") == 1)
    }

    @Test("HEAD carries the header fields of its GET: fixed length, chunked, CSV, gzip, paging, errors")
    func headHasTheHeadersOfGET() throws {
        let targets: [(String, [(String, String)])] = [
            ("/employees?name=bal*&limit=3", []),
            ("/employees?limit=2000", []),
            ("/employees?limit=2000&details=titles", []),
            ("/employees?limit=5", [("Accept", "text/csv")]),
            ("/employees?limit=2000", [("Accept-Encoding", "gzip")]),
            ("/employees?name=bal*&limit=3", [("Prefer", "count=exact")]),
            ("/employees/10004?details=titles", []),
            ("/departments/d005?details=managers", []),
            ("/departments/d005?details=managers,employees", []),
            ("/departments/d005?details=employees", [("Accept-Encoding", "gzip")]),
            ("/employees/1", []),
            ("/employees?limit=-1", []),
        ]
        // Date moves, each request has its own id; a chunked HEAD also
        // closes its connection (HTTPServer).
        func fields(_ reply: TestClient.Response, without ignored: [String] = []) -> [String] {
            reply.headers.filter { !(["date", "connection", "x-request-id"] + ignored).contains($0.name.lowercased()) }
                .map { "\($0.name.lowercased()): \($0.value)" }.sorted()
        }
        for (target, headers) in targets {
            let get = try TestClient.request("GET", target, port: server.port, headers: headers)
            let head = try TestClient.request("HEAD", target, port: server.port, headers: headers)
            #expect(head.status == get.status, "\(target)")
            // A short list's first request streams while the batcher reads its statement's description; the
            // next ones are read whole, with an ETag (and, under 1 KiB, no Vary): by that alone a GET and the
            // HEAD after it may differ there.
            let eachWhole = [get, head].map { $0.header("ETag") != nil }
            let ignored = eachWhole[0] == eachWhole[1] ? [] : ["etag", "vary"]
            #expect(fields(head, without: ignored) == fields(get, without: ignored), "\(target) \(headers)")
            #expect(head.body.isEmpty)
            #expect(get.headers.filter { $0.name.lowercased() == "vary" }.count <= 1, "\(target): Vary at most once")
        }
    }

    // MARK: - Options

    @Test("dates as epoch milliseconds when the service is configured so")
    func epochMilliseconds() throws {
        let pool = try TestEnvironment.pool(size: 2)
        let server = try TestServer.serve(
            [EmployeesService()], runner: QueryRunner(pool: pool, options: JSONRenderingOptions(dateFormat: .epochMilliseconds)))
        try server.start()
        defer { server.stop(); pool.close() }

        let reply = try TestClient.request("GET", "/employees/10004?details=titles", port: server.port)
        #expect(reply.status == 200)
        let employee = reply.object
        let expected = try TestEnvironment.rows(
            """
            SELECT (extract(epoch FROM birth_date::timestamp) * 1000)::bigint,
                   (extract(epoch FROM hire_date::timestamp) * 1000)::bigint
            FROM employees WHERE emp_no = 10004
            """)
        #expect([JSONReader.text(employee["birthDate"]), JSONReader.text(employee["hireDate"])] == expected.first)
        #expect(employee["birthDate"] is Int)
        let titles = try #require(employee["titles"] as? [[String: Any]])
        #expect(titles.allSatisfy { $0["fromDate"] is Int && $0["toDate"] is Int })
        // 9999-01-01 at UTC midnight.
        #expect(titles.contains { $0["toDate"] as? Int == 253_370_764_800_000 })
    }
}
