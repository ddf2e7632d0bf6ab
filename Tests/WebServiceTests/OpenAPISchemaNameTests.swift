import Foundation
import HTTPTestClient
import Testing
import WebService

/// Two services whose types share names but not shapes: `Invoice` and
/// `Status` of the customers' service and of the ledger's.
enum Customers {
    struct Invoice: Codable, Sendable {
        var number: Int
        var total: Double
        var status: Status
    }

    enum Status: String, Codable, Sendable, CaseIterable {
        case open, paid
    }
}

enum Ledger {
    struct Invoice: Codable, Sendable {
        var number: Int
        var customer: String
        var issued: String
        var lines: [Line]
        var status: Status
    }

    struct Line: Codable, Sendable {
        var amount: Double
    }

    enum Status: String, Codable, Sendable, CaseIterable {
        case draft, booked, void
    }
}

/// A third service with the customers' `Invoice` again: the same shape, the same schema.
struct CustomersService: WebService {
    let path = "/customers"
    let description = "Customers."
    var routes: [Route] {
        Route(.get, "/?:id/invoices", Parameter<Int>("id", example: 1)) { _ in
            [Customers.Invoice(number: 1, total: 2.5, status: .open)]
        }
    }
}

struct LedgerService: WebService {
    let path = "/ledger"
    let description = "The ledger."
    var routes: [Route] {
        Route(.get, "/?:number", Parameter<Int>("number", example: 1)) { number in
            Ledger.Invoice(number: number, customer: "Ada", issued: "2024-05-01", lines: [], status: .booked)
        }
    }
}

struct ArchiveOfCustomersService: WebService {
    let path = "/archived-customers"
    let description = "Former customers."
    var routes: [Route] {
        Route(.get, "/invoices") { [Customers.Invoice(number: 7, total: 1, status: .paid)] }
    }
}

@Suite("OpenAPI schema names: one name per shape across the document")
struct OpenAPISchemaNameTests {
    let router = try! WebServiceRouter(services: [CustomersService(), LedgerService(), ArchiveOfCustomersService()])

    var document: [String: Any] {
        get throws {
            try #require(try JSONReader.value(router.resolvedResponse(to: makeRequest(.get, "/openapi.json")).text.utf8) as? [String: Any])
        }
    }

    /// The `$ref` of the 200 response of `GET path` (of its items, for a list).
    func responseReference(_ path: String, in document: [String: Any]) throws -> String {
        let paths = try #require(document["paths"] as? [String: [String: [String: Any]]])
        let responses = try #require(paths[path]?["get"]?["responses"] as? [String: [String: Any]], "\(path)")
        let content = try #require(responses["200"]?["content"] as? [String: [String: Any]])
        var schema = try #require(content["application/json"]?["schema"] as? [String: Any])
        if let items = schema["items"] as? [String: Any] { schema = items }
        return try #require(schema["$ref"] as? String, "\(path): \(schema)")
    }

    @Test("the second Invoice and Status are qualified by their service; the same shape again is the same schema")
    func distinctNames() throws {
        let document = try document
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: [String: Any]])
        #expect(try responseReference("/customers/{id}/invoices", in: document) == "#/components/schemas/Invoice")
        #expect(try responseReference("/ledger/{number}", in: document) == "#/components/schemas/LedgerInvoice")
        #expect(try responseReference("/archived-customers/invoices", in: document) == "#/components/schemas/Invoice")
        #expect(Set(schemas.keys) == ["Status", "Invoice", "LedgerStatus", "LedgerInvoice", "Line", "Problem"])

        let customers = try #require(schemas["Invoice"]?["properties"] as? [String: [String: Any]])
        #expect(Set(customers.keys) == ["number", "total", "status"])
        #expect(customers["status"]?["$ref"] as? String == "#/components/schemas/Status")
        let ledger = try #require(schemas["LedgerInvoice"]?["properties"] as? [String: [String: Any]])
        #expect(Set(ledger.keys) == ["number", "customer", "issued", "lines", "status"])
        #expect(ledger["status"]?["$ref"] as? String == "#/components/schemas/LedgerStatus")
        #expect(schemas["Status"]?["enum"] as? [String] == ["open", "paid"])
        #expect(schemas["LedgerStatus"]?["enum"] as? [String] == ["draft", "booked", "void"])
    }

    @Test("every $ref of the document names a schema it has")
    func everyReferenceResolves() throws {
        let document = try document
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        var references: [String] = []
        func collect(_ value: Any) {
            if let object = value as? [String: Any] {
                if let reference = object["$ref"] as? String { references.append(reference) }
                object.values.forEach(collect)
            } else if let array = value as? [Any] {
                array.forEach(collect)
            }
        }
        collect(document)
        for reference in references where reference.hasPrefix("#/components/schemas/") {
            #expect(schemas[String(reference.dropFirst("#/components/schemas/".count))] != nil, "\(reference)")
        }
        #expect(references.contains("#/components/schemas/LedgerStatus"))
    }
}
