import EmployeesService
import Foundation
import HTTPTestClient
import PostgreSQL
import PostgreSQLWebService
import Testing

/// Paged lists: `Link` to the next and previous pages, counts on
/// `Prefer: count=exact`, and the runner's row cap, over a real socket.
@Suite("Paged lists: Link, Content-Range, max rows")
struct PagingAPITests {
    let server: TestServer

    init() throws {
        server = try TestServer.shared()
    }

    @Test("a page links the next and previous pages, keeping the other arguments")
    func links() throws {
        let reply = try server.get("/employees?name=bal*&limit=3&offset=6")
        #expect(reply.status == 200)
        #expect(reply.objects.count == 3)
        #expect(
            reply.header("Link")
                == #"</employees?name=bal*&limit=3&offset=9>; rel="next", </employees?name=bal*&limit=3&offset=3>; rel="prev""#)
        #expect(reply.header("Content-Range") == "6-8/*", "the rows known, the total counted only when asked")

        let first = try server.get("/employees?limit=2")
        #expect(first.header("Link") == #"</employees?limit=2&offset=2>; rel="next""#)
        #expect(try server.get("/employees?offset=300020").header("Link") == nil, "no limit, no pages")
        let edge = try server.get("/employees?limit=9223372036854775807&offset=9223372036854775807")
        #expect(edge.status == 200 && edge.text == "[]")
        #expect(edge.header("Link") == #"</employees?limit=9223372036854775807&offset=0>; rel="prev""#, "no next page past Int.max")
        #expect(edge.header("Content-Range") == "*/*")
        let counted = try server.get(
            "/employees?limit=9223372036854775807&offset=9223372036854775807", headers: [("Prefer", "count=exact")])
        #expect(counted.status == 416, "a range past the rows counted is not satisfiable")
        #expect(counted.header("Content-Range") == "*/300024")
    }

    @Test("Prefer: count=exact gives Content-Range, and ends the links at the last page")
    func count() throws {
        let middle = try server.get("/employees?limit=10&offset=20", headers: [("Prefer", "count=exact")])
        #expect(middle.header("Content-Range") == "20-29/300024")

        let last = try server.get("/employees?limit=10&offset=300020", headers: [("Prefer", "return=minimal, count=exact")])
        #expect(last.objects.count == 4)
        #expect(last.header("Content-Range") == "300020-300023/300024")
        #expect(last.header("Link") == #"</employees?limit=10&offset=300010>; rel="prev""#)

        let past = try server.get("/employees?limit=10&offset=400000", headers: [("Prefer", "count=exact")])
        #expect(past.status == 416)
        #expect(past.header("Content-Range") == "*/300024")
        #expect(middle.status == 206, "a counted page short of the whole is partial content")
        #expect(middle.header("Preference-Applied") == "count=exact")

        let searched = try server.get("/employees?name=bal*", headers: [("Prefer", "count=exact")])
        let matches = try TestEnvironment.integer(
            "SELECT count(*) FROM employees WHERE lower(first_name) LIKE 'bal%' OR lower(last_name) LIKE 'bal%'")
        #expect(searched.objects.count == matches)
        #expect(searched.header("Content-Range") == "0-\(matches - 1)/\(matches)")

        let departments = try server.get("/departments", headers: [("Prefer", "count=exact")])
        #expect(departments.header("Content-Range") == "0-8/9", "any list can be counted")
    }

    @Test("the runner's maxRows caps every list, paged or not, and a larger limit")
    func maxRows() throws {
        let pool = try TestEnvironment.pool(size: 2)
        let server = try TestServer.serve([EmployeesService(), DepartmentsService()], runner: QueryRunner(pool: pool, maxRows: 5))
        try server.start()
        defer { server.stop(); pool.close() }

        let all = try TestClient.request("GET", "/employees", port: server.port)
        #expect(all.objects.count == 5)
        #expect(all.header("Link") == #"</employees?limit=5&offset=5>; rel="next""#)
        #expect(try TestClient.request("GET", "/employees?limit=100", port: server.port).objects.count == 5)
        #expect(try TestClient.request("GET", "/employees?limit=2", port: server.port).objects.count == 2)
        #expect(try TestClient.request("GET", "/departments", port: server.port).objects.count == 5)
        let nested = try TestClient.request("GET", "/employees?details=titles", port: server.port)
        #expect(nested.objects.count == 5)
        #expect(nested.objects.allSatisfy { $0["titles"] is [[String: Any]] })
    }
}
