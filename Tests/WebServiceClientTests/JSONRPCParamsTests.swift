import Foundation
import Testing
import WebServiceClient

/// `JSONRPCClient` with params by position and by name, against the real
/// server's `/jsonrpc` (the Swift services: employees, math, echo).
@Suite("JSONRPCClient params by position")
struct JSONRPCParamsTests {
    private func rpc() throws -> JSONRPCClient {
        JSONRPCClient(client: try ClientTestEnvironment.sharedClient())
    }

    private struct Item: Codable, Equatable, Sendable {
        var id: Int
        var name: String
        var tags: [String]
    }

    @Test func byPositionAndByNameGiveTheSameResults() async throws {
        let rpc = try rpc()
        #expect(try await rpc.call("math.getSum", params: [2, 4], as: Double.self) == 6)
        #expect(try await rpc.call("math.getSum", params: ["a": 2, "b": 4], as: Double.self) == 6)
        #expect(try await rpc.call("math.getSum", params: .byPosition([nil, nil, [1.5, 2.5, 3]] as [[Double]?]), as: Double.self) == 7)
        #expect(try await rpc.call("math.getAverage", params: .byPosition([[2.0, 4.0]]), as: Double.self) == 3)

        let byPosition = try await rpc.call("employees.getByEmployeeNumber", params: [10004, ["titles", "salaries"]], as: Employee.self)
        let byName = try await rpc.call(
            "employees.getByEmployeeNumber", params: ["employeeNumber": 10004, "details": ["titles", "salaries"]], as: Employee.self)
        #expect(byPosition == byName)
        #expect(byPosition.titles?.isEmpty == false)
        var arguments: RequestArguments = ["employeeNumber": 10004]
        arguments["details"] = ["titles", "salaries"].argumentValue
        #expect(try await rpc.call("employees.getByEmployeeNumber", params: .byName(arguments), as: Employee.self) == byName)
        // `nil` by position leaves the param out: no details.
        let plain = try await rpc.call("employees.getByEmployeeNumber", params: [10004, String?.none], as: Employee.self)
        #expect(plain.titles == nil && plain.employeeNumber == 10004)

        // Any Encodable: a record as the body, by position or by name.
        let tea = Item(id: 7, name: "Tea", tags: ["hot"])
        #expect(try await rpc.call("echo.postItems", params: .byPosition([tea]), as: Item.self) == tea)
        #expect(try await rpc.call("echo.postItems", params: .byName(["body": tea]), as: Item.self) == tea)
        try await rpc.notify("math.getSum", params: [1, 1])
    }

    @Test func aBatchMixesParamsByPositionAndByName() async throws {
        let rpc = try rpc()
        let (pair, list, employee, tooMany, notified) = try await rpc.batch {
            JSONRPCCall("math.getSum", params: [1, 2], as: Double.self)
            JSONRPCCall("math.getSum", params: ["values": [1, 2, 3]], as: Double.self)
            JSONRPCCall("employees.getByEmployeeNumber", params: [10001], as: Employee.self)
            JSONRPCCall("math.getSum", params: [1, 2, 3, 4], as: Double.self)
            JSONRPCCall.notification("math.getSum", params: [5, 5])
        }
        #expect(try pair.get() == 3)
        #expect(try list.get() == 6)
        #expect(try employee.get().employeeNumber == 10001)
        guard case .failure(let error as JSONRPCError) = tooMany else {
            Issue.record("four params by position should have failed")
            return
        }
        #expect(error.code == .invalidParams)
        #expect((try? notified.get()) != nil)
    }

    @Test func paramsThatDoNotFitAreInvalidParamsNamingWhatIsWrong() async throws {
        let rpc = try rpc()
        let tooMany = await #expect(throws: JSONRPCError.self) { try await rpc.call("math.getSum", params: [1, 2, 3, 4], as: Double.self) }
        #expect(tooMany?.code == .invalidParams)
        #expect(tooMany?.detail == "math.getSum takes at most 3 params by position; 4 were given.")
        let missing = await #expect(throws: JSONRPCError.self) {
            try await rpc.call("echo.putItemsById", params: [3], as: [String: String].self)
        }
        #expect(missing?.code == .invalidParams)
        #expect(missing?.parameter == "name")
        let missingByName = await #expect(throws: JSONRPCError.self) {
            try await rpc.call("echo.putItemsById", params: ["id": 3], as: [String: String].self)
        }
        #expect(missingByName?.parameter == "name")
        // A param that JSON cannot carry fails before anything is sent.
        let unencodable = await #expect(throws: WebServiceError.self) {
            try await rpc.call("math.getSum", params: .byPosition([Double.nan]), as: Double.self)
        }
        #expect(unencodable?.code == .invalidRequest)
    }
}
