import Foundation
import HTTPServer
import Testing
import WebServiceClient

/// `JSONRPCClient` against the real server's `/jsonrpc`.
@Suite("JSONRPCClient")
struct JSONRPCClientTests {
    private func rpc(_ configuration: WebServiceClient.Configuration = .init()) throws -> JSONRPCClient {
        JSONRPCClient(client: try ClientTestEnvironment.sharedClient(configuration: configuration))
    }

    @Test func aCallDecodesItsResult() async throws {
        let rpc = try rpc()
        #expect(try await rpc.call("math.getSum", params: ["a": 2, "b": 4], as: Double.self) == 6)
        let employee = try await rpc.call(
            "employees.getByEmployeeNumber", params: ["employeeNumber": 10004, "details": ["titles", "salaries"]], as: Employee.self)
        let rest = try await ClientTestEnvironment.sharedClient().get(
            "/employees/{n}", arguments: ["n": 10004, "details": ["titles", "salaries"]], as: Employee.self)
        #expect(employee == rest)
        let departments = try await rpc.call("departments.get", as: [Department].self)
        #expect(departments.count == 9)
    }

    @Test func anErrorNamesItsCodeAndParameter() async throws {
        let rpc = try rpc()
        let unknown = await #expect(throws: JSONRPCError.self) { try await rpc.call("math.nothing", as: Double.self) }
        #expect(unknown?.code == .methodNotFound)
        let invalid = await #expect(throws: JSONRPCError.self) {
            try await rpc.call("employees.getByEmployeeNumber", params: ["employeeNumber": "x"], as: Employee.self)
        }
        #expect(invalid?.code == .invalidParams)
        #expect(invalid?.parameter == "employeeNumber")
        #expect(invalid?.status == 400)
        let missing = await #expect(throws: JSONRPCError.self) {
            try await rpc.call("employees.getByEmployeeNumber", params: ["employeeNumber": 1], as: Employee.self)
        }
        #expect(missing?.code == .serverError)
        #expect(missing?.status == 404)
    }

    @Test func aBatchGivesTypedResultsInOrderWithErrorsPerCall() async throws {
        let rpc = try rpc()
        let (sum, employee, unknown, notified, average) = try await rpc.batch {
            JSONRPCCall("math.getSum", params: ["values": [1, 2, 3]], as: Double.self)
            JSONRPCCall("employees.getByEmployeeNumber", params: ["employeeNumber": 10001], as: Employee.self)
            JSONRPCCall("no.such.method", as: Int.self)
            JSONRPCCall.notification("math.getSum", params: ["a": 1, "b": 1])
            JSONRPCCall("math.getAverage", params: ["values": [2, 4]], as: Double.self)
        }
        #expect(try sum.get() == 6)
        #expect(try employee.get().employeeNumber == 10001)
        #expect(throws: JSONRPCError.self) { try unknown.get() }
        if case .failure(let error as JSONRPCError) = unknown { #expect(error.code == .methodNotFound) }
        #expect((try? notified.get()) != nil)
        #expect(try average.get() == 3)
    }

    @Test func batchResultsAreMatchedByIdWhateverTheOrder() async throws {
        // A server that answers the two calls in reverse order.
        let server = HTTPServer(configuration: .init(port: 0)) { _ in
            HTTPResponse(
                json: Array(
                    #"""
                    [{"jsonrpc":"2.0","id":2,"result":"second"},
                     {"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Not Found","data":{"status":404,"detail":"gone"}}}]
                    """#.utf8))
        }
        try server.start()
        defer { server.stop() }
        let rpc = JSONRPCClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!)
        let (first, second) = try await rpc.batch {
            JSONRPCCall("a", as: Int.self)
            JSONRPCCall("b", as: String.self)
        }
        #expect(try second.get() == "second")
        guard case .failure(let error as JSONRPCError) = first else {
            Issue.record("the first call should have failed")
            return
        }
        #expect(error.code == .serverError)
        #expect(error.status == 404)
        #expect(error.detail == "gone")
    }

    @Test func notificationsAndTransportErrors() async throws {
        try await rpc().notify("math.getSum", params: ["a": 1, "b": 2])
        let closed = JSONRPCClient(baseURL: URL(string: "http://127.0.0.1:\(try ClientTestEnvironment.closedPort())")!)
        let error = await #expect(throws: WebServiceError.self) {
            try await closed.call("math.getSum", params: ["a": 1, "b": 2], as: Double.self)
        }
        #expect(error?.code == .transport)
    }

    @Test func callsCarryTheClientsAuthentication() async throws {
        // The header fields go through to the route, as REST sends them.
        let rpc = try rpc(.init(headers: ["X-Client": "rpc"], credentials: .bearer("abc")))
        let fields = try await rpc.call("echo.getHeaders", as: [String: String].self)
        #expect(fields["Authorization"] == "Bearer abc")
        #expect(fields["X-Client"] == "rpc")
    }
}
