#if canImport(Glibc)
import Glibc
#endif
import EventLoops
import HTTPServer
import HTTPTestClient
import Synchronization
import Testing

extension HTTPServerTests {
    /// On one event loop, a handler's blocking work runs on a worker: a
    /// quick request on another connection is answered meanwhile.
    @Test func blockingWorkRunsOffTheEventLoop() throws {
        let server = try startServer(.init(eventLoops: 1)) { request in
            guard request.pathSegments == ["slow"] else { return HTTPResponse(text: "quick") }
            return HTTPResponse.blocking {
                usleep(3_000_000)
                return HTTPResponse(text: "slow")
            }
        }
        defer { server.stop() }
        let slow = try TestClient(port: server.port)
        try slow.sendRequest("GET", "/slow")
        usleep(50_000)
        let started = ContinuousClock.now
        let quick = try TestClient(port: server.port).request("GET", "/quick")
        let elapsed = started.duration(to: .now)
        #expect(quick.text == "quick")
        #expect(elapsed < .seconds(2), "the quick request waited \(elapsed) behind the blocking one")
        #expect(try slow.readResponse().text == "slow")
        // The connection goes on after a deferred response.
        #expect(try slow.request("GET", "/quick").text == "quick")
    }

    /// A response completed later by another thread.
    @Test
    func aPromiseCompletedByAnotherThreadIsSent() throws {
        let server = try startServer(.init(eventLoops: 2)) { request in
            let path = request.rawPath
            return HTTPResponse.later { promise in
                onNewThread {
                    usleep(20_000)
                    promise.succeed(HTTPResponse(status: .created, text: "done \(path)"))
                    // Only the first completion counts.
                    promise.succeed(HTTPResponse(text: "twice"))
                }
            }
        }
        defer { server.stop() }
        let client = try TestClient(port: server.port)
        for index in 0..<3 {
            let response = try client.request("GET", "/item/\(index)")
            #expect(response.status == 201)
            #expect(response.text == "done /item/\(index)")
        }
    }

    /// A promise that completes at once, on the event loop, inside `start`.
    @Test func aPromiseCompletedAtOnceIsSent() throws {
        let server = try startServer(.init(eventLoops: 1)) { _ in
            HTTPResponse.later { $0.succeed(HTTPResponse(text: "now")) }
        }
        defer { server.stop() }
        let client = try TestClient(port: server.port)
        #expect(try client.request("GET", "/").text == "now")
        #expect(try client.request("GET", "/").text == "now")
    }

    /// Many connections at once, each a mix of immediate, blocking, later and
    /// streamed responses, all answered in full and in order.
    @Test func manyConnectionsMixDeferredResponses() throws {
        let server = try startServer(.init(eventLoops: 2)) { request in
            let kind = request.pathSegments.first ?? ""
            let number = request.pathSegments.last ?? ""
            switch kind {
            case "blocking":
                return HTTPResponse.blocking { HTTPResponse(text: "blocking \(number)") }
            case "later":
                return HTTPResponse.later { promise in onNewThread { promise.succeed(HTTPResponse(text: "later \(number)")) } }
            case "stream":
                return HTTPResponse(status: .ok, body: .stream(CountingBody(total: 200_000, pieceSize: 7_000)))
            default:
                return HTTPResponse(text: "now \(number)")
            }
        }
        defer { server.stop() }
        let failures = Atomic<Int>(0)
        let finished = Atomic<Int>(0)
        for client in 0..<16 {
            onNewThread {
                defer { finished.add(1, ordering: .relaxed) }
                guard let connection = try? TestClient(port: server.port) else {
                    failures.add(1, ordering: .relaxed)
                    return
                }
                for index in 0..<40 {
                    let kind = ["now", "blocking", "later", "stream"][(client + index) % 4]
                    guard let response = try? connection.request("GET", "/\(kind)/\(index)") else {
                        failures.add(1, ordering: .relaxed)
                        return
                    }
                    let expected = kind == "stream" ? response.body.count == 200_000 : response.text == "\(kind) \(index)"
                    if !expected { failures.add(1, ordering: .relaxed) }
                }
            }
        }
        #expect(eventually(within: 60) { finished.load(ordering: .relaxed) == 16 })
        #expect(failures.load(ordering: .relaxed) == 0)
    }

    /// A response that never comes does not keep the server from stopping:
    /// the request is answered 503 or its connection closed.
    @Test func stoppingDoesNotWaitForeverForAPendingResponse() throws {
        let kept = Shared<[ResponsePromise]>([])
        let server = try startServer(.init(shutdownTimeout: 0.3, eventLoops: 1)) { _ in
            HTTPResponse.later { promise in kept.mutate { $0.append(promise) } }
        }
        let client = try TestClient(port: server.port)
        try client.sendRequest("GET", "/never")
        #expect(eventually { kept.value.count == 1 })
        let started = ContinuousClock.now
        server.stop()
        #expect(started.duration(to: .now) < .seconds(3))
        if let response = try? client.readResponse() { #expect(response.status == 503) }
        // Completing it afterwards is harmless.
        kept.value.first?.succeed(HTTPResponse(text: "too late"))
    }

    /// Blocking work that ends after the server stopped without it: the
    /// stream it returns is never sent, and is closed all the same.
    @Test func aStreamReadyAfterTheStopIsClosed() throws {
        let body = Shared<CountingBody?>(nil)
        let server = try startServer(.init(shutdownTimeout: 0.1, eventLoops: 1)) { _ in
            HTTPResponse.blocking {
                usleep(600_000)
                let stream = CountingBody(total: 10 << 20)
                body.value = stream
                return HTTPResponse(status: .ok, body: .stream(stream))
            }
        }
        let client = try TestClient(port: server.port)
        try client.sendRequest("GET", "/late")
        usleep(100_000)
        server.stop()
        #expect(eventually { body.value?.closeCount.load(ordering: .relaxed) == 1 })
    }

    /// Each loop listens on a socket of its own on the same port: new
    /// connections are spread over the loops, and each is served on one.
    @Test func connectionsAreSpreadOverTheLoops() throws {
        let server = try startServer(.init(eventLoops: 2)) { _ in
            HTTPResponse(text: EventLoop.current?.name ?? "no loop")
        }
        defer { server.stop() }
        var names: Set<String> = []
        for _ in 0..<64 {
            let client = try TestClient(port: server.port)
            let first = try client.request("GET", "/").text
            #expect(try client.request("GET", "/").text == first, "a connection stays on its loop")
            names.insert(first)
        }
        #expect(names == ["http-1", "http-2"])
    }

    /// A port another server listens on is refused, not shared.
    @Test
    func aPortInUseIsRefused() throws {
        let first = try startServer(.init(eventLoops: 2)) { _ in HTTPResponse(text: "first") }
        defer { first.stop() }
        let second = HTTPServer(configuration: .init(port: first.port, eventLoops: 2)) { _ in HTTPResponse(text: "second") }
        #expect(throws: HTTPServer.StartError.self) { try second.start() }
        for _ in 0..<8 {
            #expect(try TestClient(port: first.port).request("GET", "/").text == "first")
        }
    }
}
