import Testing
import WebService

/// The paths the server answers itself: one list, which the router reads
/// to refuse a Swift service mounted there with an error, never a trap.
@Suite("Reserved paths")
struct ReservedPathTests {
    struct Mounted: WebService {
        let path: String
        let description = ""
        var routes: [Route] {
            Route(.get, "/") { "here" }
        }
    }

    @Test("each reserved path, and the paths below those that cover them")
    func claimed() {
        #expect(ReservedPath.all.map(\.path) == ["/", "/openapi.json", "/jsonrpc", "/health", "/metrics"])
        #expect(ReservedPath.claimed(by: "/")?.path == "/")
        #expect(ReservedPath.claimed(by: "/jsonrpc")?.purpose == "the JSON-RPC endpoint")
        #expect(ReservedPath.claimed(by: "//jsonrpc/")?.path == "/jsonrpc")
        #expect(ReservedPath.claimed(by: "/jsonrpc/calls")?.path == "/jsonrpc")
        #expect(ReservedPath.claimed(by: "/health/extra")?.path == "/health")
        #expect(ReservedPath.claimed(by: "/metrics")?.path == "/metrics")
        #expect(ReservedPath.claimed(by: "/openapi.json/x")?.path == "/openapi.json")
        #expect(ReservedPath.claimed(by: "/employees") == nil)
        #expect(ReservedPath.claimed(by: "/jsonrpcs") == nil)
        #expect(ReservedPath.claimed(by: "/healthy") == nil)
    }

    @Test("a Swift service at a reserved path, or below one, is a MountError that says where; the router is never made")
    func swiftServicesAtReservedPaths() {
        let cases = [
            ("/", "A service cannot be mounted at /, the list of services."),
            ("/jsonrpc", "A service cannot be mounted at /jsonrpc, the JSON-RPC endpoint."),
            ("/jsonrpc/x", "A service cannot be mounted at /jsonrpc/x, below /jsonrpc, the JSON-RPC endpoint."),
            ("/openapi.json", "A service cannot be mounted at /openapi.json, the OpenAPI document."),
            ("/health", "A service cannot be mounted at /health, the server's health checks."),
            ("/health/deep", "A service cannot be mounted at /health/deep, below /health, the server's health checks."),
            ("metrics/", "A service cannot be mounted at /metrics, the server's metrics."),
        ]
        for (path, message) in cases {
            do {
                _ = try WebServiceRouter(services: [Mounted(path: "/fine"), Mounted(path: path)])
                Issue.record("\(path) was mounted")
            } catch {
                #expect(error.description == message)
            }
        }
    }

    @Test("two services at one path are a MountError; the server's own services take their reserved paths")
    func serverServices() throws {
        #expect {
            try WebServiceRouter(services: [Mounted(path: "/a"), Mounted(path: "a/")])
        } throws: { error in
            (error as? MountError)?.description == "Two services are mounted at /a."
        }
        let router = try WebServiceRouter(services: [Mounted(path: "/a")], serverServices: [Mounted(path: "/health")])
        #expect(router.resolvedResponse(to: makeRequest(.get, "/health")).text == #""here""#)
        #expect(router.resolvedResponse(to: makeRequest(.get, "/a")).text == #""here""#)
        #expect(throws: MountError.self) {
            try WebServiceRouter(services: [Mounted(path: "/a")], serverServices: [Mounted(path: "/a")])
        }
    }
}
