import Foundation
import HTTPTestClient
import Testing
import WebService

@Suite("OpenAPI document")
struct OpenAPITests {
    let router: WebServiceRouter

    init() throws {
        router = try WebServiceRouter(
            services: [MathService(), CatalogService(), ArchiveService()],
            openAPI: OpenAPIInfo(title: "Tests", version: "2.0.0"))
    }

    /// `GET /openapi.json`, parsed.
    var document: [String: Any] {
        get throws {
            let response = router.resolvedResponse(to: makeRequest(.get, "/openapi.json"))
            #expect(response.status == .ok)
            #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
            return try #require(try JSONReader.value(response.text.utf8) as? [String: Any])
        }
    }

    func operation(_ method: String, _ path: String) throws -> [String: Any] {
        let paths = try #require(try document["paths"] as? [String: Any])
        let item = try #require(paths[path] as? [String: Any], "\(path)")
        return try #require(item[method] as? [String: Any], "\(method) \(path)")
    }

    func parameter(_ name: String, of operation: [String: Any]) throws -> [String: Any] {
        let parameters = try #require(operation["parameters"] as? [[String: Any]])
        return try #require(parameters.first { $0["name"] as? String == name }, "\(name)")
    }

    @Test func versionInfoAndEveryPath() throws {
        let document = try document
        #expect(document["openapi"] as? String == "3.1.0")
        let info = try #require(document["info"] as? [String: Any])
        #expect(info["title"] as? String == "Tests")
        #expect(info["version"] as? String == "2.0.0")
        let paths = try #require(document["paths"] as? [String: Any])
        #expect(
            Set(paths.keys) == [
                "/math/sum", "/catalog", "/catalog/items/{id}", "/catalog/items/special", "/catalog/years/{0}/{1}",
                "/catalog/conversions", "/catalog/details", "/catalog/form", "/catalog/upload", "/catalog/employees",
                "/catalog/agent", "/catalog/employee", "/catalog/void", "/catalog/response", "/catalog/stream",
                "/catalog/fail/status", "/catalog/fail/convertible", "/catalog/fail/internal",
                "/archive", "/archive/{year}", "/archive/entries",
            ])
        let defaults = try WebServiceRouter(services: [MathService()]).resolvedResponse(to: makeRequest(.get, "/openapi.json")).object
        #expect((defaults["info"] as? [String: Any])?["title"] as? String == "Web services")
        #expect((defaults["info"] as? [String: Any])?["version"] as? String == "1.0.0")
    }

    @Test func operationIDsFollowServiceVerbAndPath() throws {
        #expect(try operation("get", "/math/sum")["operationId"] as? String == "math.getSum")
        #expect(try operation("get", "/catalog")["operationId"] as? String == "catalog.get")
        #expect(try operation("get", "/catalog/items/{id}")["operationId"] as? String == "catalog.getItemsById")
        #expect(try operation("put", "/catalog/items/{id}")["operationId"] as? String == "catalog.putItemsById")
        #expect(try operation("delete", "/catalog/items/{id}")["operationId"] as? String == "catalog.deleteItemsById")
        #expect(try operation("get", "/catalog/items/special")["operationId"] as? String == "catalog.getItemsSpecial")
        #expect(try operation("get", "/catalog/years/{0}/{1}")["operationId"] as? String == "catalog.getYearsBy0By1")
        #expect(try operation("post", "/catalog/form")["operationId"] as? String == "catalog.postForm")
        #expect(OperationID.name(servicePath: "/shop/v2", method: .post, routePath: "/order-items") == "shop.v2.postOrderItems")
        #expect(
            OperationID.name(servicePath: "/employees", method: .get, routePath: "/?:employeeNumber/titles")
                == "employees.getByEmployeeNumberTitles")

        // Unique across the document, and the same as ?api shows.
        let paths = try #require(try document["paths"] as? [String: [String: [String: Any]]])
        let ids = paths.values.flatMap { $0.values.compactMap { $0["operationId"] as? String } }
        #expect(Set(ids).count == ids.count)
        let api = router.resolvedResponse(to: makeRequest(.get, "/catalog?api", headers: ["Accept": "application/json"])).object
        let endpoints = try #require(api["endpoints"] as? [[String: Any]])
        let items = try #require(endpoints.first { $0["path"] as? String == "/catalog/items/{id}" }?["operations"] as? [[String: Any]])
        #expect(
            items.compactMap { $0["operationId"] as? String }
                == ["catalog.getItemsById", "catalog.putItemsById", "catalog.patchItemsById", "catalog.deleteItemsById"])
    }

    @Test func operationIDsOfTwoPathsThatReadAlikeAreNumbered() throws {
        struct Lookalike: WebService {
            let path = "/things"
            let description = ""
            var routes: [Route] {
                Route(.get, "/by-id") { "literal" }
                Route(.get, "/?:id", Parameter<Int>("id")) { id in "\(id)" }
                Route(.get, "/?:id", Parameter<Int>("id"), Parameter<Int>("x")) { id, x in "\(id) \(x)" }
            }
        }
        let document = try WebServiceRouter(services: [Lookalike()]).resolvedResponse(to: makeRequest(.get, "/openapi.json")).object
        let paths = document["paths"] as? [String: [String: [String: Any]]] ?? [:]
        #expect(paths["/things/by-id"]?["get"]?["operationId"] as? String == "things.getById")
        #expect(paths["/things/{id}"]?["get"]?["operationId"] as? String == "things.getById2")
    }

    @Test func optionalLastPathVariableBecomesTwoPaths() throws {
        let all = try operation("get", "/archive")
        #expect(all["operationId"] as? String == "archive.get")
        #expect(all["parameters"] == nil)
        let one = try operation("get", "/archive/{year}")
        #expect(one["operationId"] as? String == "archive.getByYear")
        let year = try parameter("year", of: one)
        #expect(year["in"] as? String == "path")
        #expect(year["required"] as? Bool == true)
        #expect(year["example"] as? Int == 2024)

        // And the router answers both.
        #expect(router.resolvedResponse(to: makeRequest(.get, "/archive")).text == #""every year""#)
        #expect(router.resolvedResponse(to: makeRequest(.get, "/archive/1999")).text == #""year 1999""#)
        let queried = router.resolvedResponse(to: makeRequest(.get, "/archive?year=1999"))
        #expect(queried.status == .badRequest)
        #expect(queried.object["parameter"] as? String == "year")
        let api = router.resolvedResponse(to: makeRequest(.get, "/archive?api", headers: ["Accept": "application/json"])).object
        let endpoints = try #require(api["endpoints"] as? [[String: Any]])
        #expect(endpoints.compactMap { $0["path"] as? String } == ["/archive/{year}", "/archive", "/archive/entries"])
    }

    @Test func overloadsMergeIntoOneOperation() throws {
        let sum = try operation("get", "/math/sum")
        let parameters = try #require(sum["parameters"] as? [[String: Any]])
        #expect(parameters.compactMap { $0["name"] as? String } == ["a", "b", "values"])
        #expect(parameters.allSatisfy { $0["required"] as? Bool == false && $0["in"] as? String == "query" })
        let description = try #require(sum["description"] as? String)
        #expect(description.contains("- With `a`, `b`: Returns the sum of two numbers."))
        #expect(description.contains("- With `values`: Returns the sum of a list of numbers."))
        let ok = try #require((sum["responses"] as? [String: Any])?["200"] as? [String: Any])
        let schema = (ok["content"] as? [String: [String: Any]])?["application/json"]?["schema"] as? [String: Any]
        #expect(schema?["type"] as? String == "number")
        // One verb of a path: one operation, whatever the number of routes.
        let item = try #require((try document["paths"] as? [String: Any])?["/catalog/items/{id}"] as? [String: Any])
        #expect(Set(item.keys) == ["get", "put", "patch", "delete"])
    }

    @Test func parameterSchemas() throws {
        let conversions = try operation("get", "/catalog/conversions")
        func schema(_ name: String) throws -> [String: Any] {
            try #require(try parameter(name, of: conversions)["schema"] as? [String: Any])
        }
        #expect(try schema("integer")["type"] as? String == "integer")
        #expect(try schema("integer")["format"] as? String == "int64")
        #expect(try schema("long")["format"] as? String == "int64")
        #expect(try schema("double")["format"] as? String == "double")
        #expect(try schema("flag")["type"] as? String == "boolean")
        #expect(try schema("date")["format"] as? String == "date-time")
        #expect(try schema("uuid")["format"] as? String == "uuid")
        #expect(try schema("url")["format"] as? String == "uri")
        #expect(try schema("detail")["$ref"] as? String == "#/components/schemas/Detail")
        #expect(try schema("limit")["default"] as? Int == 100)
        #expect(try parameter("limit", of: conversions)["required"] as? Bool == false)
        #expect(try parameter("note", of: conversions)["required"] as? Bool == false)
        #expect(try parameter("text", of: conversions)["required"] as? Bool == true)
        let numbers = try parameter("numbers", of: conversions)
        #expect(numbers["style"] as? String == "form")
        #expect(numbers["explode"] as? Bool == true)
        #expect((numbers["schema"] as? [String: Any])?["type"] as? String == "array")
        #expect(((numbers["schema"] as? [String: Any])?["items"] as? [String: Any])?["type"] as? String == "integer")

        let details = try operation("get", "/catalog/details")
        #expect(
            ((try parameter("details", of: details)["schema"] as? [String: Any])?["items"] as? [String: Any])?["$ref"] as? String
                == "#/components/schemas/Detail")
        let detail = try #require((try document["components"] as? [String: [String: Any]])?["schemas"]?["Detail"] as? [String: Any])
        #expect(detail["enum"] as? [String] == ["titles", "salaries"])

        // Path strings are never empty; path variables are required.
        let years = try operation("get", "/catalog/years/{0}/{1}")
        #expect((try parameter("1", of: years)["schema"] as? [String: Any])?["minLength"] as? Int == 1)
        #expect(try parameter("0", of: years)["required"] as? Bool == true)
    }

    @Test func commaListsAndBodies() throws {
        let entries = try operation("post", "/archive/entries")
        #expect(entries["parameters"] == nil)
        let body = try #require(entries["requestBody"] as? [String: Any])
        #expect(body["required"] as? Bool == true)
        let content = try #require(body["content"] as? [String: [String: Any]])
        #expect(Set(content.keys) == ["application/x-www-form-urlencoded", "multipart/form-data", "application/json"])
        let schema = try #require(content["application/json"]?["schema"] as? [String: Any])
        #expect(Set(schema["required"] as? [String] ?? []) == ["title", "day"])
        let properties = try #require(schema["properties"] as? [String: [String: Any]])
        #expect(properties["day"]?["format"] as? String == "date")
        #expect(properties["draft"]?["default"] as? Bool == false)
        #expect(properties["details"]?["type"] as? String == "array")
        #expect((properties["details"]?["description"] as? String)?.contains("separate values by commas") == true)

        let upload = try #require(try operation("post", "/catalog/upload")["requestBody"] as? [String: Any])
        let multipart = try #require((upload["content"] as? [String: [String: Any]])?["multipart/form-data"]?["schema"] as? [String: Any])
        #expect((upload["content"] as? [String: Any])?.count == 1)
        #expect(
            (multipart["properties"] as? [String: [String: Any]])?["file"]?["contentMediaType"] as? String == "application/octet-stream")

        let employees = try #require(try operation("post", "/catalog/employees")["requestBody"] as? [String: Any])
        let json = (employees["content"] as? [String: [String: Any]])?["application/json"]?["schema"] as? [String: Any]
        #expect(json?["$ref"] as? String == "#/components/schemas/Employee")
    }

    @Test func responsesCarrySchemasAndProblems() throws {
        func responses(_ method: String, _ path: String) throws -> [String: Any] {
            try #require(try operation(method, path)["responses"] as? [String: Any])
        }
        let stream = try #require(try responses("get", "/catalog/stream")["200"] as? [String: Any])
        let streamSchema = (stream["content"] as? [String: [String: Any]])?["application/json"]?["schema"] as? [String: Any]
        #expect(streamSchema?["type"] as? String == "array")
        #expect((streamSchema?["items"] as? [String: Any])?["type"] as? String == "integer")
        #expect(try responses("post", "/catalog/void")["204"] != nil)
        #expect(try responses("post", "/catalog/void")["200"] == nil)
        #expect(try responses("get", "/catalog/response")["default"] != nil)

        let employee = try #require(try responses("get", "/catalog/employee")["200"] as? [String: Any])
        #expect(
            ((employee["content"] as? [String: [String: Any]])?["application/json"]?["schema"] as? [String: Any])?["$ref"] as? String
                == "#/components/schemas/Employee")
        let components = try #require(try document["components"] as? [String: [String: Any]])
        let structure = try #require(components["schemas"]?["Employee"] as? [String: Any])
        #expect(structure["required"] as? [String] == ["employeeNumber", "firstName", "lastName", "hireDate"])
        let titles = (structure["properties"] as? [String: [String: Any]])?["titles"]
        #expect(titles?["type"] as? [String] == ["array", "null"])
        #expect((titles?["items"] as? [String: Any])?["$ref"] as? String == "#/components/schemas/Title")

        for (status, name) in [
            ("400", "BadRequest"), ("404", "NotFound"), ("406", "NotAcceptable"),
            ("503", "ServiceUnavailable"), ("504", "GatewayTimeout"),
        ] {
            #expect((try responses("get", "/math/sum")[status] as? [String: Any])?["$ref"] as? String == "#/components/responses/\(name)")
            let response = try #require(components["responses"]?[name] as? [String: Any])
            let problem = (response["content"] as? [String: [String: Any]])?["application/problem+json"]?["schema"] as? [String: Any]
            #expect(problem?["$ref"] as? String == "#/components/schemas/Problem")
        }
        let problem = try #require(components["schemas"]?["Problem"] as? [String: Any])
        #expect(problem["required"] as? [String] == ["type", "title", "status", "detail"])
    }

    @Test func servedForGETAndHEADOnly() {
        #expect(router.resolvedResponse(to: makeRequest(.head, "/openapi.json")).status == .ok)
        let options = router.resolvedResponse(to: makeRequest(.options, "/openapi.json"))
        #expect(options.status == .noContent)
        #expect(options.headers["Allow"] == "GET, HEAD, OPTIONS")
        let post = router.resolvedResponse(to: makeRequest(.post, "/openapi.json"))
        #expect(post.status == .methodNotAllowed)
        #expect(post.headers["Allow"] == "GET, HEAD, OPTIONS")
    }
}
