import Foundation
import HTTPServer
import HTTPTestClient
import PostgreSQL
import PostgreSQLWebService
import SQLServices
import Testing
import WebService

/// What `?api` and `/openapi.json` say of the read language, what `sql-rest
/// check` reports, and a Swift route built with `ReadArguments`.
extension ReadServicesTests {
    // MARK: - The documents

    @Test("?api and /openapi.json describe the filters, order, or, and and select, with the patterns the server reads")
    func documented() throws {
        let served = try Served()
        let document = try served.get("/openapi.json").object
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let list = try #require(paths["/employees"]?["get"] as? [String: Any])
        let parameters = try #require(list["parameters"] as? [[String: Any]])
        let byName = Dictionary(parameters.map { ($0["name"] as? String ?? "", $0) }, uniquingKeysWith: { first, _ in first })
        for name in ["employeeNumber", "firstName", "lastName", "order", "or", "and", "select", "name", "limit", "offset", "details"] {
            #expect(byName[name] != nil, "\(name)")
        }
        let lastName = try #require(byName["lastName"]?["schema"] as? [String: Any])
        #expect(lastName["pattern"] as? String == Resource.filterPattern(for: .init("lastName", type: .varchar)))
        let lastNameDescription = byName["lastName"]?["description"] as? String
        #expect(lastNameDescription?.contains("lastName (string)") == true, "\(lastNameDescription ?? "no description")")
        // The operators, said once for the operation rather than once per column.
        let description = list["description"] as? String ?? ""
        #expect(description.contains("in.(") && description.contains("`not.`"), "\(description)")
        let repeating = parameters.filter { ($0["description"] as? String ?? "").contains("in.(") }
        #expect(repeating.isEmpty)
        let order = try #require(byName["order"]?["schema"] as? [String: Any])
        let orderPattern = order["pattern"] as? String
        #expect(orderPattern?.contains("lastName") == true, "\(orderPattern ?? "no pattern")")
        let object = try #require(paths["/employees/{employeeNumber}"]?["get"] as? [String: Any])
        let objectNames = (object["parameters"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(objectNames == ["employeeNumber", "details", "select"])
        let patterns = ["lastName", "order", "or", "and", "select"].compactMap {
            (byName[$0]?["schema"] as? [String: Any])?["pattern"] as? String
        }
        #expect(patterns.count == 5)
        for pattern in patterns { #expect((try? Regex(pattern)) != nil, "\(pattern)") }
        let filter = try Regex(try #require(lastName["pattern"] as? String))
        for text in ["eq.Facello", "not.in.(a,\"b,c\")", "is.null", "is.not_null", "ilike.*x*", "in.()", "isdistinct.x"] {
            #expect(text.wholeMatch(of: filter) != nil, "\(text)")
        }
        for text in ["not.is.true", "eq", "in.(\"a)", "eq.a\u{0}", "lte", "fts.x"] {
            #expect(text.wholeMatch(of: filter) == nil, "\(text)")
        }

        // What the server enforces, stated: emp_no is an integer (int4), limit and offset 0 or more.
        let number = try Regex(try #require((byName["employeeNumber"]?["schema"] as? [String: Any])?["pattern"] as? String))
        for text in ["eq.2147483647", "gte.-2147483648", "in.(10001,\"10002\")", "not.is.null", "like.1*"] {
            #expect(text.wholeMatch(of: number) != nil, "\(text)")
            #expect(try served.get("/employees?limit=1&employeeNumber=" + Self.encoded(text)).status == 200, "\(text)")
        }
        for text in ["eq.2147483648", "lt.-2147483649", "eq.x", "in.(1,x)", "is.true"] {
            #expect(text.wholeMatch(of: number) == nil, "\(text)")
            #expect(try served.get("/employees?limit=1&employeeNumber=" + Self.encoded(text)).status == 400, "\(text)")
        }
        let or = try Regex(try #require((byName["or"]?["schema"] as? [String: Any])?["pattern"] as? String))
        for text in ["(employeeNumber.eq.10001,lastName.like.F*)", "(firstName.not.eq.Georgi,lastName.is.null)"] {
            #expect(text.wholeMatch(of: or) != nil, "\(text)")
            #expect(try served.get("/employees?limit=1&or=" + Self.encoded(text)).status == 200, "\(text)")
        }
        // A combining mark after the operator's dot, a quote or a comma hides none of them.
        for text in ["not.ilike.\u{1F3FB}x", "in.(\"Sales\"\u{301},Research)", "eq.\u{301}"] {
            #expect(try served.get("/departments?departmentName=" + Self.encoded(text)).status == 200, "\(text)")
        }
        for name in ["limit", "offset"] {
            #expect((byName[name]?["schema"] as? [String: Any])?["minimum"] as? Int == 0, "\(name)")
        }
        // select may leave out any member: the document requires none.
        let schemas = (document["components"] as? [String: Any])?["schemas"] as? [String: [String: Any]]
        #expect(schemas?["Employee"]?["properties"] != nil)
        #expect(schemas?["Employee"]?["required"] == nil)
        let api = try served.get("/employees?api", [("Accept", "application/json")])
        #expect(api.text.contains("\"pattern\""))
        let page = try served.get("/employees?api").text
        #expect(page.contains("lastName") && page.contains("titles(*)"), "\(page.prefix(300))")
    }

    /// `text` percent-encoded for a query string.
    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    // MARK: - The checks of sql-rest check

    @Test("an unknown label in @filter or @order, a filter on a parameter's name, @filter on an object: FILE:LINE")
    func checks() throws {
        let problems = try Environment.problems([
            "things/list.sql": """
            -- GET /things
            -- @filter deptNo, title
            -- @order name, nope
            SELECT dept_no AS "deptNo", dept_name AS name FROM departments WHERE dept_name <> :name ORDER BY 1
            """,
            "things/one.sql": """
            -- GET /things/{deptNo}
            -- @filter *
            SELECT dept_no AS "deptNo" FROM departments WHERE dept_no = :deptNo
            """,
            "things/star.sql": """
            -- GET /things/star
            -- @returns list
            -- @filter *
            -- @order
            SELECT dept_no AS "deptNo", dept_name AS name FROM departments WHERE dept_name <> :name ORDER BY 1
            """,
        ])
        #expect(
            problems.contains(
                "things/list.sql:2: @filter names \"title\", which is not a column of the result; its columns are deptNo, name"),
            "\(problems)")
        #expect(
            problems.contains(
                "things/list.sql:3: @order names \"nope\", which is not a column of the result; its columns are deptNo, name"),
            "\(problems)")
        #expect(
            problems.contains("things/one.sql:2: @filter and @order choose among the rows of a list; this operation returns an object"),
            "\(problems)")
        #expect(
            problems.contains("things/star.sql:4: @order takes the labels of result columns, comma-separated, or * for all of them"),
            "\(problems)")
        #expect(problems.count == 4, "\(problems)")

        let collision = try Environment.problems([
            "things/list.sql": """
            -- GET /things
            -- @filter name
            SELECT dept_no AS "deptNo", dept_name AS name FROM departments WHERE dept_name <> :name ORDER BY 1
            """
        ])
        #expect(
            collision == [
                "things/list.sql:2: @filter names \"name\", which is also a parameter of the operation (its own parameters win): rename the column or the parameter"
            ])
        // An example that embeds is checked against the folder's relationships.
        let embeds = try Environment.problems([
            "people/list.sql": """
            -- GET /people
            -- @example select lastName,titles(title)
            SELECT emp_no AS "employeeNumber", last_name AS "lastName" FROM employees ORDER BY emp_no
            """,
            "people/one.sql": """
            -- GET /people/{employeeNumber}
            -- @example select lastName,bonus(*)
            SELECT emp_no AS "employeeNumber", last_name AS "lastName" FROM employees WHERE emp_no = :employeeNumber
            """,
        ])
        #expect(
            embeds == [
                #"people/one.sql:2: the value of @example select, "lastName,bonus(*)", is refused: Could not find a relationship between 'people' and 'bonus' in the schema cache"#
            ])
    }

    @Test("a statement that labels its columns by unquoted aliases with capitals reads as labelled")
    func unquotedAliases() throws {
        let folder = try Environment.folder([
            "people/list.sql": """
            -- GET /people
            -- @filter *
            -- @order *
            SELECT emp_no AS employeeNumber, last_name AS lastName FROM employees WHERE emp_no < 10010 ORDER BY emp_no
            -- @detail titles
            SELECT title AS jobTitle FROM titles WHERE emp_no = :employeeNumber ORDER BY from_date
            """
        ])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let served = try Served(folder)
        let answer = try served.get(
            "/people?select=lastName,titles(jobTitle)&employeeNumber=lt.10003&order=lastName&titles.jobTitle=like.S*")
        #expect(answer.status == 200, "\(answer)")
        #expect(answer.text.hasPrefix(#"[{"lastName":"#) && answer.text.contains(#""titles":[{"jobTitle":"S"#), "\(answer.text)")
        #expect(try served.get("/people?details=titles&limit=1").text.contains(#""titles":[{"jobTitle":"#))
    }

    // MARK: - A Swift route

    struct Summaries: WebService {
        let path = "/summaries"
        let description = "Employee summaries."
        static let sql =
            #"SELECT emp_no AS "employeeNumber", last_name AS "lastName", hire_date AS "hireDate" FROM employees ORDER BY emp_no"#
        static let graph = ResourceGraph([
            Resource(
                name: "summaries", sql: sql,
                columns: [
                    .init("employeeNumber", type: .int4), .init("lastName", type: .varchar),
                    .init("hireDate", type: .date, isFilterable: false, isOrderable: true),
                ])
        ])

        var routes: [Route] {
            Route(.get, "/", description: "Employees, filtered as the caller asks.", ReadArguments(graph: Self.graph, resource: 0)) {
                read in
                Query.list(Self.sql).paged(limit: 3).reading(read)
            }
        }
    }

    @Test("a Swift route with ReadArguments answers as a file does")
    func swiftRoute() throws {
        let pool = ConnectionPool(.init(conninfo: try Environment.conninfo(), size: 2))
        defer { pool.close() }
        let server = try Environment.serve([Summaries()], pool: pool)
        defer { server.stop() }
        let answer = try TestClient.request(
            "GET", "/summaries?lastName=eq.Facello&order=hireDate.desc&select=employeeNumber", port: server.port)
        #expect(answer.status == 200)
        let expected = try pool.withConnection { connection in
            try connection.fetchAll(Int.self, "SELECT emp_no FROM employees WHERE last_name = 'Facello' ORDER BY hire_date DESC LIMIT 3")
        }
        #expect(answer.text == "[" + expected.map { "{\"employeeNumber\":\($0)}" }.joined(separator: ",") + "]")
        #expect(try TestClient.request("GET", "/summaries?hireDate=eq.1990-01-01", port: server.port).status == 400)
        #expect(try TestClient.request("GET", "/summaries?employeeNumber=eq.x", port: server.port).status == 400)
        let api = try TestClient.request("GET", "/summaries?api", port: server.port, headers: [("Accept", "application/json")])
        #expect(api.text.contains(#""name":"lastName""#) && !api.text.contains(#""name":"hireDate""#), "\(api.text.prefix(400))")
    }
}
