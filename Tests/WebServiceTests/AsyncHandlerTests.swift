import Foundation
import HTTPTestClient
import Locking
import Testing
import WebService

/// Statuses recorded by several threads.
private final class Statuses: Sendable {
    private let statuses = Locked<[Int]>([])
    func append(_ status: Int) { statuses.withLock { $0.append(status) } }
    var all: [Int] { statuses.withLock { $0 } }
}

/// Holds the threads that pass it until it is opened.
private final class Gate: @unchecked Sendable {
    // `@unchecked Sendable`: every stored property is touched with `condition` locked.
    private let condition = NSCondition()
    private var isOpen = false
    private var waiters = 0

    var waiting: Int {
        condition.lock()
        defer { condition.unlock() }
        return waiters
    }

    /// Blocks until the gate opens; returns how many waited with this one.
    func pass() -> Int {
        condition.lock()
        defer { condition.unlock() }
        waiters += 1
        condition.broadcast()
        while !isOpen { condition.wait() }
        return waiters
    }

    func waitForWaiters(_ count: Int, seconds: Double) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: seconds)
        while waiters < count { if !condition.wait(until: deadline) { return false } }
        return true
    }

    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }
}

private let gate = Gate()

/// `async` handlers, next to synchronous ones.
private struct AsyncService: WebService {
    let path = "/async"
    let description = "Async handlers."

    var routes: [Route] {
        Route(.get, "/blocking") { () async -> Int in
            gate.pass()  // Blocks its thread until the test opens the gate, as a careless async library might.
        }
        Route(.get, "/awaiting", Parameter<Int>("ms")) { (ms: Int) async throws -> Int in
            try await Task.sleep(for: .milliseconds(ms))
            return ms
        }
        Route(.get, "/fails") { () async throws -> Int in
            throw HTTPError(.conflict, detail: "Not now.")
        }
        Route(.post, "/nothing") { () async -> Void in }
        Route(.get, "/echo", Parameter<String>("text")) { text in text }
    }
}

/// Async handlers on a real event-loop server with a single loop: they run
/// as tasks on the worker threads, so one that blocks never stalls the loop.
@Suite("Async handlers over a socket", .serialized)
final class AsyncHandlerTests {
    let server: HTTPServer

    init() throws {
        let router = try WebServiceRouter(services: [AsyncService()])
        server = HTTPServer(configuration: .init(port: 0, eventLoops: 1)) { router.respond(to: $0) }
        try server.start()
    }

    deinit {
        server.stop()
    }

    /// `method` `target` on a connection of its own.
    func send(_ method: String, _ target: String) throws -> TestClient.Response {
        try TestClient.request(method, target, port: server.port, timeoutSeconds: 30)
    }

    @Test("async handlers that block hold up workers, not the event loop")
    func blockingHandlerDoesNotStallOthers() async throws {
        // Three requests on threads and sockets of their own.
        let port = server.port
        let statuses = Statuses()
        let threads = (0..<3).map { _ in
            Thread {
                let status = (try? TestClient.request("GET", "/async/blocking", port: port, timeoutSeconds: 600).status) ?? -1
                statuses.append(status)
            }
        }
        for thread in threads { thread.start() }
        #expect(gate.waitForWaiters(3, seconds: 60), "the three handlers are blocking their threads")
        // With the three blocked, other requests are served, async or not.
        let echo = try send("GET", "/async/echo?text=hi")
        let awaited = try send("GET", "/async/awaiting?ms=10")
        #expect(echo.status == 200 && echo.text == "\"hi\"")
        #expect(awaited.status == 200 && awaited.text == "10")
        #expect(gate.waiting == 3, "answered while the blocking handlers still block")
        gate.open()
        for _ in 0..<6000 where statuses.all.count < 3 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(statuses.all == [200, 200, 200])
    }

    @Test("five hundred concurrent async requests all answer, each its own value")
    func underLoad() async throws {
        // Five hundred connections at once, each request on a thread of its own.
        let port = server.port
        let answers = Locked<[(index: Int, status: Int, body: String)]>([])
        for index in 0..<500 {
            Thread {
                let reply = try? TestClient.request("GET", "/async/awaiting?ms=\(index % 20)", port: port, timeoutSeconds: 30)
                answers.withLock { $0.append((index, reply?.status ?? -1, reply?.text ?? "")) }
            }.start()
        }
        for _ in 0..<6000 where answers.withLock({ $0.count }) < 500 { try await Task.sleep(for: .milliseconds(10)) }
        let all = answers.withLock { $0 }
        #expect(all.count == 500)
        for (index, status, body) in all {
            #expect(status == 200 && body == "\(index % 20)")
        }
    }

    @Test("an error thrown by an async handler is its problem document; Void is 204")
    func errorsAndVoid() throws {
        let failed = try send("GET", "/async/fails")
        #expect(failed.status == 409)
        #expect(failed.header("Content-Type") == "application/problem+json")
        #expect(failed.text.contains("Not now."))
        #expect(try send("POST", "/async/nothing").status == 204)
        #expect(try send("GET", "/async/awaiting?ms=x").status == 400)
    }
}
