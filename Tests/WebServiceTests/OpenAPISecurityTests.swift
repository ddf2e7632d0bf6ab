import Foundation
import HTTPTestClient
import Testing
import WebService

/// `components/securitySchemes`, the document's `security` and the public
/// paths' `security: []`, from ``OpenAPISecurity``.
@Suite("OpenAPI security")
struct OpenAPISecurityTests {
    func document(_ security: OpenAPISecurity?) throws -> [String: Any] {
        let router = try WebServiceRouter(
            services: [MathService(), CatalogService()], openAPI: OpenAPIInfo(title: "Tests", security: security))
        let response = router.resolvedResponse(to: makeRequest(.get, "/openapi.json"))
        return try #require(try JSONReader.value(response.text.utf8) as? [String: Any])
    }

    func operationSecurity(_ document: [String: Any], _ method: String, _ path: String) -> [Any]? {
        let item = (document["paths"] as? [String: Any])?[path] as? [String: Any]
        return (item?[method] as? [String: Any])?["security"] as? [Any]
    }

    @Test("each scheme is declared and is an alternative; {} only when anonymous requests are served; public paths need none")
    func schemesAndRequirements() throws {
        let document = try document(OpenAPISecurity(schemes: [.basic, .bearerJWT], allowsAnonymous: true, publicPathPrefixes: ["/math/"]))
        let schemes = try #require((document["components"] as? [String: Any])?["securitySchemes"] as? [String: [String: String]])
        #expect(
            schemes == [
                "basic": ["type": "http", "scheme": "basic"], "bearer": ["type": "http", "scheme": "bearer", "bearerFormat": "JWT"],
            ])
        let security = try #require(document["security"] as? [[String: [String]]])
        #expect(security == [["basic": []], ["bearer": []], [:]])
        #expect(operationSecurity(document, "get", "/math/sum")?.isEmpty == true)
        #expect(operationSecurity(document, "get", "/catalog") == nil)

        let basicOnly = try self.document(OpenAPISecurity(schemes: [.basic]))
        #expect(basicOnly["security"] as? [[String: [String]]] == [["basic": []]])
        #expect(((basicOnly["components"] as? [String: Any])?["securitySchemes"] as? [String: Any])?.keys.sorted() == ["basic"])
    }

    @Test("without authentication, or without a scheme, the document says nothing of security")
    func noSchemeNoSecurity() throws {
        for security in [nil, OpenAPISecurity(schemes: [], allowsAnonymous: true, publicPathPrefixes: ["/math/"])] {
            let document = try document(security)
            #expect(document["security"] == nil)
            #expect((document["components"] as? [String: Any])?["securitySchemes"] == nil)
            #expect(operationSecurity(document, "get", "/math/sum") == nil)
        }
    }
}
