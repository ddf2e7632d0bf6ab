import EmployeesService
import Foundation
import HTTPTestClient
import PostgreSQL
import ServiceHost
import Testing

/// `GET /departments` and `/health` over a real socket.
@Suite("GET /departments and /health")
struct DepartmentsAPITests {
    let server: TestServer

    init() throws {
        server = try TestServer.shared()
    }

    // MARK: - Departments

    @Test("the 9 departments, ordered by number")
    func list() throws {
        let reply = try server.get("/departments")
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type") == "application/json; charset=utf-8")
        let departments = reply.objects
        #expect(departments.count == 9)
        #expect(
            JSONReader.table(departments, ["departmentNumber", "departmentName"])
                == (try TestEnvironment.rows("SELECT dept_no, dept_name FROM departments ORDER BY dept_no")))
        #expect(departments.first?["departmentNumber"] as? String == "d001")
        #expect(departments.last?["departmentNumber"] as? String == "d009")
    }

    @Test("d005 with managers and current employees")
    func departmentWithDetails() throws {
        let reply = try server.get("/departments/d005?details=managers,employees")
        #expect(reply.status == 200)
        #expect(JSONReader.keyOrder(ofObject: reply.text) == ["departmentNumber", "departmentName", "managers", "employees"])
        let department = reply.object
        #expect(department["departmentNumber"] as? String == "d005")
        #expect(department["departmentName"] as? String == "Development")

        let managers = try #require(department["managers"] as? [[String: Any]])
        #expect(
            JSONReader.table(managers, ["employeeNumber", "firstName", "lastName", "fromDate", "toDate"])
                == (try TestEnvironment.rows(
                    """
                    SELECT m.emp_no, e.first_name, e.last_name, m.from_date::text, m.to_date::text
                    FROM dept_manager m JOIN employees e USING (emp_no) WHERE m.dept_no = 'd005' ORDER BY m.from_date, m.emp_no
                    """)))
        #expect(!managers.isEmpty)

        let employees = try #require(department["employees"] as? [[String: Any]])
        let current = try TestEnvironment.integer("SELECT count(*) FROM dept_emp WHERE dept_no = 'd005' AND to_date = '9999-01-01'")
        #expect(employees.count == current)
        #expect(current > 10_000)
        let numbers = employees.compactMap { $0["employeeNumber"] as? Int }
        #expect(numbers.count == current && numbers == numbers.sorted())
        #expect(
            JSONReader.table(Array(employees.prefix(20)), ["employeeNumber", "firstName", "lastName", "fromDate"])
                == (try TestEnvironment.rows(
                    """
                    SELECT de.emp_no, e.first_name, e.last_name, de.from_date::text FROM dept_emp de JOIN employees e USING (emp_no)
                    WHERE de.dept_no = 'd005' AND de.to_date = '9999-01-01' ORDER BY de.emp_no LIMIT 20
                    """)))
    }

    @Test("details one at a time, and none")
    func eachDetail() throws {
        let plain = try server.get("/departments/d001")
        #expect(plain.status == 200)
        #expect(plain.object.count == 2)
        let managersOnly = try server.get("/departments/d001?details=managers").object
        #expect(managersOnly["managers"] is [[String: Any]] && managersOnly["employees"] == nil)
        let employeesOnly = try server.get("/departments/d001?details=employees").object
        #expect(employeesOnly["employees"] is [[String: Any]] && employeesOnly["managers"] == nil)
        #expect(try server.get("/departments/d001?details=employees&details=managers").status == 200)
    }

    @Test("an unknown department is 404, an unknown detail 400", arguments: ["d000", "d010", "D005", "x", "d0055"])
    func unknownDepartment(number: String) throws {
        for query in ["", "?details=managers", "?details=employees"] {
            let reply = try server.get("/departments/\(number)\(query)")
            #expect(reply.status == 404, "\(number)\(query)")
            #expect(reply.header("Content-Type") == "application/problem+json")
            #expect(reply.object["parameter"] as? String == "departmentNumber")
        }
        let badDetail = try server.get("/departments/d005?details=salaries")
        #expect(badDetail.status == 400)
        #expect(badDetail.object["allowedValues"] as? [String] == ["managers", "employees"])
    }

    // MARK: - Health

    @Test("live and ready are 204 while the database answers")
    func healthy() throws {
        for path in ["/health/live", "/health/ready"] {
            let reply = try server.get(path)
            #expect(reply.status == 204, "\(path)")
            #expect(reply.body.isEmpty)
        }
    }

    @Test("ready is 503 with Retry-After when the database cannot be reached or refuses the role; live stays 204")
    func notReady() throws {
        for conninfo in [try TestEnvironment.conninfo(port: "1"), try TestEnvironment.conninfo(user: "no_such_role")] {
            let pool = ConnectionPool(.init(conninfo: conninfo, size: 1, acquireTimeout: .seconds(1)))
            let server = try TestServer.serve([], serverServices: [HealthService(pool: pool)])
            try server.start()
            defer { server.stop() }
            let ready = try TestClient.request("GET", "/health/ready", port: server.port)
            #expect(ready.status == 503, "\(conninfo)")
            #expect(ready.header("Retry-After") != nil)
            #expect(ready.header("Content-Type") == "application/problem+json")
            #expect(try TestClient.request("GET", "/health/live", port: server.port).status == 204)
        }
    }
}
