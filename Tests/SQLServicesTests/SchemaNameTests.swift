import Foundation
import HTTPServer
import HTTPTestClient
import PostgreSQL
import SQLServices
import Testing

/// A folder where two services answer different shapes under one name:
/// `Invoice` from `/customers/{id}/invoices` and from `/invoices/{id}`,
/// each with a `details` enumeration `InvoiceDetail` of other values and a
/// nested `InvoiceLine` of other fields. The OpenAPI document gives each
/// shape a name of its own, and a real answer of each operation validates
/// against the schema its operation names (and the customers' answer
/// would not against the other's: a client generated from a document that
/// kept one `Invoice` for both would mis-read it).
@Suite("OpenAPI schema names of a folder with two Invoice shapes", .serialized)
struct SchemaNameTests {
    static let schema = """
        CREATE TABLE customer (id int PRIMARY KEY, name text NOT NULL);
        CREATE TABLE invoice (
            id int PRIMARY KEY, customer_id int NOT NULL REFERENCES customer, issued date NOT NULL, total numeric(10, 2) NOT NULL
        );
        CREATE TABLE invoice_line (
            invoice_id int REFERENCES invoice, line_no int, amount numeric(10, 2) NOT NULL, PRIMARY KEY (invoice_id, line_no)
        );
        INSERT INTO customer VALUES (1, 'Ada'), (2, 'Brian');
        INSERT INTO invoice VALUES (10, 1, '2024-05-01', 10.50), (11, 1, '2024-06-01', 99), (12, 2, '2024-06-02', 5);
        INSERT INTO invoice_line VALUES (10, 1, 4.50), (10, 2, 6.00), (11, 1, 99);
        """

    static let files = [
        "customers/invoices.sql": """
        -- GET /customers/{id}/invoices
        -- A customer's invoices.
        -- @returns list Invoice
        -- @example id 1
        SELECT id, total FROM invoice WHERE customer_id = :id ORDER BY id;

        -- @detail lines The amounts billed.
        SELECT amount FROM invoice_line WHERE invoice_id = :id ORDER BY line_no;
        """,
        "invoices/one.sql": """
        -- GET /invoices/{id}
        -- One invoice.
        -- @returns object Invoice
        -- @example id 10
        SELECT id, customer_id AS "customerId", issued, total FROM invoice WHERE id = :id;

        -- @detail lines Its lines, by number.
        SELECT line_no AS "lineNo", amount FROM invoice_line WHERE invoice_id = :id ORDER BY line_no;

        -- @detail customer Who pays it.
        SELECT id, name FROM customer WHERE id = :customerId;
        """,
    ]

    @Test("each shape its own name, each $ref the right one, each answer valid against its own schema")
    func distinctShapes() throws {
        let scratch = try ScratchSchema(Self.schema)
        defer { scratch.drop() }
        let pool = try scratch.pool()
        defer { pool.close() }
        let folder = try Environment.folder(Self.files)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let loaded = try Environment.load(folder, pool: pool)
        let server = try Environment.serve(loaded.services, pool: pool)
        defer { server.stop() }

        let document = try TestClient.request("GET", "/openapi.json", port: server.port).object
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: [String: Any]]])
        func operation(_ path: String) throws -> [String: Any] { try #require(paths[path]?["get"], "\(path)") }
        func resultSchema(_ path: String) throws -> [String: Any] {
            let responses = try #require(try operation(path)["responses"] as? [String: [String: Any]])
            let content = try #require(responses["200"]?["content"] as? [String: [String: Any]])
            return try #require(content["application/json"]?["schema"] as? [String: Any])
        }
        func detailsEnumeration(_ path: String) throws -> String? {
            let parameters = try #require(try operation(path)["parameters"] as? [[String: Any]])
            let details = parameters.first { $0["name"] as? String == "details" }
            return ((details?["schema"] as? [String: Any])?["items"] as? [String: Any])?["$ref"] as? String
        }

        let listSchema = try resultSchema("/customers/{id}/invoices")
        let objectSchema = try resultSchema("/invoices/{id}")
        let listItem = (listSchema["items"] as? [String: Any])?["$ref"] as? String
        let object = objectSchema["$ref"] as? String
        #expect(listItem == "#/components/schemas/Invoice")
        #expect(object == "#/components/schemas/InvoicesInvoice")
        #expect(try detailsEnumeration("/customers/{id}/invoices") == "#/components/schemas/InvoiceDetail")
        #expect(try detailsEnumeration("/invoices/{id}") == "#/components/schemas/InvoicesInvoiceDetail")
        #expect((schemas["InvoiceDetail"] as? [String: Any])?["enum"] as? [String] == ["lines"])
        #expect((schemas["InvoicesInvoiceDetail"] as? [String: Any])?["enum"] as? [String] == ["lines", "customer"])

        let validator = SchemaValidator(schemas: schemas)
        let list = try TestClient.request("GET", "/customers/1/invoices?details=lines", port: server.port)
        let one = try TestClient.request("GET", "/invoices/10?details=lines,customer", port: server.port)
        #expect(list.status == 200 && one.status == 200)
        let listValue = try JSONSerialization.jsonObject(with: Data(list.body))
        let oneValue = try JSONSerialization.jsonObject(with: Data(one.body))
        #expect(validator.problems(listValue, listSchema) == [], "\(list.text)")
        #expect(validator.problems(oneValue, objectSchema) == [], "\(one.text)")
        // Read by the invoices' schema, the customers' answer fails: one `Invoice` for both would mis-read it.
        #expect(validator.problems((listValue as? [Any])?.first as Any, objectSchema) != [])
    }
}

/// The part of JSON Schema the document uses: `$ref`, `type` (one or
/// several), `properties`, `required`, `items`, `enum`, `anyOf`, `allOf`.
struct SchemaValidator {
    let schemas: [String: Any]

    /// What `value` breaks of `schema`, each with its place; empty when it is valid.
    func problems(_ value: Any, _ schema: [String: Any], at place: String = "$") -> [String] {
        if let reference = schema["$ref"] as? String {
            guard let target = schemas[String(reference.dropFirst("#/components/schemas/".count))] as? [String: Any] else {
                return ["\(place): \(reference) is missing"]
            }
            return problems(value, target, at: place)
        }
        var found: [String] = []
        if let alternatives = schema["anyOf"] as? [[String: Any]], !alternatives.contains(where: { problems(value, $0, at: place).isEmpty })
        {
            found.append("\(place): matches no alternative")
        }
        for part in schema["allOf"] as? [[String: Any]] ?? [] { found += problems(value, part, at: place) }
        let types = (schema["type"] as? [String]) ?? (schema["type"] as? String).map { [$0] }
        if let types, !types.contains(where: { Self.isOf(value, type: $0) }) {
            return found + ["\(place): \(value) is not \(types.joined(separator: " or "))"]
        }
        if let values = schema["enum"] as? [String], !values.contains(where: { $0 == value as? String }) {
            found.append("\(place): \(value) is not one of \(values)")
        }
        if let object = value as? [String: Any] {
            for name in schema["required"] as? [String] ?? [] where object[name] == nil { found.append("\(place): lacks \(name)") }
            for (name, member) in object {
                if let property = (schema["properties"] as? [String: Any])?[name] as? [String: Any] {
                    found += problems(member, property, at: place + "." + name)
                }
            }
        }
        if let array = value as? [Any], let items = schema["items"] as? [String: Any] {
            for (index, element) in array.enumerated() { found += problems(element, items, at: "\(place)[\(index)]") }
        }
        return found
    }

    static func isOf(_ value: Any, type: String) -> Bool {
        switch type {
        case "null": value is NSNull
        case "object": value is [String: Any]
        case "array": value is [Any]
        case "string": value is String
        case "boolean": value is Bool
        case "integer": (value as? NSNumber).map { $0.doubleValue.rounded() == $0.doubleValue } ?? false
        case "number": value is NSNumber
        default: true
        }
    }
}
