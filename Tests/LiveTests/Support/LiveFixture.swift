import Authentication
import Foundation
import HTTPServer
import HTTPTestClient
import Logging
import PostgreSQL
import PostgreSQLWebService
import SQLServices
import WebService

/// A schema of a test's own (`live_<hex>`) with a table of items, their
/// tags and row-level security, the triggers `sql-rest init --live` writes
/// for it (applied as the migration's user would), and an in-process
/// server that follows its lists, with HS256 tokens for two roles:
/// `live_all` reads every item, `live_public` only those not secret.
///
/// ```swift
/// let fixture = try LiveFixture()
/// let stream = try fixture.stream("/items?group=eq.1", role: "live_all")
/// try fixture.execute("INSERT INTO \(fixture.schema).items (grp, title) VALUES (1, 'new')")
/// ```
final class LiveFixture: @unchecked Sendable {
    // `@unchecked Sendable`: every field is set in `init` and never changed.
    let schema: String
    let pool: ConnectionPool
    let feed: LiveFeed
    let server: HTTPServer
    let key: TestSigningKey
    private let admin: Connection

    /// The advisory lock the tests' setups take in turn: one at a time
    /// makes roles and replaces live.sql's shared functions, since
    /// PostgreSQL refuses two changes of one catalog row at once.
    private static let setupLock = 4_404_404

    /// Waits for the other tests' setups; ``unlockSetup(on:)`` lets the next one go.
    static func lockSetup(on connection: Connection) throws {
        try connection.executeScript("SELECT pg_advisory_lock(\(setupLock))")
    }

    static func unlockSetup(on connection: Connection) {
        _ = try? connection.executeScript("SELECT pg_advisory_unlock(\(setupLock))")
    }

    /// The roles of the tests, made once for the cluster.
    static let roles = ["live_all", "live_public"]

    /// A fixture whose server also serves what `services` makes for its schema (a folder of service files, say).
    init(
        configuration: LiveConfiguration = LiveConfiguration(heartbeat: .seconds(30), batchInterval: .milliseconds(10)),
        services: (_ schema: String, _ admin: Connection) throws -> [any WebService] = { _, _ in [] }
    ) throws {
        schema = "live_" + String(UInt32.random(in: 0x1000_0000...UInt32.max), radix: 16)
        let admin = try Connection(try SampleDatabase.conninfo(user: "postgres"))
        self.admin = admin
        try Self.lockSetup(on: admin)
        defer { Self.unlockSetup(on: admin) }
        try Self.makeRoles(on: admin)
        try admin.executeScript(
            """
            CREATE SCHEMA \(schema);
            CREATE TABLE \(schema).items (
                id serial PRIMARY KEY, grp int NOT NULL, title text NOT NULL, secret boolean NOT NULL DEFAULT false,
                note text NOT NULL DEFAULT '');
            CREATE TABLE \(schema).tags (
                item_id int NOT NULL REFERENCES \(schema).items ON DELETE CASCADE, tag text NOT NULL, PRIMARY KEY (item_id, tag));
            INSERT INTO \(schema).items (grp, title, secret) VALUES (1, 'alpha', false), (1, 'beta', false), (2, 'gamma', false),
                (1, 'delta', true);
            INSERT INTO \(schema).tags VALUES (1, 'red'), (1, 'blue'), (2, 'green');
            ALTER TABLE \(schema).items ENABLE ROW LEVEL SECURITY;
            CREATE POLICY everything ON \(schema).items FOR SELECT TO live_all, employees_reader USING (true);
            CREATE POLICY public_only ON \(schema).items FOR SELECT TO live_public USING (NOT secret);
            GRANT USAGE ON SCHEMA \(schema) TO live_all, live_public, employees_reader;
            GRANT SELECT ON ALL TABLES IN SCHEMA \(schema) TO live_all, live_public, employees_reader;
            """)
        let catalog = try DatabaseCatalog.read(schemas: [schema], on: admin)
        try admin.executeScript(ServiceScaffold(catalog: catalog).liveMigration)

        pool = ConnectionPool(.init(conninfo: try SampleDatabase.conninfo(), size: 8, acquireTimeout: .seconds(5)))
        var logger = Logger(label: "live-test")
        logger.logLevel = .warning
        feed = LiveFeed(pool: pool, configuration: configuration, logger: logger)
        let runner = QueryRunner(pool: pool, live: feed)
        key = try TestSigningKey(.hs256)
        let secret = Array(try Data(contentsOf: URL(filePath: key.privateKeyFile)))
        let authenticator = try Authenticator(
            .init(realm: "live", tokens: try JSONWebTokenVerifier(key: .secret(secret)), anonymousRole: "live_all"), logger: logger)
        let router = try WebServiceRouter(
            services: [LiveTestService(schema: schema)] + (try services(schema, admin)), runners: [runner], logger: logger)
        var serverConfiguration = HTTPServer.Configuration(port: 0, maximumConnections: 256, eventLoops: 2)
        serverConfiguration.admission = authenticator
        serverConfiguration.libraryPatches = TestPatches.policy
        server = HTTPServer(configuration: serverConfiguration, logger: logger) { router.respond(to: $0) }
        try server.start()
    }

    deinit {
        feed.stop()
        server.stop()
        pool.close()
        _ = try? admin.executeScript(Self.dropping(schema))
        admin.close()
    }

    /// Drops `schema` and the functions `live.sql` made for its tables (in the schema `sql_rest_live`).
    static func dropping(_ schema: String) -> String {
        """
        DROP SCHEMA \(schema) CASCADE;
        DO $$ DECLARE f regprocedure; BEGIN
          FOR f IN SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                   WHERE n.nspname = 'sql_rest_live' AND p.proname LIKE '\(schema).%' LOOP
            EXECUTE 'DROP FUNCTION ' || f;
          END LOOP;
        END $$;
        """
    }

    /// Makes the test roles if they do not exist, members of the server's login role.
    private static func makeRoles(on connection: Connection) throws {
        for role in roles {
            try connection.executeScript(
                """
                DO $$ BEGIN CREATE ROLE \(role) NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
                GRANT \(role) TO employees_reader;
                """)
        }
    }

    var port: Int { server.port }

    /// Runs `sql` as the tables' owner, in a transaction of its own: its changes are committed when it returns.
    func execute(_ sql: String) throws {
        try admin.executeScript(sql)
    }

    /// A token for `role`.
    func token(_ role: String) throws -> String {
        try key.token(claims: ["role": role, "exp": Int(Date().timeIntervalSince1970) + 600])
    }

    /// An event stream of `target` (below `service`, the test service's `/live` by default) as `role`
    /// (the anonymous role, `live_all`, without one).
    func stream(
        _ target: String, service: String = "/live", role: String? = nil, lastEventID: String? = nil, receiveBufferSize: Int? = nil
    ) throws -> EventStreamClient {
        var headers: [(String, String)] = []
        if let role { headers.append(("Authorization", "Bearer " + (try token(role)))) }
        if let lastEventID { headers.append(("Last-Event-ID", lastEventID)) }
        return try EventStreamClient(port: port, target: service + target, headers: headers, receiveBufferSize: receiveBufferSize)
    }
}

/// The test's service: `GET /items` in PostgREST's language over the
/// fixture's items (with their tags), and the page the browser loads.
struct LiveTestService: WebService {
    let schema: String
    let path = "/live"
    let description = "Items followed live."

    struct Item: Codable {
        var id: Int
        var title: String
    }

    var graph: ResourceGraph {
        ResourceGraph([
            Resource(
                name: "items", schema: schema,
                sql: #"SELECT id, grp AS "group", title, secret, note FROM \#(schema).items ORDER BY id"#,
                columns: [
                    .init("id", type: .int4), .init("group", type: .int4, aliases: ["grp"]), .init("title", type: .text),
                    .init("secret", type: .bool), .init("note", type: .text),
                ],
                relationships: [
                    .init(name: "tags", target: 1, cardinality: .many, link: .columns([.init(source: "id", target: "itemId")]))
                ],
                key: ["id"]),
            Resource(
                name: "tags", schema: schema, sql: #"SELECT item_id AS "itemId", tag FROM \#(schema).tags ORDER BY tag"#,
                columns: [.init("itemId", type: .int4, aliases: ["item_id"]), .init("tag", type: .text)],
                relationships: [
                    .init(name: "items", target: 0, cardinality: .one, link: .columns([.init(source: "itemId", target: "id")]))
                ],
                key: ["itemId", "tag"]),
        ])
    }

    var routes: [Route] {
        let graph = graph
        let schema = schema
        Route(.get, "/items", returns: [Item].self, ReadArguments(graph: graph, resource: 0)) { read in
            Query.list(graph.resources[0].sql).reading(read)
        }
        Route(.get, "/plain", returns: [Item].self) {
            Query.list("SELECT id, title FROM \(schema).items ORDER BY id")
        }
        Route(.get, "/paged", returns: [Item].self, Parameter<Int?>("limit")) { limit in
            Query.list(graph.resources[0].sql).reading(try ReadRequest(graph: graph, resource: 0, arguments: [])).paged(limit: limit)
        }
        Route(.get, "/page") { () -> HTTPResponse in
            HTTPResponse(status: .ok, headers: ["Content-Type": "text/html; charset=utf-8"], body: .bytes(Array(BrowserPage.html.utf8)))
        }
    }
}
