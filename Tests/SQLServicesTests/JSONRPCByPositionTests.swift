import Foundation
import Testing
import WebServiceClient

/// JSON-RPC params by position against `sql-rest` serving the
/// repository's services: operations generated from SQL take their
/// params in the order `rpc.discover` lists them, as the Swift services do.
@Suite("JSON-RPC by position against sql-rest", .serialized)
struct JSONRPCByPositionTests {
    private struct Employee: Decodable, Equatable {
        struct Title: Decodable, Equatable {
            var title: String
        }

        var employeeNumber: Int
        var lastName: String
        var titles: [Title]?
    }

    private struct Department: Decodable, Equatable {
        var departmentNumber: String
        var departmentName: String
    }

    private struct Discovery: Decodable {
        struct Method: Decodable {
            struct Param: Decodable {
                var name: String
                var required: Bool
            }

            var name: String
            var params: [Param]
            var paramStructure: String
        }

        var methods: [Method]
    }

    @Test func sqlOperationsTakeParamsByPositionInTheOrderRPCDiscoverLists() async throws {
        let run = try ProcessTests.start(["serve", "--services", Environment.servicesFolder, "--port", "0"])
        let port = try run.servingPort()
        let rpc = JSONRPCClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!)

        let discovery = try await rpc.call("rpc.discover", as: Discovery.self)
        let method = try #require(discovery.methods.first { $0.name == "employees.getByEmployeeNumber" })
        #expect(method.paramStructure == "either")
        #expect(method.params.map(\.name).prefix(2) == ["employeeNumber", "details"])
        #expect(method.params.first?.required == true)

        let byPosition = try await rpc.call("employees.getByEmployeeNumber", params: [10004, ["titles"]], as: Employee.self)
        let byName = try await rpc.call(
            "employees.getByEmployeeNumber", params: ["employeeNumber": 10004, "details": ["titles"]], as: Employee.self)
        #expect(byPosition == byName)
        #expect(byPosition.titles?.isEmpty == false)

        let (department, employee) = try await rpc.batch {
            JSONRPCCall("departments.getByDepartmentNumber", params: ["d005"], as: Department.self)
            JSONRPCCall("employees.getByEmployeeNumber", params: ["employeeNumber": 10001], as: Employee.self)
        }
        #expect(try department.get().departmentNumber == "d005")
        #expect(try employee.get().employeeNumber == 10001)

        let count = method.params.count
        let tooMany = await #expect(throws: JSONRPCError.self) {
            try await rpc.call(
                "employees.getByEmployeeNumber", params: .byPosition(Array(repeating: 1, count: count + 1)), as: Employee.self)
        }
        #expect(tooMany?.code == .invalidParams)
        #expect(tooMany?.detail == "employees.getByEmployeeNumber takes at most \(count) params by position; \(count + 1) were given.")
        let missing = await #expect(throws: JSONRPCError.self) {
            try await rpc.call("employees.getByEmployeeNumber", params: [Int?.none, ["titles"]], as: Employee.self)
        }
        #expect(missing?.code == .invalidParams)
        #expect(missing?.parameter == "employeeNumber")
    }
}
