import Foundation
import HTTPServer
import HTTPTestClient
import PostgreSQL
@testable import PostgreSQLWebService
import SQLServices
import Testing
import WebService

/// PostgREST's read language on the repository's `services/` (`@filter *`,
/// `@order *`) and on files of the tests' own, against the sample
/// database: the operators, the problems, `order` and `select` with the
/// files' own parameters, details, paging, counts, CSV and ETags, the
/// request's role, the plan, and names and values that try to reach SQL.
@Suite("The read language on services/", .serialized)
struct ReadServicesTests {
    /// A server of `services/`, with a pool for the checks' own queries.
    final class Served {
        let pool: ConnectionPool
        let server: HTTPServer
        var port: Int { server.port }

        init(_ folder: String = Environment.servicesFolder) throws {
            pool = ConnectionPool(.init(conninfo: try Environment.conninfo(), size: 4))
            server = try Environment.serve(try Environment.load(folder, pool: pool).services, pool: pool)
        }

        func get(_ target: String, _ headers: [(String, String)] = []) throws -> TestClient.Response {
            try TestClient.request("GET", target, port: port, headers: headers)
        }

        /// The numbers of the employees a list answered.
        func numbers(_ target: String) throws -> [Int] {
            let response = try get(target)
            #expect(response.status == 200, "\(target): \(response)")
            return response.objects.compactMap { $0["employeeNumber"] as? Int }
        }

        /// The first and last name of employee `number`.
        func names(_ number: Int) throws -> (first: String, last: String) {
            try pool.withConnection { connection in
                let rows = try connection.query("SELECT first_name, last_name FROM employees WHERE emp_no = \(number)")
                let row = try #require(try rows.next())
                return (row[0] ?? "", row[1] ?? "")
            }
        }

        func count(_ sql: String) throws -> Int {
            try pool.withConnection { try $0.fetchOne(Int.self, sql) ?? -1 }
        }

        deinit {
            server.stop()
            pool.close()
        }
    }

    // MARK: - Operators

    @Test("eq, neq, gt, gte, lt, lte, like, ilike, in, is, not. and or on the files' lists, beside their own parameters")
    func operators() throws {
        let served = try Served()
        let facellos = try served.count("SELECT count(*) FROM employees WHERE last_name = 'Facello'")
        #expect(facellos > 0)
        let facello = try served.get("/employees?lastName=eq.Facello")
        #expect(facello.objects.count == facellos)
        #expect(facello.objects.allSatisfy { $0["lastName"] as? String == "Facello" })

        #expect(try served.numbers("/employees?employeeNumber=gt.10005&employeeNumber=lte.10008") == [10006, 10007, 10008])
        #expect(try served.numbers("/employees?emp_no=gte.10005&emp_no=lt.10007") == [10005, 10006])
        #expect(try served.numbers("/employees?employeeNumber=lt.10004") == [10001, 10002, 10003])
        #expect(try served.numbers("/employees?employeeNumber=in.(10003,10001,99)") == [10001, 10003])
        #expect(try served.numbers("/employees?employeeNumber=not.gt.10002&employeeNumber=neq.10001") == [10002])
        #expect(
            try served.numbers("/employees?or=(employeeNumber.eq.10009,and(employeeNumber.lt.10003,lastName.neq.x))") == [
                10001, 10002, 10009,
            ])

        let departments = { (query: String) throws -> [String] in
            let response = try served.get("/departments?" + query)
            #expect(response.status == 200, "\(query): \(response)")
            return response.objects.compactMap { $0["departmentNumber"] as? String }
        }
        #expect(try departments("departmentNumber=neq.d001").count == 8)
        #expect(try departments("departmentNumber=not.eq.d001").count == 8)
        #expect(try departments("departmentNumber=in.(d001,d003,\"d005\")") == ["d001", "d003", "d005"])
        #expect(try departments("departmentNumber=not.in.(d001,d002)").count == 7)
        #expect(try departments("departmentName=in.(\"Sales\",Research,\"Human%20Resources\")") == ["d003", "d007", "d008"])
        #expect(try departments("departmentName=in.(\"Sales,Research\")") == [])
        #expect(try departments("departmentName=like.*Resea*") == ["d008"])
        #expect(try departments("departmentName=like.*resea*") == [])
        #expect(try departments("departmentName=ilike.*RESEA*") == ["d008"])
        #expect(try departments("dept_name=not.ilike.*e*").isEmpty == false)
        #expect(try departments("departmentName=is.null") == [])
        #expect(try departments("departmentName=not.is.null").count == 9)
        #expect(try departments("departmentNumber=gte.d008") == ["d008", "d009"])
        #expect(try departments("departmentNumber=lte.d002&departmentName=eq.Finance") == ["d002"])
        #expect(try departments("limit=2&offset=1") == ["d002", "d003"], "a list that does not page takes the read language's page")

        let likes = try served.get("/employees?lastName=like.Facel*&firstName=ilike.g*&limit=50")
        #expect(likes.status == 200)
        #expect(!likes.objects.isEmpty)
        #expect(
            likes.objects.allSatisfy {
                ($0["lastName"] as? String ?? "").hasPrefix("Facel") && ($0["firstName"] as? String ?? "").lowercased().hasPrefix("g")
            })
        // Combined with the file's own parameter.
        let (first, last) = try served.names(10001)
        let named = try served.numbers("/employees?name=\(last.lowercased())&firstName=eq.\(first)")
        #expect(named.contains(10001))
        #expect(
            named.count
                == (try served.count("SELECT count(*) FROM employees WHERE lower(last_name) = lower('\(last)') AND first_name = '\(first)'"))
        )
    }

    @Test("is.true, is.false, is.unknown on a boolean column; is.true elsewhere is a 400 naming the column")
    func booleans() throws {
        let folder = try Environment.folder([
            "flags/list.sql": """
            -- GET /flags
            -- @filter *
            SELECT emp_no AS "employeeNumber", gender = 'F' AS female, NULLIF(emp_no % 3, 0) AS rest
            FROM employees WHERE emp_no <= 10010 ORDER BY emp_no
            """
        ])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let served = try Served(folder)
        let women = try served.count("SELECT count(*) FROM employees WHERE emp_no <= 10010 AND gender = 'F'")
        #expect(try served.get("/flags?female=is.true").objects.count == women)
        #expect(try served.get("/flags?female=is.false").objects.count == 10 - women)
        #expect(try served.get("/flags?female=not.is.true").objects.count == 10 - women)
        #expect(try served.get("/flags?female=is.unknown").objects.isEmpty)
        #expect(try served.get("/flags?female=eq.true").objects.count == women)
        #expect(try served.get("/flags?rest=is.null").objects.count == 3)
        #expect(try served.get("/flags?rest=not.is.null").objects.count == 7)
        let wrong = try served.get("/flags?rest=is.true")
        #expect(wrong.status == 400)
        #expect(wrong.object["parameter"] as? String == "rest")
        #expect(try served.get("/flags?female=is.maybe").status == 400)
        // No @order: no order.
        let order = try served.get("/flags?order=rest")
        #expect(order.status == 400)
        #expect(order.object["parameter"] as? String == "order")
    }

    // MARK: - Problems

    @Test("a value not of the column's type, an unknown column, operator, order or member: 400 naming it")
    func errors() throws {
        let served = try Served()
        let typed = try served.get("/employees?employeeNumber=eq.abc")
        #expect(typed.status == 400)
        #expect(typed.object["parameter"] as? String == "employeeNumber")
        #expect((typed.object["detail"] as? String ?? "").contains("integer"), "\(typed)")
        #expect(try served.get("/employees?employeeNumber=in.(10001,x)").status == 400)
        #expect(try served.get("/employees?employeeNumber=in.10001").status == 400)
        #expect(try served.get("/employees?employeeNumber=eq.99999999999").status == 400)

        let columns = ["employeeNumber", "firstName", "lastName"]
        let column = try served.get("/employees?salary=eq.1")
        #expect(column.status == 400)
        #expect(column.object["parameter"] as? String == "salary")
        #expect(column.object["code"] as? String == "42703")
        #expect(column.object["allowedValues"] as? [String] == columns, "\(column)")

        let operation = try served.get("/employees?lastName=like")
        #expect(operation.status == 400)
        #expect(operation.object["parameter"] as? String == "lastName")
        #expect(operation.object["code"] as? String == "PGRST100")
        #expect(try served.get("/employees?lastName=equals.Facello").status == 400)
        #expect(try served.get("/employees?lastName=Facello").status == 400)

        let order = try served.get("/employees?order=salary.desc")
        #expect(order.status == 400)
        #expect(order.object["parameter"] as? String == "order")
        #expect(order.object["allowedValues"] as? [String] == columns)
        #expect(try served.get("/employees?order=lastName.up").status == 400)
        #expect(try served.get("/employees?order=lastName.desc.nullsmiddle").status == 400)

        let select = try served.get("/employees?select=lastName,salary")
        #expect(select.status == 400)
        #expect(select.object["parameter"] as? String == "select")
        #expect(select.object["allowedValues"] as? [String] == columns)
        #expect(try served.get("/employees/10004?select=salary").status == 400)
        // A file without @filter takes no filter; its objects take select and embeds only.
        let filtered = try served.get("/employees/10004?lastName=eq.Koblick")
        #expect(filtered.status == 400)
        #expect(filtered.object["allowedValues"] as? [String] == [], "\(filtered)")
        #expect(try served.get("/employees/10004?order=lastName").status == 400)
        #expect(try served.get("/employees/10004?titles.title=eq.Staff&select=*,titles(*)").status == 200)
    }

    // MARK: - Order, select, details

    @Test("order replaces the file's own; nullsfirst and nullslast; an embedded list's order")
    func order() throws {
        let served = try Served()
        let expected = try served.pool.withConnection { connection in
            try connection.fetchAll(
                Int.self, "SELECT emp_no FROM employees WHERE emp_no < 10100 ORDER BY last_name DESC, emp_no ASC LIMIT 7")
        }
        #expect(try served.numbers("/employees?employeeNumber=lt.10100&order=lastName.desc,employeeNumber.asc&limit=7") == expected)
        #expect(try served.numbers("/employees?employeeNumber=lt.10004&order=employeeNumber.desc.nullslast") == [10003, 10002, 10001])
        #expect(try served.numbers("/employees?employeeNumber=lt.10004&order=employeeNumber.nullsfirst") == [10001, 10002, 10003])
        #expect(try served.numbers("/employees?employeeNumber=lt.10004") == [10001, 10002, 10003])
        let departments = try served.get("/departments?order=departmentName").objects.compactMap { $0["departmentName"] as? String }
        #expect(departments == departments.sorted())
        #expect(departments.count == 9)
        let salaries = try served.get("/employees/10001?select=salaries(salary)&salaries.order=salary.desc&salaries.limit=3")
        let amounts = (salaries.object["salaries"] as? [[String: Any]] ?? []).compactMap { $0["salary"] as? Int }
        #expect(amounts.count == 3 && amounts == amounts.sorted(by: >), "\(salaries.text)")
    }

    @Test("select: only those members, in that order, on lists and objects; details still bind")
    func select() throws {
        let served = try Served()
        let list = try served.get("/employees?select=lastName,employeeNumber&limit=2")
        let (_, last1) = try served.names(10001)
        let (_, last2) = try served.names(10002)
        #expect(list.text == #"[{"lastName":"\#(last1)","employeeNumber":10001},{"lastName":"\#(last2)","employeeNumber":10002}]"#)
        #expect(try served.get("/employees?select=*&limit=2").text == served.get("/employees?limit=2").text)
        let object = try served.get("/employees/10004?select=hireDate,lastName")
        let hired = try served.pool.withConnection {
            try $0.fetchOne(String.self, "SELECT hire_date::text FROM employees WHERE emp_no = 10004")
        }
        #expect(object.text == #"{"hireDate":"\#(hired ?? "")","lastName":"\#(try served.names(10004).last)"}"#)
        #expect(try served.get("/departments/d005?select=departmentName").text == #"{"departmentName":"Development"}"#)

        // Details bind from the employee's number, which select leaves out.
        let detailed = try served.get("/employees/10004?select=lastName&details=titles")
        #expect(detailed.status == 200)
        #expect(Array(detailed.object.keys).sorted() == ["lastName", "titles"])
        #expect((detailed.object["titles"] as? [Any])?.isEmpty == false)
        let rows = try served.get("/employees?select=firstName&details=titles,salaries&limit=3&employeeNumber=gte.10010")
        #expect(rows.status == 200)
        #expect(rows.objects.count == 3)
        for row in rows.objects {
            #expect(Array(row.keys).sorted() == ["firstName", "salaries", "titles"])
            #expect((row["salaries"] as? [Any])?.isEmpty == false)
        }
        #expect(
            try served.get("/employees?select=firstName,titles(*),salaries(*)&limit=3&employeeNumber=gte.10010").text == rows.text)
        // A streamed member, with select and an embedded detail.
        let department = try served.get("/departments/d001?select=departmentName,managers(lastName)&details=employees")
        #expect(department.status == 200)
        #expect(department.text.hasPrefix(#"{"departmentName":"Marketing","managers":[{"lastName":"#), "\(department.text)")
        #expect((department.object["employees"] as? [Any])?.isEmpty == false)
        // An embedded table the folder has no file for, by its foreign key, and its own relationships.
        let table = try served.get("/departments?select=departmentNumber,dept_manager(from_date,employees(lastName))&limit=1")
        #expect(table.status == 200, "\(table)")
        #expect(table.text.hasPrefix(#"[{"departmentNumber":"d001","dept_manager":[{"fromDate":"#), "\(table.text)")
    }

    @Test("pages and counts of filtered rows; Link keeps the filters; CSV of the selected members; ETag; HEAD")
    func composes() throws {
        let served = try Served()
        let total = try served.count("SELECT count(*) FROM employees WHERE last_name = 'Facello'")
        let page = try served.get("/employees?lastName=eq.Facello&limit=5&offset=5", [("Prefer", "count=exact")])
        #expect(page.status == 206)
        #expect(page.objects.count == 5)
        #expect(page.header("Content-Range") == "5-9/\(total)")
        #expect(page.header("Link")?.contains("lastName=eq.Facello&limit=5&offset=10") == true, "\(page.headers)")
        let last = try served.get("/employees?lastName=eq.Facello&limit=5&offset=\(total - 2)", [("Prefer", "count=exact")])
        #expect(last.objects.count == 2)
        #expect(last.header("Content-Range") == "\(total - 2)-\(total - 1)/\(total)")

        let csv = try served.get("/employees?lastName=eq.Facello&select=lastName,employeeNumber&limit=2", [("Accept", "text/csv")])
        #expect(csv.status == 200)
        let firstFacello = try served.count("SELECT min(emp_no) FROM employees WHERE last_name = 'Facello'")
        #expect(csv.text.hasPrefix("lastName,employeeNumber\r\nFacello,\(firstFacello)\r\n"), "\(csv)")
        #expect(csv.text.split(separator: "\r\n").count == 3)
        #expect(try served.get("/employees?select=*,titles(*)&limit=2", [("Accept", "text/csv")]).status == 406)

        let object = try served.get("/employees/10004?select=lastName")
        let tag = try #require(object.header("ETag"))
        #expect(try served.get("/employees/10004?select=lastName", [("If-None-Match", tag)]).status == 304)
        #expect(try served.get("/employees/10004", [("If-None-Match", tag)]).status == 200)
        let head = try TestClient.request("HEAD", "/employees?lastName=eq.Facello&limit=2", port: served.port)
        #expect(head.status == 200)
    }

    @Test("as the request's role: its grants decide, for the rows, the count, the object and what it embeds")
    func roles() throws {
        let postgres = try Connection(try Environment.conninfo(user: "postgres"))
        defer { postgres.close() }
        for role in ["filter_test_stranger", "filter_test_reader"] {
            try postgres.execute(
                """
                DO $$ BEGIN
                    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '\(role)') THEN CREATE ROLE \(role); END IF;
                END $$
                """)
            try postgres.execute("GRANT \(role) TO employees_reader")
        }
        try postgres.execute("GRANT SELECT ON employees TO filter_test_reader")
        let count = try Served().count("SELECT count(*) FROM employees WHERE last_name = 'Facello'")

        let stranger = try ProcessTests.start([
            "serve", "--services", Environment.servicesFolder, "--port", "0", "--anonymous-role", "filter_test_stranger",
        ])
        let strangerPort = try stranger.servingPort()
        let refused: [(String, [(String, String)])] = [
            ("/employees?lastName=eq.Facello&select=lastName", []), ("/employees?lastName=eq.Facello&limit=1", [("Prefer", "count=exact")]),
            ("/employees/10004?select=lastName", []),
        ]
        for (target, headers) in refused {
            #expect(try TestClient.request("GET", target, port: strangerPort, headers: headers).status == 403, "\(target)")
        }

        let reader = try ProcessTests.start([
            "serve", "--services", Environment.servicesFolder, "--port", "0", "--anonymous-role", "filter_test_reader",
        ])
        let readerPort = try reader.servingPort()
        let page = try TestClient.request(
            "GET", "/employees?lastName=eq.Facello&order=employeeNumber.desc&limit=3", port: readerPort,
            headers: [("Prefer", "count=exact")])
        #expect(page.status == 206, "\(page)")
        #expect(page.header("Content-Range") == "0-2/\(count)")
        let numbers = page.objects.compactMap { $0["employeeNumber"] as? Int }
        #expect(numbers == numbers.sorted(by: >) && numbers.count == 3)
        // The titles table is not the reader's: embedding it is refused.
        let embedded = try TestClient.request("GET", "/employees?select=*,titles(*)&limit=1", port: readerPort)
        #expect(embedded.status == 403, "\(embedded)")
    }

    // MARK: - The plan

    @Test("a filter on an indexed column of a file's statement uses the index")
    func usesTheIndex() throws {
        let served = try Served()
        let sql = try String(contentsOfFile: Environment.servicesFolder + "/employees/list.sql", encoding: .utf8)
        let start = try #require(sql.range(of: "SELECT e.emp_no"))
        let statement = String(sql[start.lowerBound...].prefix { $0 != ";" })
        let resource = Resource(
            name: "employees", sql: statement,
            columns: [.init("employeeNumber", type: .int4), .init("firstName", type: .varchar), .init("lastName", type: .varchar)])
        let request = try ReadRequest(
            graph: ResourceGraph([resource]), resource: 0, arguments: [("employeeNumber", ["eq.10004"]), ("order", ["lastName.desc"])])
        let query = try Query.list(statement, ["name": nil]).reading(request).resolvingChoices()
        #expect(query.sql.contains(#""t0"."employeeNumber" = :readValue1"#), "\(query.sql)")
        let plan = try served.pool.withConnection { connection in
            var lines: [String] = []
            let rows = try connection.query("EXPLAIN " + query.sql, query.arguments)
            while let row = try rows.next() { lines.append(row[0] ?? "") }
            return lines.joined(separator: "\n")
        }
        #expect(plan.contains("employees_pkey"), "\(plan)")
        #expect(!plan.contains("Seq Scan on employees"), "\(plan)")
    }

    // MARK: - Injection

    @Test("nothing a caller sends is spliced into SQL: names, values, paths, casts and configurations that try")
    func injection() throws {
        let served = try Served()
        let hostile = [
            "/employees?lastName=eq.%27%20OR%201%3D1%20--", "/employees?lastName=like.%25%27%20OR%20%271%27%3D%271",
            "/employees?lastName=in.(%22x%27)%20OR%20true%20--%22,%22a%22%22b%22)",
            "/employees?lastName=eq.Facello%3B%20DROP%20TABLE%20employees",
            "/employees?lastName=ilike.%22%3B--", "/employees?or=(lastName.eq.%22%27)%20OR%20(%271%27=%271%22)",
            "/employees?select=*,titles(*)&titles.title=eq.%27%3B%20DROP%20TABLE%20titles%3B--&employeeNumber=eq.1",
        ]
        for target in hostile {
            let response = try served.get(target)
            #expect(response.status == 200, "\(target): \(response)")
            #expect(response.objects.isEmpty, "\(target)")
        }
        let refused = [
            "/employees?lastName%22%3B%20DROP%20TABLE%20employees%3B--=eq.1", "/employees?order=lastName%3B%20DROP%20TABLE%20employees",
            "/employees?order=lastName.desc%2C(SELECT%201)", "/employees?select=lastName,%22x%22",
            "/employees?select=lastName%20FROM%20employees%3B--", "/employees?employeeNumber=eq.1%20OR%201%3D1",
            "/employees?employeeNumber=in.(1)%20OR%20(1", "/employees?lastName=not.not.eq.x", "/employees?lastName=is.null%20OR%201=1",
            "/employees?select=lastName::text%20FROM%20employees%3B--", "/employees?select=lastName::int);%20DROP%20TABLE%20employees;--",
            "/employees?lastName=fts(english%27)%3B%20DROP%20TABLE%20employees%3B--).x",
            "/employees?select=*,titles%22%3B--(*)", "/employees?select=*,titles!%22x%22%22(*)",
            "/employees?%22lastName%22%22%3B--=eq.x", "/employees?lastName=in.(x%27)%20OR%20true%20--,%22a%22%22b%22)",
            "/employees?or=(lastName.eq.%27)%20OR%20(%271%27=%271)",
        ]
        for target in refused {
            let response = try served.get(target)
            #expect(response.status == 400, "\(target): \(response)")
        }
        // A quoted name is a name, and a JSON key a bound value.
        #expect(try served.get("/employees?order=%22lastName%22&limit=1").status == 200)
        #expect(try served.get("/employees?select=lastName-%3E%3E%27%3B%20DROP%20TABLE%20employees%3B--&limit=1").status == 200)
        #expect(try served.count("SELECT count(*) FROM employees") == 300_024)
        #expect(try served.count("SELECT count(*) FROM titles") > 0)
    }
}
