#if canImport(Glibc)
import Glibc
#endif
import HTTPServer
import Synchronization
import Testing
import HTTPTestClient

extension HTTPServerTests {
    @Test func stopLetsAnInFlightRequestFinishAndRefusesNewConnections() throws {
        let entered = Shared(false)
        let released = Shared(false)
        // The work runs off the event loop until the test has seen the
        // listener closed, however slow the machine.
        let server = try startServer { _ in
            HTTPResponse.blocking {
                entered.value = true
                _ = eventually(within: 10) { released.value }
                return HTTPResponse(text: "slow and done")
            }
        }
        let port = server.port
        let client = try TestClient(port: port)
        try client.sendRequest("GET", "/slow")
        #expect(eventually { entered.value })

        let stopped = Shared(false)
        onNewThread {
            server.stop()
            stopped.value = true
        }
        // The listening socket closes at once; the slow request goes on.
        #expect(
            eventually {
                (try? TestClient(port: port)) == nil
            }, "new connections are refused once stop() has begun")
        #expect(!stopped.value)
        released.value = true

        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "slow and done")
        #expect(response.header("Connection") == "close")
        #expect(eventually { stopped.value })
        #expect(server.port == 0)
        #expect(throws: TestClient.Failure.connect(errno: ECONNREFUSED)) { try TestClient(port: port) }
    }

    @Test func runUntilSignalledReturnsAfterSIGTERMOnceTheRequestIsDone() throws {
        let entered = Shared(false)
        let server = try startServer { _ in
            entered.value = true
            usleep(500_000)
            return HTTPResponse(text: "finished")
        }
        let returned = Shared(false)
        onNewThread {
            server.runUntilSignalled()
            returned.value = true
        }
        #expect(eventually { terminationHandlerInstalled() }, "runUntilSignalled installs its SIGTERM handler")

        let client = try TestClient(port: server.port)
        try client.sendRequest("GET", "/slow")
        #expect(eventually { entered.value })
        kill(getpid(), SIGTERM)

        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "finished")
        #expect(eventually { returned.value })
        #expect(server.port == 0)
        #expect(!terminationHandlerInstalled(), "the previous SIGTERM disposition is restored")
    }
}

/// Whether SIGTERM has a handler (rather than the default or ignore).
private func terminationHandlerInstalled() -> Bool {
    var current = sigaction()
    sigaction(SIGTERM, nil, &current)
    return unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) > 1
}
