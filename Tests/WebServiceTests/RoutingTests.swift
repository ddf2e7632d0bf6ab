import Testing
import WebService

@Suite("Routing")
struct RoutingTests {
    let router: WebServiceRouter

    init() throws {
        router = try WebServiceRouter(services: [MathService(), CatalogService()])
    }

    @Test func serviceRootAndResourcePaths() {
        #expect(router.resolvedResponse(to: makeRequest(.get, "/catalog")).text == #""root""#)
        #expect(router.resolvedResponse(to: makeRequest(.get, "/catalog/")).text == #""root""#)
        #expect(router.resolvedResponse(to: makeRequest(.get, "/catalog/items/7")).text == #""item 7""#)
    }

    @Test func literalSegmentBeatsVariable() {
        #expect(router.resolvedResponse(to: makeRequest(.get, "/catalog/items/special")).text == #""special""#)
        #expect(router.resolvedResponse(to: makeRequest(.get, "/catalog/items/specials")).status == .badRequest)
    }

    @Test func positionalPathVariables() {
        #expect(router.resolvedResponse(to: makeRequest(.get, "/catalog/years/1999/Prince")).text == #""Prince in 1999""#)
        let response = router.resolvedResponse(to: makeRequest(.get, "/catalog/years/last/Prince"))
        #expect(response.status == .badRequest)
        #expect(response.object["parameter"] as? String == "0")
    }

    @Test func everyVerb() {
        #expect(router.resolvedResponse(to: makeRequest(.put, "/catalog/items/3?name=lamp")).text == #""put 3 lamp""#)
        #expect(router.resolvedResponse(to: makeRequest(.patch, "/catalog/items/3")).text == #""patch 3""#)
        #expect(router.resolvedResponse(to: makeRequest(.delete, "/catalog/items/3")).status == .noContent)
        #expect(router.resolvedResponse(to: makeRequest(.post, "/catalog/void")).status == .noContent)
    }

    @Test func overloadChoiceFollowsSuppliedNames() {
        let pair = router.resolvedResponse(to: makeRequest(.get, "/math/sum?a=2&b=4"))
        #expect(pair.status == .ok)
        #expect(pair.headers["Content-Type"] == "application/json; charset=utf-8")
        #expect(pair.text == "6")
        #expect(router.resolvedResponse(to: makeRequest(.get, "/math/sum?values=1&values=2&values=3")).text == "6")
        #expect(router.resolvedResponse(to: makeRequest(.get, "/math/sum?values=1.5")).text == "1.5")
    }

    @Test func overloadWithFewestUnusedParametersWinsEvenWhenEmpty() {
        // No arguments: both overloads cover; `values` leaves one unused, `a, b` two.
        #expect(router.resolvedResponse(to: makeRequest(.get, "/math/sum")).text == "0")
    }

    @Test func argumentNoOverloadAcceptsIs400() {
        let response = router.resolvedResponse(to: makeRequest(.get, "/math/sum?a=2&c=3"))
        #expect(response.status == .badRequest)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        #expect(response.object["parameter"] as? String == "c")
        let detail = response.object["detail"] as? String ?? ""
        #expect(detail.contains("\"c\"") && detail.contains("\"3\""))
    }

    @Test func headAnswersEveryGetWithSameHeaders() {
        let get = router.resolvedResponse(to: makeRequest(.get, "/math/sum?a=1&b=2"))
        let head = router.resolvedResponse(to: makeRequest(.head, "/math/sum?a=1&b=2"))
        #expect(head.status == get.status)
        #expect(head.headers["Content-Type"] == get.headers["Content-Type"])
        // libmicrohttpd sends the headers of a fixed body (Content-Length) without the body itself.
        #expect(head.text == get.text)
    }

    @Test func headOnAStreamKeepsItForTheServer() {
        // The server pulls its first block, for the GET's framing, and sends no body (HTTPServerTests).
        let head = router.resolvedResponse(to: makeRequest(.head, "/catalog/stream"))
        #expect(head.status == .ok)
        #expect(head.headers["Content-Type"] == "application/json; charset=utf-8")
        guard case .stream(let body) = head.body else {
            Issue.record("HEAD of a stream should keep it for the server")
            return
        }
        body.close()
    }

    @Test func optionsListsAllowedMethods() {
        let items = router.resolvedResponse(to: makeRequest(.options, "/catalog/items/3"))
        #expect(items.status == .noContent)
        #expect(items.headers["Allow"] == "GET, HEAD, PUT, PATCH, DELETE, OPTIONS")
        #expect(router.resolvedResponse(to: makeRequest(.options, "/catalog/void")).headers["Allow"] == "POST, OPTIONS")
        #expect(router.resolvedResponse(to: makeRequest(.options, "/")).headers["Allow"] == "GET, HEAD, OPTIONS")
    }

    @Test func unknownPathIs404() {
        for target in ["/nowhere", "/math/product", "/math/sum/extra", "/catalog/items"] {
            let response = router.resolvedResponse(to: makeRequest(.get, target))
            #expect(response.status == .notFound, "\(target)")
            #expect(response.headers["Content-Type"] == "application/problem+json")
            #expect(response.object["title"] as? String == "Not Found")
            #expect(response.object["status"] as? Int == 404)
        }
    }

    @Test func knownPathOtherVerbIs405WithAllow() {
        let response = router.resolvedResponse(to: makeRequest(.post, "/math/sum?a=1&b=2"))
        #expect(response.status == .methodNotAllowed)
        #expect(response.headers["Allow"] == "GET, HEAD, OPTIONS")
        #expect(response.object["status"] as? Int == 405)
        let root = router.resolvedResponse(to: makeRequest(.delete, "/"))
        #expect(root.status == .methodNotAllowed)
        #expect(root.headers["Allow"] == "GET, HEAD, OPTIONS")
    }
}
