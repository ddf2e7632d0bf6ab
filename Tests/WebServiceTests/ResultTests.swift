import Foundation
import Testing
import WebService

@Suite("Results and errors")
struct ResultTests {
    let recorder = LogRecorder()
    let router: WebServiceRouter

    init() throws {
        router = try WebServiceRouter(services: [CatalogService()], logger: recorder.logger)
    }

    // MARK: - Results

    @Test func encodableKeepsDeclarationOrderAndOmitsNil() {
        let response = router.resolvedResponse(to: makeRequest(.get, "/catalog/employee"))
        #expect(response.status == .ok)
        #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
        #expect(
            response.text == #"{"employeeNumber":10004,"firstName":"Chirstian","lastName":"Koblick","#
                + #""hireDate":"1986-12-01T00:00:00Z","titles":[{"title":"Engineer","fromDate":"1986-12-01T00:00:00Z"}]}"#)
    }

    @Test func orderedEncoderHandlesNestingAndSpecialValues() throws {
        struct Inner: Encodable { var z = 1; var a: [String: Int] = ["k": 2] }
        struct Outer: Encodable {
            var zeta = "é\"\n"
            var alpha = [Inner()]
            var nothing: Int? = nil
            var infinite = Double.infinity
            var flags = [true, false]
            var big: UInt64 = .max
        }
        let json = String(decoding: try OrderedJSONEncoder.encode(Outer()), as: UTF8.self)
        #expect(json == #"{"zeta":"é\"\n","alpha":[{"z":1,"a":{"k":2}}],"infinite":null,"flags":[true,false],"big":18446744073709551615}"#)
    }

    @Test func voidIs204() {
        let response = router.resolvedResponse(to: makeRequest(.post, "/catalog/void"))
        #expect(response.status == .noContent)
        #expect(response.text.isEmpty)
    }

    @Test func handlerControlsTheResponse() {
        let response = router.resolvedResponse(to: makeRequest(.get, "/catalog/response"))
        #expect(response.status == .created)
        #expect(response.headers["Location"] == "/catalog/items/7")
        #expect(response.headers["Content-Type"] == "text/plain; charset=utf-8")
        #expect(response.text == "made")
    }

    @Test func streamingBodyIsSentAsJSONStream() {
        let response = router.resolvedResponse(to: makeRequest(.get, "/catalog/stream?count=5"))
        #expect(response.status == .ok)
        #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
        guard case .stream(let body) = response.body, let counting = body as? CountingStream else {
            Issue.record("expected a stream")
            return
        }
        #expect(response.text == "[1,2,3,4,5]")
        #expect(counting.closed)
    }

    // MARK: - Errors

    @Test func handlerThrowsAnyStatus() {
        let response = router.resolvedResponse(to: makeRequest(.get, "/catalog/fail/status"))
        #expect(response.status == .forbidden)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        #expect(
            response.text
                == #"{"type":"about:blank","title":"Forbidden","status":403,"detail":"Not yours.","code":"HTTP403","message":"Not yours.","details":null,"hint":null}"#
        )
    }

    @Test func convertibleErrorsMapToTheirStatus() {
        let response = router.resolvedResponse(to: makeRequest(.get, "/catalog/fail/convertible"))
        #expect(response.status == .conflict)
        #expect(response.object["detail"] as? String == "The record was changed meanwhile.")
    }

    @Test func unexpectedErrorIs500WithLoggedErrorIDAndNoLeak() throws {
        let response = router.resolvedResponse(to: makeRequest(.get, "/catalog/fail/internal"))
        #expect(response.status == .internalServerError)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        #expect(!response.text.contains("hunter2"))
        #expect(!response.text.contains("secret"))
        let errorID = try #require(response.object["errorId"] as? String)
        #expect(response.object["detail"] as? String == "The server could not complete the request.")
        let entry = try #require(recorder.entries.first { $0.metadata["errorId"] == .string(errorID) })
        #expect(entry.metadata["error"]?.description.contains("hunter2") == true)
    }
}
