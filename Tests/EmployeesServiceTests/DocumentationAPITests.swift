import Foundation
import Testing

/// `?api` and `GET /` as served by the example services.
@Suite("?api and the service index")
struct DocumentationAPITests {
    let server: TestServer

    init() throws {
        server = try TestServer.shared()
    }

    @Test("/employees?api as JSON: operations, parameters, allowed details, structures")
    func employeesJSON() throws {
        let reply = try server.get("/employees?api", headers: [("Accept", "application/json")])
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type")?.hasPrefix("application/json") == true)
        let api = reply.object
        #expect(api["path"] as? String == "/employees")
        #expect((api["description"] as? String)?.isEmpty == false)

        let endpoints = try #require(api["endpoints"] as? [[String: Any]])
        #expect(endpoints.compactMap { $0["path"] as? String } == ["/employees", "/employees/{employeeNumber}"])
        let operations = endpoints.flatMap { $0["operations"] as? [[String: Any]] ?? [] }
        #expect(operations.count == 2)
        #expect(operations.allSatisfy { $0["method"] as? String == "GET" && ($0["description"] as? String)?.isEmpty == false })
        let parameters = operations.map { ($0["parameters"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String } }
        #expect(
            parameters == [
                ["name", "details", "limit", "offset", "order", "or", "and", "select"], ["employeeNumber", "details", "select"],
            ])
        // The filters apart, each with its column's type; the operators said once.
        #expect(
            (operations[0]["filters"] as? [[String: Any]])?.map { "\($0["name"] ?? "")=\($0["type"] ?? "")" } == [
                "employeeNumber=integer", "firstName=string", "lastName=string",
            ])
        #expect((operations[0]["filterSyntax"] as? String)?.contains("`not.`") == true)
        #expect(
            operations.map { $0["example"] as? String } == [
                "curl 'http://127.0.0.1/employees?name=bal*&limit=10'", "curl 'http://127.0.0.1/employees/10004?details=titles,salaries'",
            ])
        #expect(
            operations.allSatisfy {
                ($0["parameters"] as? [[String: Any]] ?? []).allSatisfy { ($0["description"] as? String)?.isEmpty == false }
            })
        #expect(operations.compactMap { $0["result"] as? String } == ["[EmployeeSummary]", "Employee"])

        let enumerations = try #require(api["enumerations"] as? [[String: Any]])
        let detail = enumerations.first { $0["name"] as? String == "EmployeeDetail" }
        #expect(detail?["values"] as? [String] == ["titles", "salaries", "departments"])

        let structures = try #require(api["structures"] as? [[String: Any]])
        func fields(_ name: String) -> [String] {
            let structure = structures.first { $0["name"] as? String == name }
            return (structure?["fields"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        }
        #expect(
            fields("Employee") == [
                "employeeNumber", "firstName", "lastName", "birthDate", "gender", "hireDate",
                "titles", "salaries", "departments",
            ])
        #expect(fields("Title") == ["title", "fromDate", "toDate"])
        #expect(fields("Salary") == ["salary", "fromDate", "toDate"])
    }

    @Test("/employees?api as HTML names the operations, parameters and structures")
    func employeesHTML() throws {
        let reply = try server.get("/employees?api")
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type")?.hasPrefix("text/html") == true)
        let page = reply.text
        #expect(page.hasPrefix("<!DOCTYPE html>"))
        for text in [
            "<h1>/employees</h1>", "employeeNumber", "details", "limit", "offset",
            "id=\"Employee\"", "id=\"Title\"", "id=\"Salary\"", "id=\"EmployeeDetail\"",
            #""titles" | "salaries" | "departments""#, #""M" | "F""#,
        ] {
            #expect(page.contains(text), "\(text)")
        }
    }

    @Test("/departments?api documents the department operations")
    func departments() throws {
        let api = try server.get("/departments?api", headers: [("Accept", "application/json")]).object
        let endpoints = api["endpoints"] as? [[String: Any]] ?? []
        #expect(endpoints.compactMap { $0["path"] as? String } == ["/departments", "/departments/{departmentNumber}"])
        let enumerations = api["enumerations"] as? [[String: Any]] ?? []
        #expect(
            enumerations.contains { $0["name"] as? String == "DepartmentDetail" && $0["values"] as? [String] == ["managers", "employees"] })
    }

    @Test("GET / lists the four services, as JSON and as HTML")
    func index() throws {
        let json = try server.get("/", headers: [("Accept", "application/json")])
        #expect(json.status == 200)
        let services = json.objects
        #expect(services.compactMap { $0["path"] as? String } == ["/employees", "/departments", "/math", "/health"])
        #expect(services.compactMap { $0["api"] as? String } == ["/employees?api", "/departments?api", "/math?api", "/health?api"])
        let html = try server.get("/")
        #expect(html.header("Content-Type")?.hasPrefix("text/html") == true)
        for path in ["/employees", "/departments", "/health", "/math"] {
            #expect(html.text.contains("href=\"\(path)?api\""))
        }
        #expect(try server.get("/math/sum?a=2&b=4").text == "6")
    }

    @Test("/openapi.json states each range and least count the parameters enforce, and the server holds to it")
    func openAPIConstraints() throws {
        let document = try server.get("/openapi.json").object
        let paths = try #require(document["paths"] as? [String: [String: [String: Any]]])
        func parameter(_ path: String, _ name: String) throws -> [String: Any] {
            let parameters = try #require(paths[path]?["get"]?["parameters"] as? [[String: Any]], "\(path)")
            return try #require(parameters.first { $0["name"] as? String == name }, "\(path) \(name)")
        }
        func schema(_ path: String, _ name: String) throws -> [String: Any] {
            try #require(try parameter(path, name)["schema"] as? [String: Any])
        }
        #expect(try schema("/math/round", "places")["minimum"] as? Int == 0)
        #expect(try schema("/math/round", "places")["maximum"] as? Int == 10)
        #expect(try schema("/math/average", "values")["minItems"] as? Int == 1)
        #expect(try parameter("/math/average", "values")["required"] as? Bool == true)
        for name in ["limit", "offset"] {
            #expect(try schema("/employees", name)["minimum"] as? Int == 0, "\(name)")
        }
        // /math/sum: one operation whose arguments are all optional, and any of them together is a sum.
        for name in ["a", "b", "values"] {
            #expect(try parameter("/math/sum", name)["required"] as? Bool == false, "\(name)")
        }
        #expect(try server.get("/math/sum?a=1&b=2&values=3&values=4").text == "10")
        #expect(try server.get("/math/sum?b=2").text == "2")
        #expect(try server.get("/math/sum").text == "0")

        #expect(try server.get("/math/round?value=1.23456&places=10").status == 200)
        let places = try server.get("/math/round?value=1&places=11")
        #expect(places.status == 400)
        #expect(places.object["detail"] as? String == #"The parameter "places" expects an integer from 0 to 10; received "11"."#)
        #expect(try server.get("/math/average").status == 400)
        #expect(try server.get("/employees?offset=-1").status == 400)
        #expect(try server.get("/employees?limit=-1").status == 400)
        // A text holds no NUL, which the HTTP layer refuses.
        #expect(try schema("/employees", "name")["pattern"] as? String == #"^[^\x00]*$"#)
        #expect(try server.get("/employees?name=a%00").status == 400)
    }
}
