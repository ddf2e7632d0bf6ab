import EmployeesService
import Foundation
import HTTPServer
import HTTPTestClient
import PostgreSQL
import SQLServices
import Testing

/// The repository's `services/` folder answers exactly as the Swift
/// `EmployeesService` and `DepartmentsService` do: the same requests to
/// both, on the same pool, give the same status, the same body byte for
/// byte, and the same header fields.
@Suite("services/ answers as the Swift services do")
struct EquivalenceTests {
    /// The header fields compared, besides the status and the body.
    static let comparedFields = ["Content-Type", "Link", "Content-Range", "Allow", "Location", "Retry-After", "ETag", "Vary"]

    /// Every request sent to both: objects, every order of every set of
    /// details, searches, filters, orders and members chosen, embedded
    /// details with their own filters, order and pages, `or` and `and`,
    /// pages, counts, CSV, and every error case.
    static var requests: [(method: String, target: String, headers: [(String, String)])] {
        var targets: [String] = []
        // Objects, and every ordered choice of details.
        for number in [10001, 10002, 10003, 10004, 10005, 10010, 10100, 10999, 25000, 50000, 100000, 250000, 310024, 499999] {
            targets.append("/employees/\(number)")
            targets.append("/employees/\(number)?details=titles,salaries,departments")
        }
        let details = ["titles", "salaries", "departments"]
        var orders: [[String]] = [[]]
        for _ in details {
            orders += orders.flatMap { order in details.filter { !order.contains($0) }.map { order + [$0] } }
        }
        for order in Set(orders.map { $0.joined(separator: ",") }).sorted() where !order.isEmpty {
            targets.append("/employees/10004?details=\(order)")
            targets.append("/employees?name=krohm*&limit=2&details=\(order)")
        }
        targets += [
            "/employees/10004?details=titles&details=salaries", "/employees/10004?details=titles,titles",
            "/employees/10004?details=%20titles%20,salaries", "/employees/10004?details=", "/employees/10004?details=titles,,salaries",
            "/employees/10004?details=bonus", "/employees/10004?details=titles,bonus", "/employees/10004?details=TITLES",
            "/employees?details=bonus", "/employees?details=titles&limit=3&offset=5",
        ]
        // Numbers that are not employees, and texts that are not numbers.
        for text in [
            "9999", "1", "0", "-5", "2147483648", "99999999999", "9223372036854775807", "9223372036854775808",
            "99999999999999999999", "abc", "10004.5", "+10004", "010004", "1e3", "%31%30%30%30%34", "%20", "0x10",
        ] {
            targets.append("/employees/\(text)")
        }
        // Searches: wildcards, characters LIKE would read as its own, case, accents, nothing.
        // (Patterns with a fixed start or a trigram use an index; `""` alone scans the table.)
        for pattern in [
            "bal*", "*son", "Bal*", "BAL*", "krohm*", "b_l*", "b%25l*", "%25*", "_*", "%5C*", "*", "**", "", "a*b*",
            "*a*", "x*", "%C3%B6*", "geo*", "*ill*", "kr*m*", "nobody*", "'*", "%27%20OR%201%3D1*", "*%25*", "*_*",
        ] {
            targets.append("/employees?name=\(pattern)&limit=20")
        }
        targets += ["/employees?name=bal*", "/employees?name=a&name=b", "/employees?name=bal*&limit=3&offset=6"]
        // Pages.
        for query in [
            "limit=0", "limit=5", "limit=5&offset=10", "offset=300020", "limit=10&offset=300020", "limit=3&offset=400000",
            "limit=-1", "offset=-3", "limit=-1&offset=-3", "limit=abc", "offset=1.5", "limit=", "offset=",
            "limit=1&limit=2", "limit=99999999999999999999", "offset=5&limit=2", "name=krohm*&limit=4&offset=2",
        ] {
            targets.append("/employees?\(query)")
        }
        // Departments.
        targets.append("/departments")
        for number in ["d001", "d002", "d003", "d004", "d005", "d006", "d007", "d008", "d009"] {
            targets.append("/departments/\(number)")
            targets.append("/departments/\(number)?details=managers")
        }
        targets += [
            "/departments/d009?details=employees", "/departments/d002?details=managers,employees",
            "/departments/d002?details=employees,managers", "/departments/d002?details=employees&details=managers",
            "/departments/d999", "/departments/d999?details=managers", "/departments/D005", "/departments/d00",
            "/departments/d0055", "/departments/%20", "/departments/d005?details=titles", "/departments/d005?details=",
        ]
        // Filters, order and members chosen, as PostgREST takes them; orders that tie are broken by number.
        targets += [
            "/employees?lastName=eq.Facello&order=firstName.desc,employeeNumber.asc&limit=5",
            "/employees?lastName=eq.Facello&select=employeeNumber,firstName&limit=3",
            "/employees?lastName=eq.Facello&select=firstName,employeeNumber&order=employeeNumber.desc&limit=3&offset=2",
            "/employees?employeeNumber=gte.499990&order=employeeNumber.desc", "/employees?employeeNumber=in.(10001,10004,10010)",
            "/employees?employeeNumber=in.(10001,10004,10010)&select=lastName",
            "/employees?employeeNumber=lt.10004&employeeNumber=not.eq.10002",
            "/employees?firstName=ilike.ZVONKO&lastName=like.N*&order=employeeNumber.desc",
            "/employees?lastName=not.eq.Facello&limit=3&offset=2", "/employees?lastName=is.null", "/employees?lastName=in.()",
            "/employees?name=bal*&lastName=eq.Lichtner&details=titles", "/employees?name=krohm*&select=lastName&details=titles&limit=2",
            "/employees?lastName=in.(Facello,\"Bamford\")&order=employeeNumber&limit=4", "/employees?select=*&limit=2",
            "/employees?select=lastName,%20firstName&limit=2", "/employees?order=lastName.desc.nullslast,employeeNumber&limit=3",
            // Filters, orders and members that are not there.
            "/employees?employeeNumber=eq.99999999999", "/employees?employeeNumber=eq.abc", "/employees?lastName=xx.Facello",
            "/employees?lastName=Facello", "/employees?order=hireDate.desc", "/employees?order=lastName.up", "/employees?select=bonus",
            "/employees?select=", "/employees?employeeNumber=is.true", "/employees?employeeNumber=in.(1,x)",
            "/departments?departmentName=like.*Sales*", "/departments?order=departmentName.desc&select=departmentName",
            "/departments?departmentNumber=in.(d001,d009)", "/departments?departmentNumber=gt.d005&order=departmentNumber.desc",
            "/departments?departmentName=ilike.*ENG*&departmentNumber=neq.d004", "/departments?select=nope",
            "/departments?order=nope", "/departments?departmentNumber=is.false",
        ]
        // Embedding the details as select does, with their own filters, order and pages; or, and, not.or.
        targets += [
            "/employees?select=*,titles(*)&limit=3", "/employees?select=*,titles(*),salaries(*)&limit=2&offset=7",
            "/employees?select=lastName,titles(title,fromDate)&titles.order=fromDate.desc&titles.limit=1&limit=3",
            "/employees?select=employeeNumber,salaries(salary)&salaries.salary=gt.80000&employeeNumber=lt.10010",
            "/employees?select=employeeNumber,job:titles(name:title)&titles.or=(title.eq.Staff,title.like.Senior*)&limit=4",
            "/employees?details=titles&titles.order=fromDate.desc&limit=2", "/employees?details=titles,salaries&salaries.limit=1&limit=2",
            "/employees?select=lastName,titles!inner(title)&titles.title=eq.Manager&limit=3",
            "/employees?select=lastName,titles(title)&titles=not.is.null&employeeNumber=in.(10001,10002)",
            "/employees?or=(lastName.eq.Facello,firstName.eq.Georgi)&limit=5",
            "/employees?or=(employeeNumber.lt.10003,and(lastName.like.F*,employeeNumber.lt.10100))",
            "/employees?not.or=(employeeNumber.gt.10003,lastName.eq.x)&limit=3", "/employees?and=(emp_no.gt.10001,emp_no.lt.10004)",
            "/employees?emp_no=eq.10001&select=emp_no,last_name", "/employees?name=krohm*&select=lastName,departments(departmentName)",
            "/employees/10004?select=lastName,titles(*),salaries(salary)&salaries.order=salary.desc&salaries.limit=2",
            "/employees/10004?details=titles&titles.title=eq.Staff", "/employees/10004?select=*,departments(*)&details=titles",
            "/departments/d005?select=departmentName,managers(lastName)",
            "/departments/d005?details=managers,employees&managers.order=fromDate.desc&managers.limit=1",
            // Embeds, paths and orders that are not there.
            "/employees?select=*,titles(nope)", "/employees?titles.title=eq.x", "/employees?select=lastName,...titles(title)",
            "/employees?order=titles(title)&select=*,titles(*)", "/employees/10004?titles.limit=x&details=titles",
            "/employees?or=(lastName.eq.x", "/employees?lastName=is.true", "/employees?or=(hireDate.eq.x)",
        ]
        // Arguments no route takes, paths no route has.
        targets += [
            "/employees?foo=1", "/employees/10004?limit=3", "/employees/10004?name=x", "/departments?name=x",
            "/departments?limit=2", "/departments/d005?foo=1&bar=2", "/employees/10004/titles", "/employee",
            "/departments/d005/x", "/employees/", "/departments/", "/employees/10004/",
        ]
        var requests: [(String, String, [(String, String)])] = targets.map { ("GET", $0, []) }
        // Counts, CSV and what CSV cannot hold.
        for target in [
            "/employees?limit=10&offset=20", "/employees?name=bal*", "/employees?limit=10&offset=300020",
            "/employees?limit=10&offset=400000", "/departments", "/employees?name=krohm*&limit=2&details=titles",
            "/employees?lastName=eq.Facello&limit=2&offset=1", "/departments?departmentNumber=lte.d003",
        ] {
            requests.append(("GET", target, [("Prefer", "count=exact")]))
            requests.append(("GET", target, [("Prefer", "return=minimal, count=exact")]))
        }
        for target in [
            "/employees?limit=5", "/employees?name=krohm*", "/departments", "/employees?limit=2&details=titles",
            "/employees/10004", "/departments/d005", "/employees?lastName=eq.Facello&select=employeeNumber&order=employeeNumber&limit=5",
            "/departments?departmentName=like.*e*&select=departmentName",
        ] {
            requests.append(("GET", target, [("Accept", "text/csv")]))
            requests.append(("GET", target, [("Accept", "application/json, text/csv")]))
        }
        // Other methods.
        for (method, target) in [
            ("POST", "/employees"), ("DELETE", "/employees/10004"), ("PUT", "/departments"),
            ("PATCH", "/departments/d005"), ("OPTIONS", "/employees"), ("OPTIONS", "/employees/10004"),
            ("HEAD", "/employees/10004"), ("HEAD", "/employees/9999"), ("HEAD", "/departments/d999"),
            ("HEAD", "/employees?limit=2"), ("HEAD", "/departments/d005?details=managers,employees"),
            ("POST", "/departments/d005"),
        ] {
            requests.append((method, target, []))
        }
        // A JSON body's members are arguments too.
        requests.append(("GET", "/employees?limit=2", [("Content-Type", "application/json")]))
        return requests
    }

    /// A body with the list of parameters an unknown argument's problem
    /// names left out: the files' objects take `select`, which the Swift
    /// objects do not declare.
    static func withoutExpectedNames(_ text: String) -> String {
        text.replacing(/; (expected [^"]*|it takes no arguments)\./, with: "; expected ….")
    }

    @Test("at least 200 requests: same status, same body, same header fields")
    func sameAnswers() throws {
        let pool = ConnectionPool(.init(conninfo: try Environment.conninfo(), size: 6))
        defer { pool.close() }
        let loaded = try Environment.load(Environment.servicesFolder, pool: pool)
        let generated = try Environment.serve(loaded.services, pool: pool)
        let swift = try Environment.serve([EmployeesService(), DepartmentsService()], pool: pool)
        defer {
            generated.stop()
            swift.stop()
        }
        let requests = Self.requests
        #expect(requests.count >= 200)
        var statuses: [Int: Int] = [:]
        for (index, (method, target, headers)) in requests.enumerated() {
            // The same request id for both, which each echoes in its problem documents.
            let headers = headers + [("X-Request-Id", "equivalence-\(index)")]
            let expected = try TestClient.request(method, target, port: swift.port, headers: headers)
            let answered = try TestClient.request(method, target, port: generated.port, headers: headers)
            let request = "\(method) \(target) \(headers.map { "\($0.0): \($0.1)" }.joined(separator: "; "))"
            #expect(answered.status == expected.status, "\(request)")
            #expect(Self.withoutExpectedNames(answered.text) == Self.withoutExpectedNames(expected.text), "\(request)")
            // A short list is read whole on the batcher, with an ETag (and, under 1 KiB, no Vary), unless
            // its statement was once found slow, on a loaded machine, and streams for a while: by that alone
            // the two may differ there.
            let eachWhole = [answered, expected].map { $0.header("ETag") != nil }
            for field in Self.comparedFields where eachWhole[0] == eachWhole[1] || (field != "ETag" && field != "Vary") {
                #expect(answered.header(field) == expected.header(field), "\(request): \(field)")
            }
            statuses[expected.status, default: 0] += 1
        }
        // The requests do cover the answers they are meant to.
        for status in [200, 204, 400, 404, 405, 406] { #expect(statuses[status, default: 0] > 0, "no \(status) answer compared") }
    }
}
