import Foundation
import Testing
import HTTPTestClient

/// Faults survived (issue 6): each test runs the built `employees-server`
/// against a private cluster of its own (``FaultCluster``), which the tests
/// stop and restart, so they run one at a time.
///
/// ```sh
/// swift test --filter ReliabilityTests
/// ```
@Suite(.serialized) struct FaultTests {
    /// The database is down when the service starts: it starts anyway,
    /// reports not ready, fails data requests fast with 503 and
    /// `Retry-After`, and serves once the database is up, without a restart.
    @Test func databaseDownWhenTheServiceStarts() throws {
        let cluster = try FaultCluster.prepared()
        defer { cluster.stop() }
        cluster.stop()
        #expect(!cluster.isRunning)

        let server = try startEmployeesServer(["--database-url", cluster.conninfo(application: "fault-down")])
        defer { server.stop(timeout: 5) }
        let port = try server.servingPort()

        #expect(fetch(port: port, "/health/live").kind == .ok)
        let ready = fetch(port: port, "/health/ready")
        #expect(ready.status == 503 && ready.retryAfter != nil, "\(ready)")
        for path in ["/employees/10001", "/employees?limit=5", "/departments"] {
            let outcome = fetch(port: port, path)
            #expect(outcome.kind == .unavailable, "\(outcome)")
            #expect(outcome.elapsed < 0.5, "fails fast: \(outcome)")
        }

        try cluster.start()
        let cameBackAt = now()
        #expect(eventually(timeout: 5) { fetch(port: port, "/employees/10001").kind == .ok })
        print("database down at start: first success \(String(format: "%.3f", now() - cameBackAt)) s after the cluster was up")
        #expect(fetch(port: port, "/health/ready").status == 204)
        let list = fetch(port: port, "/employees?limit=5")
        #expect(list.kind == .ok, "\(list)")
        #expect(server.isRunning)
    }

    /// `pg_ctl restart -m fast` while requests run: no crash, every failure
    /// is a 503 or an aborted stream, none hangs, and everything succeeds
    /// again within 2 s of the database being back.
    @Test func databaseRestartedUnderLoad() throws {
        let cluster = try FaultCluster.prepared()
        defer { cluster.stop() }
        let statementTimeout = 5.0
        let server = try startEmployeesServer([
            "--database-url", cluster.conninfo(application: "fault-restart"),
            "--pool-size", "8", "--acquire-timeout", "2", "--statement-timeout", "\(statementTimeout)",
        ])
        defer { server.stop(timeout: 5) }
        let port = try server.servingPort()

        let paths = ["/employees/10001", "/employees?limit=3000", "/employees?name=first1*&limit=200", "/health/ready", "/departments"]
        let running = Shared(true)
        let outcomes = Shared<[Outcome]>([])
        let load = onNewThread {
            onThreads(6) { worker in
                var index = worker
                while running.value {
                    let outcome = fetch(port: port, paths[index % paths.count], timeout: Int(statementTimeout) + 5)
                    outcomes.mutate { $0.append(outcome) }
                    index += 1
                }
            }
        }

        usleep(1_000_000)
        let restartBegan = now()
        try cluster.restart()
        let backAt = now()
        usleep(3_000_000)
        running.value = false
        load.wait()

        let all = outcomes.value
        let failures = all.filter { $0.kind != .ok }
        let duringOutage = failures.filter { $0.endedAt >= restartBegan }
        print(
            "database restart under load: \(all.count) requests, \(failures.count) not OK; restart took \(String(format: "%.3f", backAt - restartBegan)) s"
        )
        for kind in Set(failures.map { "\($0.kind)" }).sorted() {
            print("  \(failures.filter { "\($0.kind)" == kind }.count) × \(kind)")
        }
        for failure in failures.prefix(20) { print("  \(failure)") }
        if let lastFailure = failures.map(\.endedAt).max() {
            print("database restart under load: last failure \(String(format: "%.3f", lastFailure - backAt)) s after the database was back")
        }

        #expect(server.isRunning, "the server survived")
        #expect(duringOutage.count == failures.count, "no failure before the restart began")
        for failure in failures {
            switch failure.kind {
            case .unavailable, .abortedStream: break
            default: Issue.record("not a 503 or an aborted stream: \(failure)")
            }
            #expect(failure.elapsed < statementTimeout + 1, "no hang past the timeout: \(failure)")
        }
        let afterRecovery = all.filter { $0.startedAt > backAt + 2 }
        #expect(afterRecovery.count > 20)
        #expect(afterRecovery.allSatisfy { $0.kind == .ok }, "\(afterRecovery.filter { $0.kind != .ok })")
    }

    /// 1,000 streams of the full employees list, each dropped after its
    /// first chunk: every pooled connection is idle and usable afterwards,
    /// no query is left running, and the server's memory did not grow.
    @Test func clientsDisconnectingMidStream() throws {
        let cluster = try FaultCluster.prepared()
        defer { cluster.stop() }
        let application = "fault-disconnect"
        let poolSize = 4
        let server = try startEmployeesServer([
            "--database-url", cluster.conninfo(application: application), "--pool-size", "\(poolSize)",
        ])
        defer { server.stop(timeout: 5) }
        let port = try server.servingPort()

        let dropped = Shared(0)
        let problems = Shared<[String]>([])
        func dropStreams(_ count: Int) {
            let threads = poolSize  // more would only queue for the pool
            onThreads(threads) { worker in
                for _ in stride(from: worker, to: count, by: threads) {
                    do {
                        let client = try TestClient(port: port, timeoutSeconds: 30)
                        try client.sendRequest("GET", "/employees")
                        let head = try client.readHead()
                        guard head.status == 200 else {
                            problems.mutate { $0.append("status \(head.status)") }
                            continue
                        }
                        do {
                            try client.waitForBodyBytes(16_384)
                            dropped.mutate { $0 += 1 }
                        } catch {
                            problems.mutate { $0.append("after the head \(head.headers): \(error)") }
                        }
                    } catch {
                        problems.mutate { $0.append("before the head: \(error)") }
                    }
                }
            }
        }

        dropStreams(100)  // warm-up: threads, pool, prepared statements, allocator
        #expect(fetch(port: port, "/employees?limit=10").kind == .ok)
        usleep(300_000)
        let rssBefore = server.residentKilobytes
        let started = now()
        dropStreams(1000)
        let elapsed = now() - started
        #expect(problems.value.isEmpty, "\(problems.value.prefix(5))")
        if !problems.value.isEmpty {
            let lines = server.output.split(separator: "\n")
            print(
                lines.filter { !$0.contains("libmicrohttpd: Failed to send") && !$0.contains(" 200 ") }.suffix(40).joined(separator: "\n"))
        }
        #expect(dropped.value == 1100)

        let settled = eventually(timeout: 5) {
            try cluster.sessions(of: application).allSatisfy { $0.state == "idle" }
        }
        let sessions = try cluster.sessions(of: application)
        #expect(settled, "sessions left busy: \(sessions)")
        // The pool's, and the two of the event loop's batcher, which tried each list for a short one.
        #expect(sessions.count <= poolSize + 2)
        #expect(!sessions.contains { $0.state == "active" }, "no query left running")

        // Every pooled connection usable: as many complete requests at once as the pool holds, twice.
        let outcomes = Shared<[Outcome]>([])
        onThreads(poolSize * 2) { _ in outcomes.append(fetch(port: port, "/employees?limit=1000")) }
        #expect(outcomes.value.allSatisfy { $0.kind == .ok }, "\(outcomes.value)")
        usleep(300_000)
        let rssAfter = server.residentKilobytes
        print(
            "client disconnects: 1,000 streams dropped after the first chunk in \(String(format: "%.1f", elapsed)) s; server RSS \(rssBefore) kB before, \(rssAfter) kB after (\(String(format: "%+.1f", Double(rssAfter - rssBefore) / Double(rssBefore) * 100))%); sessions afterwards: \(sessions.map(\.state))"
        )
        #expect(Double(rssAfter) <= Double(rssBefore) * 1.10, "RSS within 10%: \(rssBefore) kB → \(rssAfter) kB")
    }
}
