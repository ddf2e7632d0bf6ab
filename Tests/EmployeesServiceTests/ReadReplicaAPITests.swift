import Foundation
import HTTPTestClient
import PostgreSQL
import PostgreSQLWebService
import Testing
import WebService

/// Which pool answers: every pool's connections carry their name as
/// `application_name`, and the queries read it back.
private struct PoolNameService: WebService {
    let path = "/pool"
    let description = "Which pool answers."

    struct Answer: Codable, Sendable {
        var application: String
    }

    static let sql = "SELECT current_setting('application_name') AS application"
    static let numbered = """
        SELECT current_setting('application_name') AS application, n AS number
        FROM generate_series(1, 5) AS n ORDER BY n
        """
    static let graph = ResourceGraph([
        Resource(name: "numbered", sql: numbered, columns: [.init("application", type: .text), .init("number", type: .int4)])
    ])

    var routes: [Route] {
        Route(.get, "/object", returns: Answer.self) { Query.object(Self.sql, notFound: "no row") }
        Route(.get, "/list", returns: [Answer].self) { Query.list(Self.sql) }
        Route(.get, "/streamed", returns: Answer.self) {
            Query.object(Self.sql, notFound: "no row").streaming("members", Query.list(Self.sql))
        }
        Route(.post, "/", returns: Answer.self) { Query.transaction([Self.sql]) }
        Route(
            .get, "/chosen", description: "Numbered answers, filtered as the caller asks.",
            ReadArguments(graph: Self.graph, resource: 0)
        ) { read in
            Query.list(Self.numbered).paged(limit: 10).reading(read)
        }
        Route(.get, "/paged", returns: [Answer].self, Parameter<Int?>("limit")) { limit in
            Query.list(Self.sql + " ORDER BY 1").paged(limit: limit)
        }
    }
}

/// The read routing of `QueryRunner` with replicas, on the private cluster:
/// a "replica" here is a pool on the same database whose sessions are
/// read-only (`default_transaction_read_only`), so that a write sent there
/// would fail; `make test-scale` has the real streaming replica.
@Suite struct ReadReplicaAPITests {
    /// A pool on the sample database named `name`, read-only when asked.
    private static func pool(_ name: String, readOnly: Bool = false, port: String? = nil) throws -> ConnectionPool {
        var conninfo = try TestEnvironment.conninfo(port: port) + " application_name=\(name)"
        if readOnly { conninfo += " options='-c default_transaction_read_only=on'" }
        return ConnectionPool(.init(conninfo: conninfo, size: 2))
    }

    private static func application(_ reply: TestClient.Response) throws -> String? {
        (try reply.json() as? [String: Any])?["application"] as? String
    }

    /// Waits until the replicas' watcher has asked them all.
    private static func waitUntilHealthy(_ replicas: ReplicaSet) async throws {
        for _ in 0..<200 where !replicas.healthy.allSatisfy({ $0 }) {
            try await Task.sleep(for: .milliseconds(25))
        }
    }

    @Test func getsRunOnTheReplicasInTurnAndWritesOnThePrimary() async throws {
        let primary = try Self.pool("primary")
        let replicas = ReplicaSet([try Self.pool("replica-a", readOnly: true), try Self.pool("replica-b", readOnly: true)])
        defer { replicas.close() }
        let runner = QueryRunner(pool: primary, replicas: replicas)
        #expect(runner.pools.map(\.name) == ["primary", "replica-1", "replica-2"])
        try await Self.waitUntilHealthy(replicas)
        #expect(replicas.healthy == [true, true])

        let server = try TestServer.serve([PoolNameService()], runner: runner)
        try server.start()
        defer { server.stop() }

        var answered: Set<String> = []
        for _ in 0..<4 {
            let reply = try TestClient.request("GET", "/pool/object", port: server.port)
            #expect(reply.status == 200)
            if let application = try Self.application(reply) { answered.insert(application) }
        }
        #expect(answered == ["replica-a", "replica-b"], "the pipelined objects alternate between the replicas")

        let list = try TestClient.request("GET", "/pool/list", port: server.port)
        #expect(list.status == 200)
        let listed = (try list.json() as? [[String: Any]])?.first?["application"] as? String
        #expect(listed?.hasPrefix("replica-") == true)
        let streamed = try TestClient.request("GET", "/pool/streamed", port: server.port)
        #expect(try Self.application(streamed)?.hasPrefix("replica-") == true)
        let paged = try TestClient.request("GET", "/pool/paged?limit=1", port: server.port, headers: [("Prefer", "count=exact")])
        #expect(paged.status == 200)
        #expect(paged.header("Content-Range") == "0-0/1")

        let chosen = try TestClient.request(
            "GET", "/pool/chosen?number=gt.2&order=number.desc&select=number,application", port: server.port,
            headers: [("Prefer", "count=exact")])
        #expect(chosen.status == 200)
        let rows = try chosen.json() as? [[String: Any]] ?? []
        #expect(rows.map { $0["number"] as? Int } == [5, 4, 3], "filtered and ordered on a replica: \(chosen.text)")
        #expect(rows.allSatisfy { ($0["application"] as? String)?.hasPrefix("replica-") == true }, "\(chosen.text)")
        #expect(chosen.header("Content-Range") == "0-2/3", "the filtered rows are counted on the replica too")
        #expect(chosen.text.hasPrefix(#"[{"number":"#), "the members in the order selected")

        let written = try TestClient.request("POST", "/pool", port: server.port)
        #expect(written.status == 201)
        #expect(try Self.application(written) == "primary", "a transaction runs on the primary")
    }

    @Test func readsGoToThePrimaryWhenNoReplicaAnswers() async throws {
        let primary = try Self.pool("primary")
        // Nothing listens on port 1: the replica cannot be reached.
        let replicas = ReplicaSet(
            [try Self.pool("unreachable", port: "1")],
            configuration: .init(firstRetry: .milliseconds(50)))
        defer { replicas.close() }
        let runner = QueryRunner(pool: primary, replicas: replicas)
        let server = try TestServer.serve([PoolNameService()], runner: runner)
        try server.start()
        defer { server.stop() }

        for path in ["/pool/object", "/pool/list", "/pool/streamed"] {
            let reply = try TestClient.request("GET", path, port: server.port)
            #expect(reply.status == 200, "\(path)")
            #expect(reply.text.contains(#""application":"primary""#), "\(path): \(reply.text)")
        }
        #expect(replicas.healthy == [false])
    }

    @Test func aReplicaThatFailsDuringAReadIsTakenOutAndTheReadRunsOnThePrimary() async throws {
        // Two "replicas", each a database of its own that is dropped once
        // they are healthy: their next connection fails as a server gone does.
        let host = try TestEnvironment.variable("PGHOST")
        let port = try TestEnvironment.variable("PGPORT")
        let admin = try Connection("host='\(host)' port='\(port)' dbname=postgres user=postgres")
        defer { admin.close() }
        let names = ["replica_test_\(getpid())_1", "replica_test_\(getpid())_2"]
        for name in names {
            try admin.executeScript("DROP DATABASE IF EXISTS \(name)")
            try admin.executeScript("CREATE DATABASE \(name)")
        }
        defer { for name in names { try? admin.executeScript("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") } }

        let primary = try Self.pool("primary")
        let pools = names.map { name in
            ConnectionPool(.init(conninfo: "host='\(host)' port='\(port)' dbname=\(name) user=employees_reader application_name=\(name)"))
        }
        // Watched rarely: only the failing reads take them out.
        let replicas = ReplicaSet(pools, configuration: .init(checkInterval: .seconds(60), firstRetry: .seconds(60)))
        defer { replicas.close() }
        try await Self.waitUntilHealthy(replicas)
        #expect(replicas.healthy == [true, true])
        let server = try TestServer.serve([PoolNameService()], runner: QueryRunner(pool: primary, replicas: replicas))
        try server.start()
        defer { server.stop() }

        for name in names { try admin.executeScript("DROP DATABASE \(name) WITH (FORCE)") }
        // A list (on a worker thread), then an object (on the pipeline loop), each on the next replica.
        let list = try TestClient.request("GET", "/pool/list", port: server.port)
        #expect(list.status == 200)
        #expect(list.text == #"[{"application":"primary"}]"#)
        #expect(replicas.healthy == [false, true])
        let object = try TestClient.request("GET", "/pool/object", port: server.port)
        #expect(object.status == 200)
        #expect(try Self.application(object) == "primary")
        #expect(replicas.healthy == [false, false])
    }
}
