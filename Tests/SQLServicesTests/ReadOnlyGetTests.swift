import Foundation
import HTTPServer
import HTTPTestClient
import PostgreSQL
import SQLServices
import WebService
import PostgreSQLWebService
import Testing

/// Every GET and HEAD runs read-only, by PostgreSQL's word: a write that a
/// check at load cannot see (a function that deletes) fails in the
/// database, on every way a read runs, and leaves the rows as they were.
@Suite("GETs cannot write", .serialized)
struct ReadOnlyGetTests {
    static let schema = """
        CREATE TABLE victims (id int PRIMARY KEY, name text NOT NULL);
        INSERT INTO victims SELECT n, 'victim ' || n FROM generate_series(1, 20) n;
        CREATE FUNCTION gone() RETURNS SETOF victims LANGUAGE sql AS 'DELETE FROM victims RETURNING *';
        CREATE FUNCTION gone_one(key int) RETURNS SETOF victims LANGUAGE sql AS 'DELETE FROM victims WHERE id = key RETURNING *';
        CREATE FUNCTION gone_ids() RETURNS SETOF int LANGUAGE sql AS 'DELETE FROM victims RETURNING id';
        """

    static let files = [
        "victims/list.sql": """
        -- GET /victims
        -- Looks like a read; deletes every row.
        SELECT id, name FROM gone()
        """,
        "ids/list.sql": """
        -- GET /ids
        -- A list of bounded rows, read whole on the event loop's batcher; deletes every row.
        SELECT gone_ids AS id FROM gone_ids()
        """,
        "victims/one.sql": """
        -- GET /victims/{id}
        -- An object by key, on the event loop's batcher.
        SELECT id, name FROM gone_one(:id)
        """,
        "victims/nested.sql": """
        -- GET /victims/{id}/nested
        -- @returns object
        -- An object whose detail has a detail: run on a worker.
        SELECT :id::int AS id;

        -- @detail rows
        SELECT id AS "victimId", name FROM gone();

        -- @detail rows.again
        SELECT 1 AS one FROM gone_one(:victimId)
        """,
        "victims/embedded.sql": """
        -- GET /victims/all/embedded
        -- @returns list
        -- A list with a detail: a cursor read in blocks.
        SELECT id FROM victims ORDER BY id;

        -- @detail deleted
        SELECT id FROM gone_one(:id)
        """,
    ]

    /// Admits every request as `role`.
    struct AsRole: RequestAdmission {
        let role: String
        func admit(_ request: HTTPRequest) -> Admission { .admitted(role: role) }
    }

    /// Each way a read runs (rows from the socket, rows through libpq, as a role), each shape of read.
    @Test(
        "every way a GET runs refuses the write (405, 25006) and no row goes",
        arguments: [(false, false), (true, false), (false, true)])
    func refused(throughLibpq: Bool, asRole: Bool) throws {
        let role = "sqlrest_writer_" + UUID().uuidString.prefix(8).lowercased()
        let scratch = try ScratchSchema(
            Self.schema + (asRole ? "CREATE ROLE \(role); GRANT USAGE ON SCHEMA public TO \(role); GRANT ALL ON victims TO \(role);" : ""))
        defer {
            scratch.drop()
            if asRole { try? scratch.run("DROP ROLE IF EXISTS \(role)") }
        }
        if asRole { try scratch.run("GRANT USAGE ON SCHEMA \(scratch.name) TO \(role)") }
        let pool = ConnectionPool(
            .init(
                conninfo: try Environment.conninfo(user: "postgres", searchPath: scratch.name), size: 2,
                readsRowsFromSocket: !throughLibpq))
        defer { pool.close() }
        let folder = try Environment.folder(Self.files)
        let loaded = try Environment.load(folder, pool: pool)
        try? FileManager.default.removeItem(atPath: folder)
        let router = try WebServiceRouter(services: loaded.services, runners: [QueryRunner(pool: pool)])
        var configuration = HTTPServer.Configuration(port: 0, shutdownTimeout: 5, eventLoops: 1, libraryPatches: TestPatches.policy)
        if asRole { configuration.admission = AsRole(role: role) }
        let server = HTTPServer(configuration: configuration) { router.respond(to: $0) }
        try server.start()
        defer { server.stop() }
        func count() throws -> Int {
            let connection = try Connection(try Environment.conninfo(user: "postgres", searchPath: scratch.name))
            defer { connection.close() }
            return try connection.fetchOne(Int.self, "SELECT count(*)::int FROM victims") ?? -1
        }
        for (method, target, headers) in [
            ("GET", "/victims", [(String, String)]()),
            ("HEAD", "/victims", []),
            ("GET", "/victims", [("Prefer", "count=exact")]),
            ("GET", "/victims", [("Accept", "text/csv")]),
            ("GET", "/ids", []),
            ("GET", "/ids", []),
            ("HEAD", "/ids", []),
            ("GET", "/victims/3", []),
            ("GET", "/victims/3/nested?details=rows", []),
            ("GET", "/victims/all/embedded?details=deleted", []),
        ] {
            let reply = try TestClient.request(method, target, port: server.port, headers: headers)
            #expect(reply.status == 405, "\(method) \(target) \(headers): \(reply.status) \(reply.text)")
            if method == "GET" { #expect(reply.object["sqlState"] as? String == "25006", "\(target): \(reply.text)") }
            #expect(try count() == 20, "\(method) \(target) deleted rows")
        }
    }
}
