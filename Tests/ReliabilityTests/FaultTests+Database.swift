import Foundation
import HTTPTestClient
import PostgreSQL
import Testing

extension FaultTests {
    /// Holds an exclusive lock on `employees` from a connection of the
    /// test's own, so the server's queries on it wait: slow requests on demand.
    final class TableLock {
        private let connection: Connection

        init(_ cluster: FaultCluster) throws {
            connection = try cluster.connect()
            try connection.executeScript("BEGIN; LOCK TABLE employees IN ACCESS EXCLUSIVE MODE")
        }

        func release() {
            try? connection.executeScript("ROLLBACK")
            connection.close()
        }
    }

    /// Every pooled connection held by a slow request, and both connections
    /// of the pipeline (which serves `GET /employees/{n}`) stalled by one:
    /// the pipeline opens its second connection only once the first has
    /// stalled, so the second slow object request comes later. The next
    /// requests of either kind wait the acquisition timeout, then get 503
    /// with `Retry-After`; once the slow ones end, requests succeed again.
    @Test func poolExhaustedBySlowRequests() throws {
        let cluster = try FaultCluster.prepared()
        defer { cluster.stop() }
        let application = "fault-pool"
        let acquireTimeout = 0.5
        let server = try startEmployeesServer([
            "--database-url", cluster.conninfo(application: application),
            "--pool-size", "2", "--acquire-timeout", "\(acquireTimeout)", "--statement-timeout", "0",
        ])
        defer { server.stop(timeout: 5) }
        let port = try server.servingPort()
        #expect(fetch(port: port, "/employees/10001").kind == .ok)

        let lock = try TableLock(cluster)
        defer { lock.release() }
        let slow = Shared<[Outcome]>([])
        let firstObject = onNewThread { slow.append(fetch(port: port, "/employees/10001")) }
        #expect(eventually { try cluster.sessions(of: application).filter { $0.state == "active" }.count == 1 })
        usleep(200_000)
        let slowRequests = onNewThread {
            // Lists with details take pooled connections (a short list would take the pipeline's).
            onThreads(3) { index in
                slow.append(fetch(port: port, index == 0 ? "/employees/10001" : "/employees?limit=1&details=titles"))
            }
        }
        let bothWaiting = eventually { try cluster.sessions(of: application).filter { $0.state == "active" }.count == 4 }
        #expect(
            bothWaiting, "both pooled and both pipeline connections wait on the lock: \(Result { try cluster.sessions(of: application) })")

        let waiting = Shared<[Outcome]>([])
        onThreads(4) { index in
            waiting.append(fetch(port: port, index % 2 == 0 ? "/employees/10002" : "/employees?limit=3&details=titles"))
        }
        for outcome in waiting.value {
            #expect(outcome.kind == .unavailable, "\(outcome)")
            #expect(
                outcome.elapsed >= acquireTimeout - 0.05 && outcome.elapsed < acquireTimeout + 1,
                "waits the acquisition timeout: \(outcome)")
        }
        print("pool exhausted: \(waiting.value.map { String(format: "%d after %.3f s", $0.status, $0.elapsed) })")

        lock.release()
        firstObject.wait()
        slowRequests.wait()
        #expect(slow.value.count == 4 && slow.value.allSatisfy { $0.kind == .ok }, "the slow requests finish: \(slow.value)")
        let after = Shared<[Outcome]>([])
        onThreads(4) { _ in after.append(fetch(port: port, "/employees?limit=100")) }
        #expect(after.value.allSatisfy { $0.kind == .ok }, "recovered: \(after.value)")
        if !bothWaiting { print(server.output.split(separator: "\n").suffix(40).joined(separator: "\n")) }
    }

    /// A query running past the statement timeout is cancelled on the
    /// server and answered 504; the connection stays usable.
    @Test func statementTimeoutAnswers504() throws {
        let cluster = try FaultCluster.prepared()
        defer { cluster.stop() }
        let application = "fault-statement-timeout"
        let server = try startEmployeesServer([
            "--database-url", cluster.conninfo(application: application),
            "--pool-size", "2", "--statement-timeout", "0.5",
        ])
        defer { server.stop(timeout: 5) }
        let port = try server.servingPort()

        let lock = try TableLock(cluster)
        defer { lock.release() }
        for path in ["/employees/10001", "/employees?limit=10", "/employees?name=last1*&details=titles"] {
            let outcome = fetch(port: port, path)
            #expect(outcome.kind == .gatewayTimeout, "\(outcome)")
            #expect(outcome.elapsed >= 0.45 && outcome.elapsed < 2, "\(outcome)")
        }
        let sessions = try cluster.sessions(of: application)
        #expect(!sessions.contains { $0.state == "active" }, "the query was cancelled: \(sessions)")
        lock.release()
        #expect(fetch(port: port, "/employees/10001").kind == .ok)
        #expect(fetch(port: port, "/employees?limit=10").kind == .ok)
    }
}
