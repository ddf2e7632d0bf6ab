import Foundation
import Testing
#if canImport(Glibc)
import Glibc
import HTTPTestClient
#endif

extension FaultTests {
    /// A client sending its header fields one byte per second is
    /// disconnected once the connection timeout has passed, though every
    /// byte arrives well within the timeout of the one before.
    @Test func slowHeadersAreCutOffByTheConnectionTimeout() throws {
        let cluster = try FaultCluster.prepared()
        defer { cluster.stop() }
        let timeout = 2
        let server = try startEmployeesServer([
            "--database-url", cluster.conninfo(application: "fault-slow"), "--connection-timeout", "\(timeout)",
        ])
        defer { server.stop(timeout: 5) }
        let port = try server.servingPort()

        // A request that would take a minute at this pace; no more than
        // timeout + 5 bytes are sent, so a server that never cuts it off fails in seconds.
        let request = Array("GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow\r\n\r\n".utf8).prefix(timeout + 5)
        let client = try TestClient(port: port)
        let started = now()
        let sent = client.sendSlowly(Array(request), interval: 1)
        let elapsed = now() - started
        print("slow client: disconnected after \(sent) of \(request.count) bytes, \(String(format: "%.1f", elapsed)) s")
        #expect(sent < request.count, "the server closed the connection before the request was complete")
        #expect(elapsed < Double(timeout) + 2.5)
        #expect(fetch(port: port, "/health/live").kind == .ok, "other clients are served")
    }

    /// A flood of idle connections, three times the cap: the server never
    /// holds more than the cap, and a normal client is served within the
    /// connection timeout (the idle ones are closed then), immediately once
    /// the flood is gone.
    ///
    /// The cap is a hard limit: while it is reached, the server's accept
    /// policy refuses new connections at once (libmicrohttpd closes them),
    /// so a client is refused rather than queued. What keeps normal
    /// requests served is that a connection that sends no complete request
    /// within the connection timeout is closed (``ConnectionDeadline``), so
    /// slots free up within that time and a client that retries, as HTTP
    /// clients do on a refused connection, gets in.
    @Test func idleConnectionFloodIsCappedAndTimedOut() throws {
        let cluster = try FaultCluster.prepared()
        defer { cluster.stop() }
        let timeout = 2
        let cap = 16
        let server = try startEmployeesServer([
            "--database-url", cluster.conninfo(application: "fault-flood"),
            "--connection-timeout", "\(timeout)", "--max-connections", "\(cap)",
        ])
        defer { server.stop(timeout: 5) }
        let port = try server.servingPort()
        #expect(fetch(port: port, "/employees/10001").kind == .ok)
        usleep(200_000)
        let baselineThreads = server.threadCount

        var idle: [TestClient] = []
        for _ in 0..<(cap * 3) {
            if let client = try? TestClient(port: port, timeoutSeconds: 10) { idle.append(client) }
        }
        usleep(500_000)
        let floodedThreads = server.threadCount
        print("idle flood: \(idle.count) connections opened against a cap of \(cap); server threads \(baselineThreads) → \(floodedThreads)")
        #expect(floodedThreads <= baselineThreads + cap + 2, "the cap holds")

        // A normal client retries a refused connection, as HTTP clients do.
        let firstTry = now()
        var attempts = 0
        var normal = fetch(port: port, "/employees/10001", timeout: timeout + 5)
        while normal.kind == .refused, now() - firstTry < Double(timeout) * 3 {
            attempts += 1
            usleep(100_000)
            normal = fetch(port: port, "/employees/10001", timeout: timeout + 5)
        }
        let servedAfter = now() - firstTry
        print(
            "idle flood: a normal request during the flood was served after \(String(format: "%.2f", servedAfter)) s and \(attempts) refused attempt(s): \(normal)"
        )
        #expect(normal.kind == .ok, "\(normal)")
        #expect(servedAfter < Double(timeout) + 1.5, "served within the connection timeout")

        #expect(
            eventually(timeout: Double(timeout) * 3 + 2) { server.threadCount <= baselineThreads + 2 },
            "idle connections are closed: \(server.threadCount) threads")
        let after = fetch(port: port, "/employees/10001")
        #expect(after.kind == .ok && after.elapsed < 0.5, "\(after)")
        idle.removeAll()
    }

    /// SIGTERM while requests run: those in flight complete, new
    /// connections are refused, and the process exits with status 0.
    @Test func sigtermUnderLoad() throws {
        let cluster = try FaultCluster.prepared()
        defer { cluster.stop() }
        let shutdownTimeout = 10.0
        let server = try startEmployeesServer([
            "--database-url", cluster.conninfo(application: "fault-sigterm"),
            "--shutdown-timeout", "\(shutdownTimeout)",
        ])
        defer { server.stop(timeout: 5) }
        let port = try server.servingPort()

        let signalledAt = Shared<Double>(.infinity)
        let outcomes = Shared<[Outcome]>([])
        let fullList = Shared<Outcome?>(nil)
        let load = onNewThread {
            onThreads(5) { worker in
                if worker == 0 {
                    // A long stream (the whole table) begun just before the signal.
                    usleep(700_000)
                    fullList.value = fetch(port: port, "/employees", timeout: 30)
                    return
                }
                let paths = ["/employees?limit=2000", "/employees/10001", "/departments", "/employees?name=first2*&limit=100"]
                var index = worker
                while now() < signalledAt.value + 1 {
                    let outcome = fetch(port: port, paths[index % paths.count])
                    outcomes.mutate { $0.append(outcome) }
                    index += 1
                    if outcome.kind == .refused { usleep(50_000) }
                }
            }
        }
        usleep(1_000_000)
        signalledAt.value = now()
        server.send(SIGTERM)
        let status = server.wait(timeout: shutdownTimeout + 5)
        let exitedAt = now()
        load.wait()

        let all = outcomes.value
        let refused = all.filter { $0.kind == .refused }
        let others = all.filter { $0.kind != .ok && $0.kind != .refused }
        let completedAfterSignal = all.filter { $0.kind == .ok && $0.endedAt > signalledAt.value }
        print(
            "SIGTERM under load: exit status \(status.map(String.init) ?? "none") after \(String(format: "%.3f", exitedAt - signalledAt.value)) s; \(all.count) requests, \(completedAfterSignal.count) completed after the signal, \(refused.count) refused, \(others.count) other"
        )
        for outcome in others.prefix(10) { print("  \(outcome)") }

        #expect(status == 0)
        #expect(others.isEmpty, "every request either completed or was refused")
        // A refusal is judged by when it came back: a thread can be preempted
        // between noting the start and calling connect, on a loaded machine
        // for longer than the time left before the signal.
        #expect(refused.allSatisfy { $0.endedAt > signalledAt.value }, "refusals only after the signal")
        #expect(all.filter { $0.startedAt > signalledAt.value + 0.2 }.allSatisfy { $0.kind == .refused }, "no new request accepted")
        let list = try #require(fullList.value)
        #expect(list.kind == .ok, "the long stream in flight completed: \(list)")
        #expect(list.endedAt > signalledAt.value, "it was in flight at the signal: \(list)")
        #expect(list.bodyBytes > 20_000_000, "\(list)")
    }
}
