#if canImport(Glibc)
import Glibc
#endif
import HTTPServer
import Testing
import HTTPTestClient

extension HTTPServerTests {
    @Test
    func aLargeStreamIsReadInFullWhileServerMemoryStaysFlat() throws {
        let total = 128 << 20
        let body = Shared<CountingBody?>(nil)
        let server = try startServer(.init(eventLoops: 2)) { request in
            guard request.pathSegments == ["big"] else { return HTTPResponse(text: "small") }
            let stream = CountingBody(total: total)
            body.value = stream
            return HTTPResponse(status: .ok, headers: ["Content-Type": "application/octet-stream"], body: .stream(stream))
        }
        defer { server.stop() }
        let client = try TestClient(port: server.port)
        let residentBefore = processMemory("VmRSS")
        var received = 0
        var residentPeak = residentBefore
        var nextSample = 8 << 20
        var firstMismatch: Int?

        try client.sendRequest("GET", "/big")
        let response = try client.readResponse { bytes in
            if firstMismatch == nil && received < 4 << 20 {
                for (offset, byte) in bytes.enumerated() where byte != UInt8(truncatingIfNeeded: ((received + offset) % (64 << 10)) % 251) {
                    firstMismatch = received + offset
                    break
                }
            }
            received += bytes.count
            if received >= nextSample {
                residentPeak = max(residentPeak, processMemory("VmRSS"))
                nextSample += 8 << 20
            }
        }

        #expect(response.status == 200)
        #expect(response.header("Transfer-Encoding") == "chunked")
        #expect(received == total)
        #expect(firstMismatch == nil)
        let growth = residentPeak - residentBefore
        #expect(growth < 30 << 20, "RSS grew by \(growth >> 20) MiB while streaming \(total >> 20) MiB")
        #expect(eventually { body.value?.closeCount.load(ordering: .relaxed) == 1 })
        // The connection is still usable: the chunked body ended properly.
        #expect(try client.request("GET", "/again").text == "small")
    }

    @Test
    func aClientThatStopsReadingStopsTheProducer() throws {
        let body = Shared<CountingBody?>(nil)
        let server = try startServer(.init(eventLoops: 2)) { _ in
            let stream = CountingBody(total: 1 << 30)
            body.value = stream
            return HTTPResponse(status: .ok, body: .stream(stream))
        }
        defer { server.stop() }
        let client = try TestClient(port: server.port, receiveBufferSize: 64 << 10)

        try client.sendRequest("GET", "/endless")
        #expect(eventually { (body.value?.produced.load(ordering: .relaxed) ?? 0) > 0 })
        usleep(1_500_000)
        let producedWhileStalled = body.value?.produced.load(ordering: .relaxed) ?? 0
        usleep(500_000)
        let producedLater = body.value?.produced.load(ordering: .relaxed) ?? 0

        #expect(producedWhileStalled < 8 << 20, "pulled \(producedWhileStalled) bytes for a client that reads nothing")
        #expect(producedLater == producedWhileStalled, "the producer is not pulled while the socket is full")

        // The client going away ends the response and closes the producer,
        // at the latest when the connection timeout (30 s) ends it.
        _ = consume client
        #expect(eventually(within: 35) { body.value?.closeCount.load(ordering: .relaxed) == 1 })
    }

    /// A client that leaves while the first block is pulled (a query
    /// running): the block comes once the connection is suspended, and
    /// libmicrohttpd, resumed, finds the socket closed and ends the request
    /// without asking for the response. The body made ready for it is
    /// closed all the same, so that a database connection is not held for good.
    @Test(arguments: [false, true])
    func aClientThatLeavesBeforeTheFirstBlockHasItsBodyClosed(longBody: Bool) throws {
        let bodies = Shared<[SlowStartBody]>([])
        let server = try startServer(.init(eventLoops: 1)) { _ in
            let stream = SlowStartBody(total: longBody ? 1 << 20 : 100, delay: 300_000)
            bodies.mutate { $0.append(stream) }
            return HTTPResponse(status: .ok, body: .stream(stream))
        }
        defer { server.stop() }
        for _ in 0..<5 {
            let client = try TestClient(port: server.port)
            try client.sendRequest("GET", "/slow")
            usleep(50_000)
            client.resetWhenClosed()
            _ = consume client
        }
        // Each request the server read (a slow server may get a reset
        // before it reads one) has its body closed, exactly once.
        #expect(
            eventually(within: 10) { !bodies.value.isEmpty && bodies.value.allSatisfy { $0.closeCount.load(ordering: .relaxed) == 1 } },
            "closed: \(bodies.value.map { $0.closeCount.load(ordering: .relaxed) })")
        usleep(200_000)
        #expect(
            eventually(within: 10) { bodies.value.allSatisfy { $0.closeCount.load(ordering: .relaxed) == 1 } }, "each closed exactly once")
        #expect(try TestClient(port: server.port).request("GET", "/after").status == 200)
    }

    @Test
    func aFailingProducerAbortsTheResponseWithoutTheFinalChunk() throws {
        let body = Shared<CountingBody?>(nil)
        let server = try startServer(.init(eventLoops: 2)) { _ in
            let stream = CountingBody(total: 10 << 20, pieceSize: 1000, failAfter: 3)
            body.value = stream
            return HTTPResponse(status: .ok, body: .stream(stream))
        }
        defer { server.stop() }
        let client = try TestClient(port: server.port)
        var received = 0

        try client.sendRequest("GET", "/failing")
        #expect(throws: TestClient.Failure.missingFinalChunk) {
            _ = try client.readResponse { received += $0.count }
        }

        #expect(received == 3000, "what was produced before the failure is sent")
        #expect(eventually { body.value?.closeCount.load(ordering: .relaxed) == 1 })
        usleep(100_000)
        #expect(body.value?.closeCount.load(ordering: .relaxed) == 1, "close() is called exactly once")
    }

    @Test
    func headSendsNoBodyAndStillClosesTheStream() throws {
        let body = Shared<CountingBody?>(nil)
        let server = try startServer(.init(eventLoops: 2)) { request in
            if request.pathSegments == ["stream"] {
                let stream = CountingBody(total: 1 << 20)
                body.value = stream
                return HTTPResponse(status: .ok, body: .stream(stream))
            }
            if request.pathSegments == ["short-stream"] {
                return HTTPResponse(status: .ok, body: .stream(CountingBody(total: 300, pieceSize: 100)))
            }
            return HTTPResponse(text: "twelve bytes")
        }
        defer { server.stop() }
        let client = try TestClient(port: server.port)

        let fixed = try client.request("HEAD", "/fixed")
        #expect(fixed.status == 200)
        #expect(fixed.header("Content-Length") == "12")
        #expect(fixed.body.isEmpty)

        // Framing stayed right: the next response on the connection parses.
        let next = try client.request("GET", "/fixed")
        #expect(next.text == "twelve bytes")

        // A stream that ends within its first block: the GET's Content-Length.
        let short = try client.request("HEAD", "/short-stream")
        #expect(short.header("Content-Length") == "300")
        #expect(short.header("Transfer-Encoding") == nil)
        #expect(short.body.isEmpty)
        #expect(try client.request("GET", "/short-stream").body.count == 300)

        // A longer one is chunked, as its GET, and only its first block is
        // pulled. The response ends its connection (libmicrohttpd would
        // otherwise leave a stray final chunk on it).
        let streamed = try TestClient(port: server.port).request("HEAD", "/stream")
        #expect(streamed.status == 200)
        #expect(streamed.header("Transfer-Encoding") == "chunked")
        #expect(streamed.header("Connection") == "close")
        #expect(streamed.body.isEmpty)
        #expect(eventually { body.value?.closeCount.load(ordering: .relaxed) == 1 })
        #expect((body.value?.produced.load(ordering: .relaxed) ?? 0) <= 128 << 10)
    }
}
