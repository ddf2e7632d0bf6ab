import EmployeesService
import Foundation
import HTTPTestClient
import PostgreSQL
import PostgreSQLWebService
import Locking
import Testing
import WebService

/// Routes that make PostgreSQL fail in chosen ways, run by the real server
/// as `employees_reader`, to check the SQLSTATE → HTTP mapping of
/// `PostgreSQLWebService` end to end.
struct FailingService: WebService {
    let path = "/fail"
    let description = "Runs SQL that fails with a chosen SQLSTATE."
    let pool: ConnectionPool

    /// A value bound as a parameter; it must never come back in a body.
    static let secret = "secret-4711-value"

    var routes: [Route] {
        Route(.get, "/invalid-text", Parameter<String>("value")) { (value: String) throws -> Int in
            try pool.withConnection { try $0.fetchOne(Int.self, "SELECT CAST(:value AS integer) AS value", ["value": value]) ?? 0 }
        }
        Route(.get, "/unique", Parameter<String>("value")) { (value: String) throws -> Void in
            try pool.transaction { connection in
                try connection.executeScript("CREATE TEMP TABLE bridge_unique (key text PRIMARY KEY) ON COMMIT DROP")
                _ = try connection.execute("INSERT INTO bridge_unique VALUES (:value)", ["value": value])
                _ = try connection.execute("INSERT INTO bridge_unique VALUES (:value)", ["value": value])
            }
        }
        Route(.get, "/write", Parameter<String>("value")) { (value: String) throws -> Void in
            try pool.withConnection {
                _ = try $0.execute("UPDATE departments SET dept_name = :value WHERE false", ["value": value])
            }
        }
        Route(.get, "/timeout") { () throws -> Void in
            try pool.transaction { connection in
                try connection.executeScript("SET LOCAL statement_timeout = 100")
                _ = try connection.execute("SELECT pg_sleep(5)")
            }
        }
        Route(.get, "/terminate") { () throws -> Void in
            try pool.withConnection { _ = try $0.execute("SELECT pg_terminate_backend(pg_backend_pid())") }
        }
        Route(.get, "/divide", Parameter<Int>("by")) { (by: Int) throws -> Int in
            try pool.withConnection { try $0.fetchOne(Int.self, "SELECT 1 / CAST(:by AS integer) AS value", ["by": by]) ?? 0 }
        }
        Route(.get, "/internal") { () throws -> Void in
            try pool.withConnection { try $0.executeScript("DO $$ BEGIN RAISE EXCEPTION 'inside' USING ERRCODE = 'XX001'; END $$") }
        }
        Route(.get, "/stream", Parameter<String>("value")) { value in
            Query.list("SELECT CAST(:value AS date) AS day", ["value": value])
        }
    }
}

@Suite("Database failures through PostgreSQLWebService: SQLSTATEs and the pool", .serialized)
struct SQLStateBridgeTests {
    func withServer<R>(
        poolSize: Int = 2, acquireTimeout: Duration = .seconds(5),
        _ body: (ConnectionPool, Int) throws -> R
    ) throws -> R {
        let pool = try TestEnvironment.pool(size: poolSize, acquireTimeout: acquireTimeout)
        let server = try TestServer.serve(
            [FailingService(pool: pool), EmployeesService(), DepartmentsService()], runner: QueryRunner(pool: pool))
        try server.start()
        defer { server.stop(); pool.close() }
        return try body(pool, server.port)
    }

    func expectProblem(_ reply: TestClient.Response, status: Int, sqlState: String?, _ comment: Comment? = nil) {
        #expect(reply.status == status, comment)
        #expect(reply.header("Content-Type") == "application/problem+json", comment)
        #expect(reply.object["status"] as? Int == status, comment)
        if let sqlState { #expect(reply.object["sqlState"] as? String == sqlState, comment) }
        #expect(!reply.text.contains(FailingService.secret), "bound value echoed: \(reply.text)")
        // The server's messages never reach the client; a violated constraint is named (`constraint`), its values are not.
        for leak in ["syntax", "duplicate key", "permission denied", "canceling statement", "terminating", "division", "Key ("] {
            #expect(!reply.text.contains(leak), "PostgreSQL message leaked: \(reply.text)")
        }
    }

    @Test("22P02, 22007 and 22012 → 400, 23505 → 409, 42501 → 403, 57014 → 504, XX001 → 500 with an error id")
    func mapping() throws {
        try withServer { _, port in
            let secret = FailingService.secret
            expectProblem(try TestClient.request("GET", "/fail/invalid-text?value=\(secret)", port: port), status: 400, sqlState: "22P02")
            expectProblem(try TestClient.request("GET", "/fail/stream?value=\(secret)", port: port), status: 400, sqlState: "22007")
            let unique = try TestClient.request("GET", "/fail/unique?value=\(secret)", port: port)
            expectProblem(unique, status: 409, sqlState: "23505")
            #expect(unique.object["constraint"] as? String == "bridge_unique_pkey")
            expectProblem(try TestClient.request("GET", "/fail/write?value=\(secret)", port: port), status: 403, sqlState: "42501")
            expectProblem(try TestClient.request("GET", "/fail/timeout", port: port), status: 504, sqlState: "57014")

            expectProblem(try TestClient.request("GET", "/fail/divide?by=0", port: port), status: 400, sqlState: "22012")
            let unmapped = try TestClient.request("GET", "/fail/internal", port: port)
            expectProblem(unmapped, status: 500, sqlState: nil)
            #expect(unmapped.object["sqlState"] == nil)
            #expect((unmapped.object["errorId"] as? String)?.count == 36, "\(unmapped)")

            // The pool recovered from every failure.
            #expect(try TestClient.request("GET", "/fail/divide?by=1", port: port).text == "1")
            #expect(try TestClient.request("GET", "/employees/10004", port: port).status == 200)
        }
    }

    @Test("a backend terminated under a query (57P01/08006) answers 503 with Retry-After; the pool replaces it")
    func terminatedBackend() throws {
        try withServer(poolSize: 1) { _, port in
            let terminated = try TestClient.request("GET", "/fail/terminate", port: port)
            expectProblem(terminated, status: 503, sqlState: nil)
            #expect(["57P01", "08006", "08003", "08000"].contains(terminated.object["sqlState"] as? String ?? ""), "\(terminated)")
            #expect(terminated.header("Retry-After") == "1")
            #expect(try TestClient.request("GET", "/employees/10004", port: port).status == 200)
        }
    }

    @Test("an exhausted pool answers 503 with Retry-After, then serves again")
    func poolExhaustion() throws {
        try withServer(poolSize: 1, acquireTimeout: .milliseconds(200)) { pool, port in
            let held = try pool.acquire()
            // A pooled route: a list with details (`GET /employees/{n}` and short lists run on the pipeline loop instead).
            let busy = try TestClient.request("GET", "/employees?limit=1&details=titles", port: port)
            #expect(busy.status == 503)
            #expect(busy.header("Retry-After") == "1")
            #expect(busy.header("Content-Type") == "application/problem+json")
            pool.release(held)
            #expect(try TestClient.request("GET", "/employees/10004", port: port).status == 200)
        }
    }

    @Test("a slow stream holds the only connection: other requests get 503 until it ends")
    func streamHoldsConnection() throws {
        try withServer(poolSize: 1, acquireTimeout: .milliseconds(200)) { _, port in
            let slow = try TestClient(port: port, timeoutSeconds: 60)
            try slow.sendRequest("GET", "/employees", headers: [("Connection", "close")])
            let start = try slow.read(maximum: 1024)
            let busy = try TestClient.request("GET", "/employees?limit=1&details=titles", port: port)
            #expect(busy.status == 503)
            #expect(busy.header("Retry-After") == "1")
            let all = try TestClient.Response(parsing: start + slow.readToEnd())
            #expect(all.status == 200)
            #expect(try TestClient.request("GET", "/employees?limit=1", port: port).status == 200)
        }
    }

    @Test("one connection is enough for every endpoint: nested details and HEAD give it back")
    func poolOfOne() throws {
        try withServer(poolSize: 1, acquireTimeout: .seconds(2)) { pool, port in
            let targets = [
                "/employees/10004?details=titles,salaries,departments",
                "/employees?name=bal*&limit=300&details=titles,salaries,departments",
                "/departments/d005?details=managers,employees",
                "/departments/d001?details=employees,managers",
                "/departments",
            ]
            for target in targets + targets {
                let reply = try TestClient.request("GET", target, port: port)
                #expect(reply.status == 200, "\(target): \(reply)")
                #expect((try? reply.json()) != nil, "\(target)")
            }
            let head = try TestClient.request("HEAD", "/employees", port: port)
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(try TestClient.request("GET", "/employees/10004", port: port).status == 200)
            #expect(pool.openConnectionCount <= 1)
        }
    }

    @Test("concurrent requests share a small pool without errors")
    func concurrentRequests() throws {
        try withServer(poolSize: 3, acquireTimeout: .seconds(10)) { _, port in
            let statuses = Locked<[Int]>([])
            DispatchQueue.concurrentPerform(iterations: 24) { index in
                let target =
                    index % 2 == 0 ? "/employees/\(10001 + index)?details=titles,salaries" : "/employees?name=*son&limit=50&details=titles"
                let status = (try? TestClient.request("GET", target, port: port).status) ?? -1
                statuses.withLock { $0.append(status) }
            }
            #expect(statuses.withLock { $0 } == Array(repeating: 200, count: 24))
        }
    }

    @Test("a client that goes away mid-stream gives the connection back")
    func abandonedStreams() throws {
        try withServer(poolSize: 1, acquireTimeout: .seconds(3)) { pool, port in
            for target in ["/employees", "/employees?details=titles", "/departments/d005?details=managers,employees"] {
                do {
                    let client = try TestClient(port: port, timeoutSeconds: 60)
                    try client.sendRequest("GET", target, headers: [("Connection", "close")])
                    #expect(try !client.read(maximum: 2048).isEmpty)
                }
                let next = try TestClient.request("GET", "/employees/10004", port: port)
                #expect(next.status == 200, "after abandoning \(target): \(next)")
            }
            #expect(pool.openConnectionCount <= 1)
        }
    }
}
