import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPTestClient
import Testing

/// Clients that give up while their lists are still being read (a load
/// generator stopped with requests in flight): every database connection
/// comes back to the pool once the abandoned work is over.
@Suite("Abandoned requests")
struct AbandonedRequestsTests {
    static let services = [
        "slow/list.sql": """
        -- GET /slow
        -- Rows that take a while to come, as a list filtered by a scan, and
        -- more than a block of them, so that the answer is streamed.
        -- @paged
        -- @filter *
        WITH pause AS (SELECT pg_sleep(0.05))
        SELECT n AS number, repeat('x', 40) AS filler FROM generate_series(1, 5000) AS n, pause ORDER BY n;
        """
    ]

    /// The pool's connections in use, from `/metrics`.
    static func inUse(port: Int) throws -> Int? {
        let metrics = try TestClient.request("GET", "/metrics", port: port).text
        let line = metrics.split(separator: "\n").first { $0.hasPrefix("db_pool_connections{pool=\"primary\",state=\"in_use\"}") }
        return line.flatMap { $0.split(separator: " ").last }.flatMap { Int($0) }
    }

    @Test("40 clients reset their connections while 4 pooled connections serve them: none is held for good")
    func connectionsComeBackToThePool() throws {
        let folder = try Environment.folder(Self.services)
        let run = try ProcessTests.start(["serve", "--services", folder, "--port", "0", "--pool-size", "4", "--metrics", "on"])
        let port = try run.servingPort()
        for _ in 0..<3 {
            var clients: [TestClient] = []
            for _ in 0..<40 {
                let client = try TestClient(port: port)
                try client.sendRequest("GET", "/slow?number=gt.1")
                clients.append(client)
            }
            usleep(150_000)
            for client in clients { client.resetWhenClosed() }
            clients.removeAll()
        }
        var inUse = try Self.inUse(port: port)
        for _ in 0..<200 where inUse != 0 {
            usleep(50_000)
            inUse = try Self.inUse(port: port)
        }
        #expect(inUse == 0, "connections still held after the abandoned requests ended")
        let reply = try TestClient.request("GET", "/slow?number=gt.3", port: port)
        #expect(reply.status == 200)
        #expect(reply.text.contains(#""number":4"#), "\(reply.text)")
    }
}
