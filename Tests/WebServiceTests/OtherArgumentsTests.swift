import Foundation
@testable import HTTPServer
import Testing
import WebService

/// A result that answers with the text it was given, run by an `OtherRunner`.
private struct Said: RunnableResult {
    let text: String

    func response(runner: OtherRunner, request: RoutedRequest) -> HTTPResponse {
        HTTPResponse(text: text)
    }
}

private final class OtherRunner: Sendable {}

/// A route whose own parameter is `limit`, which documents `select` and
/// `lastName`, and reads every other argument of the query string.
private struct QueryLanguageService: WebService {
    let path = "/people"
    let description = "People, filtered as the caller asks."

    var routes: [Route] {
        Route(
            .get, "/", description: "People.",
            parameters: [
                RuntimeParameter("limit", as: Int?.self) { $0.map { "limit=\($0)" } ?? "" },
                .documenting("select", type: .string, description: "The members.", pattern: "^[a-z,]*$", value: ""),
                .documenting("lastName", type: .string, description: "A filter.", value: ""),
                .readingOtherArguments(description: "Filters.") { request throws(HTTPError) in
                    let others = request.otherArguments
                    if others.contains(where: { $0.name == "refused" }) {
                        throw HTTPError(.badRequest, detail: "refused", parameter: "refused")
                    }
                    return others.map { "\($0.name)=\($0.values.joined(separator: "|"))" }.joined(separator: ";")
                },
            ]
        ) { values in
            Said(text: values.filter { !$0.isEmpty }.joined(separator: " "))
        }
    }
}

@Suite("Arguments a route reads as others")
struct OtherArgumentsTests {
    let router = try! WebServiceRouter(services: [QueryLanguageService()], runners: [OtherRunner()])

    @Test("the query string's arguments its own parameters do not name, in order, repeated ones together; documented ones too")
    func others() {
        let answer = router.resolvedResponse(to: makeRequest(.get, "/people?age=gte.18&limit=3&select=a,b&age=lt.65&lastName=eq.x"))
        #expect(answer.text == "limit=3 age=gte.18|lt.65;select=a,b;lastName=eq.x")
        #expect(router.resolvedResponse(to: makeRequest(.get, "/people")).text == "")
        let refused = router.resolvedResponse(to: makeRequest(.get, "/people?refused=1"))
        #expect(refused.status == .badRequest)
        #expect(refused.object["parameter"] as? String == "refused")
    }

    @Test("a form field or JSON member no parameter declares is refused, not dropped: others are the query string's")
    func bodyArguments() {
        let form = router.resolvedResponse(
            to: makeRequest(.get, "/people?age=gt.1", formFields: [FormField(name: "salary", value: .text("1"))]))
        #expect(form.status == .badRequest)
        #expect(form.object["parameter"] as? String == "salary", "\(form.text)")
        let json = router.resolvedResponse(
            to: makeRequest(.get, "/people", headers: ["Content-Type": "application/json"], body: Array(#"{"salary": 1}"#.utf8)))
        #expect(json.status == .badRequest)
        #expect(json.object["parameter"] as? String == "salary", "\(json.text)")
        let declared = router.resolvedResponse(
            to: makeRequest(.get, "/people", headers: ["Content-Type": "application/json"], body: Array(#"{"limit": 2}"#.utf8)))
        #expect(declared.text == "limit=2")
    }

    @Test("?api lists the documented arguments beside the own ones, and not the reading one")
    func documentation() throws {
        let documentation = try #require(router.documentation.first { $0.path == "/people" })
        let operation = documentation.endpoints[0].operations[0]
        #expect(operation.parameters.map(\.name) == ["limit", "select", "lastName"])
        #expect(operation.parameters.map(\.pattern) == [nil, "^[a-z,]*$", nil])
    }
}
