import Foundation
import Testing
import WebServiceClient

/// `WebServiceClient`'s typed queries against `sql-rest` serving the
/// repository's services: the rows, order, columns and count the server
/// answers for a ``ListQuery``, as a Swift app would ask.
@Suite("ListQuery against sql-rest", .serialized)
struct ListQueryClientTests {
    struct Employee: Decodable, Sendable, Equatable {
        let employeeNumber: Int
        let lastName: String?
        let firstName: String?
    }

    @Test("filters, not., in, order, select, a page and its count, typed; a bad value is the server's problem document")
    func typedQueries() async throws {
        let run = try ProcessTests.start(["serve", "--services", Environment.servicesFolder, "--port", "0"])
        let port = try run.servingPort()
        let client = WebServiceClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!)

        let facellos = try await client.list(
            "/employees",
            ListQuery().where("lastName", .eq("Facello")).where("firstName", .in(["Georgi", "Mohammed", "Nope, Nobody"]))
                .ordered(by: "employeeNumber", .descending).selecting("employeeNumber", "lastName"),
            as: Employee.self)
        #expect(!facellos.elements.isEmpty)
        #expect(facellos.elements.allSatisfy { $0.lastName == "Facello" && $0.firstName == nil })
        #expect(facellos.elements.map(\.employeeNumber) == facellos.elements.map(\.employeeNumber).sorted(by: >))
        #expect(facellos.total == nil)

        let page = try await client.list(
            "/employees",
            ListQuery().where("employeeNumber", .lt(10100)).where("lastName", .not(.ilike("f*")))
                .ordered(by: "employeeNumber").page(limit: 10, offset: 20),
            counted: true, as: Employee.self)
        #expect(page.elements.count == 10)
        #expect(page.elements.allSatisfy { $0.employeeNumber < 10100 && !($0.lastName ?? "").lowercased().hasPrefix("f") })
        let total = try #require(page.total)
        #expect(total > 30 && total < 99, "the filtered count: \(total)")

        let error = await #expect(throws: WebServiceError.self) {
            _ = try await client.list("/employees", ListQuery().where("employeeNumber", .eq("ten")), as: Employee.self)
        }
        #expect(error?.status == 400)
    }
}
