import Foundation
import HTTPTestClient
import PostgreSQL
import Testing

/// `GET /employees?name=...`: HTTP-RPC's search, paging and nesting,
/// compared with the database's own answers.
@Suite("GET /employees (search and listing)")
struct EmployeeSearchAPITests {
    let server: TestServer

    init() throws {
        server = try TestServer.shared()
    }

    static let summaryKeys = ["employeeNumber", "firstName", "lastName"]

    /// The database's answer for an ILIKE pattern on first or last name.
    static func expected(_ likePattern: String, limit: Int? = nil, offset: Int = 0) throws -> [[String?]] {
        try TestEnvironment.rows(
            """
            SELECT emp_no, first_name, last_name FROM employees
            WHERE first_name ILIKE :pattern OR last_name ILIKE :pattern
            ORDER BY emp_no LIMIT :limit OFFSET :offset
            """, ["pattern": likePattern, "limit": limit, "offset": offset])
    }

    func search(_ query: String) throws -> TestClient.Response {
        let reply = try server.get("/employees?\(query)")
        #expect(reply.status == 200, "\(query): \(reply)")
        #expect(reply.header("Content-Type") == "application/json; charset=utf-8")
        return reply
    }

    // MARK: - Patterns

    @Test("bal* matches first or last names case-insensitively, ordered by number")
    func prefix() throws {
        let found = JSONReader.table(try search("name=bal*").objects, Self.summaryKeys)
        let expected = try Self.expected("bal%")
        #expect(found.count == expected.count)
        #expect(found == expected)
        #expect(found.count > 100)
        #expect(found.contains { ($0[1] ?? "").lowercased().hasPrefix("bal") })
        #expect(found.contains { ($0[2] ?? "").lowercased().hasPrefix("bal") })
        let numbers = found.compactMap { Int($0[0] ?? "") }
        #expect(numbers == numbers.sorted())
        #expect(try search("name=BaL*").text == (try search("name=bal*").text))
    }

    @Test("*son matches names ending in son; a name without * matches whole names only")
    func suffixAndExact() throws {
        #expect(JSONReader.table(try search("name=*son").objects, Self.summaryKeys) == (try Self.expected("%son")))
        let lastName = try #require(try TestEnvironment.rows("SELECT last_name FROM employees WHERE emp_no = 10004").first?.first ?? nil)
        #expect(
            JSONReader.table(try search("name=\(lastName.uppercased())").objects, Self.summaryKeys)
                == (try Self.expected(lastName)))
    }

    @Test("% and _ in a name match themselves, not any characters")
    func likeMetacharactersAreLiteral() throws {
        #expect(try Self.expected("b_l%").count > 0, "the database has names that b_l% would match as a LIKE pattern")
        #expect(try search("name=b_l*").objects.isEmpty)
        #expect(try search("name=%25son").objects.isEmpty)
        #expect(try search("name=%25").objects.isEmpty)
        #expect(try search("name=_*").objects.isEmpty)
        #expect(try search("name=%5C*").objects.isEmpty)
        #expect(try search("name=").objects.isEmpty)
        #expect(try search("name=*&offset=300020").objects.count == 4)
    }

    // MARK: - Paging

    @Test("limit and offset page through the matches")
    func paging() throws {
        #expect(
            JSONReader.table(try search("name=bal*&limit=10&offset=5").objects, Self.summaryKeys)
                == (try Self.expected("bal%", limit: 10, offset: 5)))
        #expect(try search("name=bal*&limit=10&offset=5").objects.count == 10)
        #expect(try search("limit=0").text == "[]")
        #expect(
            JSONReader.table(try search("name=bal*&limit=9223372036854775807").objects, Self.summaryKeys)
                == (try Self.expected("bal%")))
        #expect(try search("offset=9223372036854775807").text == "[]")
        #expect(try search("name=bal*&offset=1000000").text == "[]")
        let firstThree = try search("limit=3").objects.compactMap { $0["employeeNumber"] as? Int }
        #expect(firstThree == [10001, 10002, 10003])
        let afterTwo = try search("limit=2&offset=300020").objects.compactMap { $0["employeeNumber"] as? Int }
        #expect(
            afterTwo
                == (try TestEnvironment.rows("SELECT emp_no FROM employees ORDER BY emp_no LIMIT 2 OFFSET 300020"))
                .compactMap { Int($0[0] ?? "") })
    }

    @Test(
        "negative limit or offset is 400 naming the parameter",
        arguments: [
            ("limit=-1", "limit"), ("offset=-1", "offset"), ("name=bal*&limit=-5&offset=0", "limit"),
            ("limit=ten", "limit"), ("offset=1e3", "offset"),
        ])
    func badPaging(query: String, parameter: String) throws {
        let reply = try server.get("/employees?\(query)")
        #expect(reply.status == 400)
        #expect(reply.header("Content-Type") == "application/problem+json")
        #expect(reply.object["parameter"] as? String == parameter)
    }

    // MARK: - Nesting

    @Test("details=titles on a search nests the titles of every employee")
    func nestedTitles() throws {
        let employees = try search("name=bal*&limit=25&details=titles").objects
        #expect(employees.count == 25)
        let numbers = employees.compactMap { $0["employeeNumber"] as? Int }
        let rows = try TestEnvironment.rows(
            """
            SELECT emp_no, title, from_date::text, to_date::text FROM titles
            WHERE emp_no = ANY (string_to_array(:numbers, ',')::int[]) ORDER BY emp_no, from_date, title
            """, ["numbers": numbers.map(String.init).joined(separator: ",")])
        for employee in employees {
            let number = try #require(employee["employeeNumber"] as? Int)
            let titles = try #require(employee["titles"] as? [[String: Any]], "employee \(number)")
            #expect(!titles.isEmpty)
            let expected = rows.filter { $0[0] == String(number) }.map { Array($0.dropFirst()) }
            #expect(JSONReader.table(titles, ["title", "fromDate", "toDate"]) == expected, "employee \(number)")
            #expect(employee["salaries"] == nil)
        }
    }

    @Test("all three details on a page of the listing")
    func allDetailsOnAPage() throws {
        let employees = try search("details=titles,salaries,departments&limit=50&offset=100").objects
        #expect(employees.count == 50)
        #expect(
            employees.allSatisfy {
                $0["titles"] is [[String: Any]] && $0["salaries"] is [[String: Any]] && $0["departments"] is [[String: Any]]
            })
        let salaryCount = employees.reduce(0) { $0 + (($1["salaries"] as? [Any])?.count ?? 0) }
        #expect(
            salaryCount
                == (try TestEnvironment.integer(
                    """
                    SELECT count(*) FROM salaries WHERE emp_no IN (SELECT emp_no FROM employees ORDER BY emp_no LIMIT 50 OFFSET 100)
                    """)))
    }

    // MARK: - Everything

    @Test("the element-by-element array check accepts arrays and rejects cut or malformed ones")
    func arrayCheck() throws {
        var seen: [String] = []
        try JSONReader.forEachElement(ofArray: Array(#" [{"a":"x,]}"},{"b":[1,{"c":2}]}, 3 ,"q\"]"] "#.utf8)) {
            seen.append("\($0)".filter { !$0.isWhitespace })
        }
        #expect(seen.count == 4)
        try JSONReader.forEachElement(ofArray: Array("[]".utf8)) { _ in Issue.record("no elements expected") }
        for bad in [#"[{"a":1}"#, #"[{"a":1},"#, #"{"a":1}"#, #"[{"a":1}]x"#, #"[{"a":}]"#, ""] {
            #expect(throws: (any Error).self, "\(bad)") { try JSONReader.forEachElement(ofArray: Array(bad.utf8)) { _ in } }
        }
    }

    @Test("GET /employees streams exactly 300,024 valid JSON objects, 10001 to 310024")
    func fullListing() throws {
        let reply = try TestClient.request("GET", "/employees", port: server.port)
        #expect(reply.status == 200)
        #expect(reply.header("Transfer-Encoding")?.lowercased() == "chunked", "streamed, not buffered")
        var count = 0
        var first: Int?
        var previous = 0
        var ordered = true
        var wellFormed = true
        try JSONReader.forEachElement(ofArray: reply.body) { element in
            let employee = element as? [String: Any] ?? [:]
            let number = employee["employeeNumber"] as? Int ?? 0
            if employee.count != 3 || employee["firstName"] as? String == nil || employee["lastName"] as? String == nil {
                wellFormed = false
            }
            if number <= previous { ordered = false }
            first = first ?? number
            previous = number
            count += 1
        }
        #expect(count == 300_024)
        #expect(count == (try TestEnvironment.integer("SELECT count(*) FROM employees")))
        #expect(first == 10001)
        #expect(previous == 310_024)
        #expect(wellFormed)
        #expect(ordered)
    }
}
