import Foundation
import PostgreSQL
import Testing

@Suite struct ConnectionPoolTests {
    @Test func reusesConnectionsUpToItsSize() throws {
        let pool = TestDatabase.pool(size: 2)
        let first = try pool.withConnection { $0.backendPID }
        let second = try pool.withConnection { $0.backendPID }
        #expect(first == second)
        #expect(pool.openConnectionCount == 1)
    }

    @Test func exhaustionTimesOut() throws {
        let pool = TestDatabase.pool(size: 2, acquireTimeout: .milliseconds(200))
        let a = try pool.acquire()
        let b = try pool.acquire()
        let started = ContinuousClock.now
        #expect(throws: PoolTimeoutError.self) { _ = try pool.acquire() }
        #expect(ContinuousClock.now - started >= .milliseconds(190))
        pool.release(a)
        let c = try pool.acquire()
        #expect(c.backendPID == a.backendPID)
        pool.release(b)
        pool.release(c)
    }

    @Test func waiterGetsConnectionReleasedByAnotherThread() throws {
        let pool = TestDatabase.pool(size: 1, acquireTimeout: .seconds(5))
        let holding = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let held = try? pool.acquire()
            holding.signal()
            Thread.sleep(forTimeInterval: 0.2)
            if let held { pool.release(held) }
            done.signal()
        }
        holding.wait()
        let started = ContinuousClock.now
        let pid = try pool.withConnection { $0.backendPID }
        #expect(ContinuousClock.now - started >= .milliseconds(100))
        #expect(pid != 0)
        done.wait()
    }

    @Test func recoversAfterAllConnectionsAreTerminated() throws {
        let pool = TestDatabase.pool(size: 3)
        let connections = try (0..<3).map { _ in try pool.acquire() }
        let pids = connections.map(\.backendPID)
        connections.forEach(pool.release)
        let killer = try TestDatabase.connect()
        for pid in pids {
            try killer.execute("SELECT pg_terminate_backend(:pid, 5000)", ["pid": pid])
        }
        for _ in 0..<6 {
            #expect(try pool.withConnection { try $0.fetchOne(Int.self, "SELECT 1") } == 1)
        }
        let fresh = try pool.withConnection { $0.backendPID }
        #expect(!pids.contains(fresh))
        #expect(pool.openConnectionCount <= 3)
    }

    @Test func releaseRollsBackAndCancels() throws {
        let pool = TestDatabase.pool(size: 1)
        let connection = try pool.acquire()
        try connection.executeScript("BEGIN")
        let rows = try connection.query("SELECT generate_series(1, 10000000)")
        _ = try rows.next()
        pool.release(connection)
        let clean = try pool.withConnection { connection in
            (connection.isInTransaction, try connection.fetchOne(Int.self, "SELECT 2"))
        }
        #expect(clean.0 == false)
        #expect(clean.1 == 2)
    }

    @Test func transactionsThroughThePool() throws {
        try TestDatabase.withScratchSchema("CREATE TABLE t(id int)") { schema in
            let pool = TestDatabase.pool(size: 1)
            try pool.transaction { try $0.execute("INSERT INTO \(schema).t VALUES (1)") }
            struct Failure: Error {}
            #expect(throws: Failure.self) {
                try pool.transaction { connection in
                    try connection.execute("INSERT INTO \(schema).t VALUES (2)")
                    throw Failure()
                }
            }
            #expect {
                try pool.transaction(readOnly: true) { try $0.execute("INSERT INTO \(schema).t VALUES (3)") }
            } throws: { ($0 as? DatabaseError)?.code == .readOnlySQLTransaction }
            #expect(try pool.withConnection { try $0.fetchAll(Int.self, "SELECT id FROM \(schema).t") } == [1])
        }
    }

    @Test func statementTimeoutFromConfiguration() throws {
        let pool = ConnectionPool(.init(conninfo: "", size: 1, statementTimeout: .milliseconds(50)))
        #expect {
            try pool.withConnection { try $0.execute("SELECT pg_sleep(1)") }
        } throws: { ($0 as? DatabaseError)?.code == .queryCanceled }
    }
}
