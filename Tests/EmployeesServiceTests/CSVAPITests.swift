import EmployeesService
import Foundation
import HTTPTestClient
import Testing

/// Lists as CSV on `Accept: text/csv`, over a real socket.
@Suite("Lists as CSV")
struct CSVAPITests {
    let server: TestServer

    init() throws {
        server = try TestServer.shared()
    }

    @Test("Accept: text/csv gives a header row and a line per row")
    func employees() throws {
        let reply = try server.get("/employees?limit=3", headers: [("Accept", "text/csv")])
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type") == "text/csv; charset=utf-8")
        let expected = try TestEnvironment.rows("SELECT emp_no, first_name, last_name FROM employees ORDER BY emp_no LIMIT 3")
        #expect(
            reply.text == "employeeNumber,firstName,lastName\r\n"
                + expected.map { $0.map { $0 ?? "" }.joined(separator: ",") + "\r\n" }.joined())
        #expect(try server.get("/employees?limit=3", headers: [("Accept", "application/json, text/csv")]).text.hasPrefix("["))
    }

    @Test("the whole list streams as CSV")
    func everyone() throws {
        let reply = try server.get("/employees", headers: [("Accept", "text/csv;q=1.0")])
        #expect(reply.status == 200)
        #expect(reply.header("Transfer-Encoding")?.lowercased() == "chunked")
        #expect(reply.text.split(separator: "\r\n").count == 300_025)
    }

    @Test("nested details cannot be CSV: 406 naming the parameter")
    func nestedIsNotAcceptable() throws {
        let reply = try server.get("/employees?limit=3&details=titles", headers: [("Accept", "text/csv")])
        #expect(reply.status == 406)
        #expect(reply.header("Content-Type") == "application/problem+json")
        #expect(reply.object["parameter"] as? String == "details")
        #expect((reply.object["detail"] as? String)?.contains("titles") == true)
    }
}

extension CSVAPITests {
    @Test("the OpenAPI document offers text/csv and text/event-stream for query lists, and for them only")
    func documented() throws {
        let document = try server.get("/openapi.json").object
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        func content(_ path: String) throws -> [String: Any] {
            let get = try #require(paths[path]?["get"] as? [String: Any])
            let ok = try #require((get["responses"] as? [String: Any])?["200"] as? [String: Any])
            return try #require(ok["content"] as? [String: Any])
        }
        #expect(Set(try content("/employees").keys) == ["application/json", "text/csv", "text/event-stream"])
        #expect(Set(try content("/departments").keys) == ["application/json", "text/csv", "text/event-stream"])
        #expect(Set(try content("/employees/{employeeNumber}").keys) == ["application/json"])
    }
}
