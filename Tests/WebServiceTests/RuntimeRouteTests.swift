import Foundation
@testable import HTTPServer
import Testing
import WebService

/// A result that answers with the text of the values it was given, run by an `EchoRunner`.
private struct Echo: RunnableResult {
    let text: String

    func response(runner: EchoRunner, request: RoutedRequest) -> HTTPResponse {
        HTTPResponse(text: runner.prefix + text)
    }
}

private final class EchoRunner: Sendable {
    let prefix: String
    init(_ prefix: String = "") { self.prefix = prefix }
}

private enum ThingDetail: String, CaseIterable, ArgumentValue {
    case titles, salaries
}

/// A service of routes declared at run time, and its typed twin.
private struct RuntimeService: WebService {
    let path = "/runtime"
    let description = "Routes made at run time."

    var routes: [Route] {
        Route(
            .get, "/?:id", description: "One thing.",
            parameters: [
                RuntimeParameter("id", as: Int.self, description: "The id.") { String($0) },
                RuntimeParameter("limit", as: Int?.self) { $0.map(String.init) ?? "none" },
                RuntimeParameter("offset", as: Int.self, default: 5) { String($0) },
                RuntimeParameter.names("details", enumeration: "ThingDetail", values: ["titles", "salaries"]) { $0.joined(separator: "+") },
                RuntimeParameter("small", type: .integer, whenAbsent: "-") { inputs throws(ArgumentConversionError) in
                    let value = try Int.convert(inputs)
                    guard (0...9).contains(value) else {
                        throw ArgumentConversionError(expected: .integer, received: inputs[0].received, requirement: "from 0 to 9")
                    }
                    return String(value)
                },
            ],
            returns: ResultDescription(
                .structure("Thing"),
                structures: [
                    StructureDocumentation(
                        "Thing", fields: [.init("id", type: .integer, required: true), .init("note", type: .string, required: false)])
                ])
        ) { values in
            Echo(text: values.joined(separator: " "))
        }
        Route(
            .get, "/required",
            parameters: [RuntimeParameter("code", type: .string) { inputs throws(ArgumentConversionError) in try String.convert(inputs) }]
        ) { values in
            Echo(text: values[0])
        }
    }
}

private struct TypedService: WebService {
    let path = "/typed"
    let description = ""

    var routes: [Route] {
        Route(
            .get, "/?:id", Parameter<Int>("id"), Parameter<Int?>("limit"), Parameter<Int>("offset", default: 5),
            Parameter<CommaList<ThingDetail>>("details")
        ) { id, limit, offset, details in
            "\(id) \(limit.map(String.init) ?? "none") \(offset) \(details.map(\.rawValue).joined(separator: "+"))"
        }
    }
}

@Suite("Routes declared at run time")
struct RuntimeRouteTests {
    let router: WebServiceRouter

    init() throws {
        router = try WebServiceRouter(services: [RuntimeService(), TypedService()], runners: [EchoRunner()])
    }

    func get(_ target: String) -> HTTPResponse {
        router.resolvedResponse(to: makeRequest(.get, target))
    }

    @Test("values converted, defaults and absent values, in the parameters' order")
    func values() {
        #expect(get("/runtime/7").text == "7 none 5  -")
        #expect(get("/runtime/7?limit=2&offset=0&details=salaries,titles&small=3").text == "7 2 0 salaries+titles 3")
        #expect(get("/runtime/7?details=titles&details=titles").text == "7 none 5 titles -")
    }

    @Test(
        "a bad value is the same 400 as a typed parameter's, word for word",
        arguments: [
            "abc", "7?limit=x", "7?offset=1.5", "7?details=bonus", "7?details=titles,bonus", "7?limit=1&limit=2", "7?details=",
        ])
    func sameProblems(query: String) {
        let runtime = get("/runtime/" + query)
        let typed = get("/typed/" + query)
        #expect(runtime.status == .badRequest)
        #expect(runtime.text == typed.text)
    }

    @Test("a requirement is named; a required runtime parameter missing is a 400")
    func requirementsAndMissing() {
        #expect(
            get("/runtime/7?small=12").object["detail"] as? String
                == #"The parameter "small" expects an integer from 0 to 9; received "12"."#)
        let missing = get("/runtime/required")
        #expect(missing.status == .badRequest)
        #expect(missing.object["detail"] as? String == #"The required parameter "code" (string) is missing."#)
        #expect(get("/runtime/required?code=x").text == "x")
        #expect(
            get("/runtime/7?other=1").object["detail"] as? String
                == #"The argument "other" (received "1") is not a parameter of GET /runtime/7; expected limit, offset, details, small."#)
    }

    @Test("?api documents the parameters and the described structures")
    func documentation() throws {
        let documentation = try #require(router.documentation.first { $0.path == "/runtime" })
        let operation = documentation.endpoints[0].operations[0]
        #expect(operation.parameters.map(\.name) == ["id", "limit", "offset", "details", "small"])
        #expect(operation.parameters.map(\.type.name) == ["integer", "integer", "integer", "[ThingDetail]", "integer"])
        #expect(operation.parameters.map(\.required) == [true, false, false, false, false])
        #expect(operation.parameters.map(\.defaultValue) == [nil, nil, "5", nil, nil])
        #expect(operation.parameters[0].location == .path)
        #expect(operation.result?.name == "Thing")
        #expect(documentation.structures.map(\.name) == ["Thing"])
        #expect(documentation.structures[0].fields.map(\.required) == [true, false])
        #expect(documentation.enumerations.map(\.name) == ["ThingDetail"])
    }

    @Test("a swappable router answers with the router it holds, and another once swapped")
    func swappable() throws {
        let first = try WebServiceRouter(services: [RuntimeService()], runners: [EchoRunner("first ")])
        let swappable = SwappableRouter(first)
        #expect(RequestProcessor.resolve(swappable.respond(to: makeRequest(.get, "/runtime/1"))).text == "first 1 none 5  -")
        swappable.swap(to: try WebServiceRouter(services: [RuntimeService()], runners: [EchoRunner("second ")]))
        #expect(RequestProcessor.resolve(swappable.respond(to: makeRequest(.get, "/runtime/1"))).text == "second 1 none 5  -")
        #expect(swappable.router !== first)
    }
}
