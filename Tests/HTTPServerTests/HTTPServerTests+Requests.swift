import HTTPServer
import Testing
import HTTPTestClient

extension HTTPServerTests {
    // MARK: - Keep-alive

    @Test func keepAliveServesSeveralRequestsOnOneConnection() throws {
        let server = try startServer { request in
            HTTPResponse(text: "\(request.method) /\(request.pathSegments.joined(separator: "/")) \(request.body.count)")
        }
        defer { server.stop() }
        let client = try TestClient(port: server.port)

        let first = try client.request("GET", "/one")
        let second = try client.request("POST", "/two", body: Array("hello".utf8))
        let third = try client.request("GET", "/three")

        #expect(first.text == "GET /one 0")
        #expect(second.text == "POST /two 5")
        #expect(third.text == "GET /three 0")
        #expect([first, second, third].allSatisfy { $0.header("Connection")?.lowercased() != "close" })
    }

    // MARK: - Path and query

    @Test func pathAndQueryArePercentDecoded() throws {
        let seen = Shared<[HTTPRequest]>([])
        let server = try startServer { request in
            seen.mutate { $0.append(request) }
            return HTTPResponse(status: .noContent)
        }
        defer { server.stop() }
        let client = try TestClient(port: server.port)

        let response = try client.request("GET", "/a/b%20c//d%2Fe/?x=1+2&y=%C3%A9&flag&z=a%2Bb&&empty=")

        #expect(response.status == 204)
        let request = try #require(seen.value.first)
        #expect(request.rawPath == "/a/b%20c//d%2Fe/")
        #expect(request.pathSegments == ["a", "b c", "d/e"])
        #expect(request.rawQuery == "x=1+2&y=%C3%A9&flag&z=a%2Bb&&empty=")
        #expect(
            request.queryItems == [
                QueryItem(name: "x", value: "1 2"),
                QueryItem(name: "y", value: "é"),
                QueryItem(name: "flag", value: ""),
                QueryItem(name: "z", value: "a+b"),
                QueryItem(name: "empty", value: ""),
            ])

        _ = try client.request("GET", "/plain")
        #expect(seen.value.last?.rawQuery == nil)
        #expect(seen.value.last?.queryItems.isEmpty == true)
    }

    @Test(arguments: [
        ("/items?good=1&bad=%zz", "bad"),
        ("/items?bad=%4", "bad"),
        ("/items?name=%FF%FE", "name"),
        ("/items?name=a%00b", "name"),
        ("/items?n%ZZme=1", "n%ZZme"),
    ])
    func malformedQueryIsABadRequestNamingTheParameter(target: String, parameter: String) throws {
        let calls = Shared(0)
        let server = try startServer { _ in
            calls.mutate { $0 += 1 }
            return HTTPResponse(status: .noContent)
        }
        defer { server.stop() }
        let client = try TestClient(port: server.port)

        let response = try client.request("GET", target)

        #expect(response.status == 400)
        #expect(response.header("Content-Type") == "application/problem+json")
        #expect(response.text.contains(#""status":400"#))
        #expect(response.text.contains(#""parameter":"\#(parameter)""#))
        #expect(calls.value == 0)
        // The connection is still usable after the rejection.
        #expect(try client.request("GET", "/fine").status == 204)
    }

    @Test(arguments: ["/a%2", "/a%GGb", "/%C3%28", "/nul%00"])
    func malformedPathIsABadRequest(target: String) throws {
        let calls = Shared(0)
        let server = try startServer { _ in
            calls.mutate { $0 += 1 }
            return HTTPResponse(status: .noContent)
        }
        defer { server.stop() }
        let client = try TestClient(port: server.port)

        let response = try client.request("GET", target)

        #expect(response.status == 400)
        #expect(response.header("Content-Type") == "application/problem+json")
        #expect(response.text.contains(#""title":"Bad Request""#))
        #expect(!response.text.contains(#""parameter""#))
        #expect(calls.value == 0)
    }

    // MARK: - Headers

    @Test func headersReachTheHandler() throws {
        let seen = Shared<[HTTPRequest]>([])
        let server = try startServer { request in
            seen.mutate { $0.append(request) }
            return HTTPResponse(status: .ok, headers: ["X-Reply": "yes", "Content-Type": "text/plain"], body: .bytes(Array("ok".utf8)))
        }
        defer { server.stop() }
        let client = try TestClient(port: server.port)

        let response = try client.request(
            "GET", "/headers",
            headers: [("X-Custom", "hello world"), ("X-Multi", "a"), ("X-Multi", "b"), ("Accept", "application/json")]
        )

        #expect(response.status == 200)
        #expect(response.header("X-Reply") == "yes")
        #expect(response.header("Content-Length") == "2")
        let request = try #require(seen.value.first)
        #expect(request.headers["x-custom"] == "hello world")
        #expect(request.headers.values(for: "X-Multi") == ["a", "b"])
        #expect(request.headers["Accept"] == "application/json")
        #expect(request.headers["Host"] == "127.0.0.1")
        #expect(request.remoteAddress?.hasPrefix("127.0.0.1:") == true)
    }
}
