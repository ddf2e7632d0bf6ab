import Foundation
import HTTPServer
import HTTPTestClient
import PostgreSQL
@testable import PostgreSQLWebService
import SQLServices
import Testing
import WebService

/// Lists whose rows have a bounded width are read whole on the event
/// loop's batcher (`Query+ShortList.swift`): the same answers as the
/// streamed ones, with an `ETag` since they are whole; the others, and the
/// long, slow or failing ones, are streamed on a worker as before.
@Suite("Short lists on the batcher", .serialized)
struct ShortListTests {
    static let schema = """
        CREATE TYPE tone AS ENUM ('low', 'high');
        CREATE TABLE items (id int PRIMARY KEY, code varchar(8) NOT NULL, tone tone, amount numeric(6, 2), note text);
        INSERT INTO items
            SELECT n, 'c' || n, CASE WHEN n % 2 = 0 THEN 'high' ELSE 'low' END::tone, n / 4.0, repeat('n', 2000)
            FROM generate_series(1, 1000) n;
        CREATE FUNCTION slow_ids() RETURNS SETOF int LANGUAGE sql STABLE AS 'SELECT n FROM generate_series(1, 3) n, pg_sleep(1.1)';
        CREATE TABLE owned (id int PRIMARY KEY, owner varchar(63) NOT NULL);
        ALTER TABLE owned ENABLE ROW LEVEL SECURITY;
        CREATE POLICY own ON owned USING (owner = current_user);
        """

    static let files = [
        "items/list.sql": """
        -- GET /items
        -- Items up to a number.
        SELECT id, code, tone, amount FROM items WHERE id <= :upTo ORDER BY id
        """,
        "notes/list.sql": """
        -- GET /notes
        -- Items with their notes: text, without a bound.
        SELECT id, note FROM items WHERE id <= :upTo ORDER BY id
        """,
        "slow/list.sql": """
        -- GET /slow
        -- Three numbers after a sleep.
        SELECT slow_ids AS id FROM slow_ids()
        """,
        "owned/list.sql": """
        -- GET /owned
        -- The rows of the caller's role.
        SELECT id, owner FROM owned ORDER BY id
        """,
    ]

    /// Admits a request as the role its `X-Test-Role` names, without one as none.
    struct RoleFromHeader: RequestAdmission {
        func admit(_ request: HTTPRequest) -> Admission {
            request.headers.first("X-Test-Role").map { .admitted(role: $0) } ?? .admitted(role: nil)
        }
    }

    /// The schema, the folder served on one event loop, and the server.
    struct Served {
        let scratch: ScratchSchema
        let pool: ConnectionPool
        let server: HTTPServer

        init(roles: [String] = []) throws {
            var setup = ShortListTests.schema
            for (index, role) in roles.enumerated() {
                setup += """
                    CREATE ROLE \(role);
                    GRANT SELECT ON owned TO \(role);
                    INSERT INTO owned SELECT n + \(index * 100), '\(role)' FROM generate_series(1, 5) n;

                    """
            }
            scratch = try ScratchSchema(setup)
            for role in roles { try scratch.run("GRANT USAGE ON SCHEMA \(scratch.name) TO \(role)") }
            pool = try scratch.pool(size: 2)
            let folder = try Environment.folder(ShortListTests.files)
            let loaded = try Environment.load(folder, pool: pool)
            try? FileManager.default.removeItem(atPath: folder)
            let router = try WebServiceRouter(services: loaded.services, runners: [QueryRunner(pool: pool)])
            var configuration = HTTPServer.Configuration(port: 0, shutdownTimeout: 5, eventLoops: 1, libraryPatches: TestPatches.policy)
            configuration.admission = RoleFromHeader()
            server = HTTPServer(configuration: configuration) { router.respond(to: $0) }
            try server.start()
        }

        func get(_ target: String, _ headers: [(String, String)] = []) throws -> TestClient.Response {
            try TestClient.request("GET", target, port: server.port, headers: headers)
        }

        /// The answers to `target` until one is whole (it has an ETag): a
        /// statement's first request streams while the batcher reads its
        /// description. Each answer is checked by `check`.
        func getWhole(
            _ target: String, _ headers: [(String, String)] = [], check: (TestClient.Response) -> Void = { _ in }
        ) throws -> TestClient.Response {
            for _ in 1..<50 {
                let answer = try get(target, headers)
                check(answer)
                if answer.header("ETag") != nil { return answer }
                usleep(20_000)
            }
            return try get(target, headers)
        }

        func stop(roles: [String] = []) {
            server.stop()
            pool.close()
            scratch.drop()
            for role in roles { try? scratch.run("DROP ROLE IF EXISTS \(role)") }
        }
    }

    @Test("a short list answers whole, as the streamed one does, byte for byte; one row past the limit is streamed whole")
    func sameAnswers() throws {
        let served = try Served()
        defer { served.stop() }
        // The most rows the batcher reads at once for these columns, by their types.
        let limit = try served.pool.withConnection { connection in
            let described = try connection.sendPipeline([PipelinedStatement(sql: "SELECT id, code, tone, amount FROM items LIMIT 0")])
            return ShortLists.rowLimit(describedBy: described[0])
        }
        #expect(limit > 100 && limit < 1_000, "\(limit)")
        // Longer than the batcher reads at once: streamed on a worker, without an ETag.
        let streamed = try served.get("/items?upTo=1000")
        #expect(streamed.status == 200 && streamed.header("ETag") == nil, "\(streamed)")
        #expect(streamed.objects.count == 1_000)
        for upTo in [0, 1, 50, limit] {
            // The first streams while the batcher reads the description; then they are read whole.
            for round in 1...2 {
                let short = try served.getWhole("/items?upTo=\(upTo)", [("Range", "0-\(limit - 1)")]) { answer in
                    #expect(answer.status == 200 && answer.objects.count == upTo, "\(upTo), round \(round): \(answer)")
                }
                #expect(short.status == 200, "\(upTo), round \(round): \(short)")
                #expect(short.header("ETag") != nil, "\(upTo), round \(round): read on the batcher")
                #expect(short.header("Content-Type") == "application/json; charset=utf-8")
                #expect(short.header("Content-Range") == (upTo == 0 ? "*/*" : "0-\(upTo - 1)/*"), "\(short)")
                let expected = upTo == 0 ? "[]" : String(decoding: Self.firstElements(upTo, of: streamed.body), as: UTF8.self) + "]"
                #expect(short.text == expected, "\(upTo), round \(round)")
            }
        }
        // One row past the limit: streamed whole on a worker (the first request found the statement long).
        let past = try served.get("/items?upTo=\(limit + 1)")
        #expect(past.status == 200 && past.header("ETag") == nil && past.objects.count == limit + 1, "\(past.header("ETag") ?? "")")
        #expect(Array(past.body.dropLast()) == Self.firstElements(limit + 1, of: streamed.body))
        // Found long, the statement takes a worker for a while, unless the page fits.
        let afterLong = try served.get("/items?upTo=10")
        #expect(afterLong.status == 200 && afterLong.header("ETag") == nil && afterLong.objects.count == 10)
        let paged = try served.get("/items?upTo=10", [("Range", "0-4")])
        #expect(paged.status == 200 && paged.header("ETag") != nil && paged.objects.count == 5, "\(paged)")
        let head = try TestClient.request("HEAD", "/items?upTo=10", port: served.server.port)
        #expect(head.status == 200 && head.body.isEmpty && head.header("Content-Length") == String(afterLong.body.count))
        // The ETag of a short list answers If-None-Match.
        #expect(try served.get("/items?upTo=10", [("Range", "0-4"), ("If-None-Match", paged.header("ETag") ?? "")]).status == 304)
        // A range to the largest integer: no sum past it traps, on either path.
        for _ in 1...2 {
            let far = try served.get("/items?upTo=5", [("Range", "0-9223372036854775807")])
            #expect(far.status == 200 && far.objects.count == 5, "\(far)")
            let past = try served.get("/items?upTo=5", [("Range", "9223372036854775807-9223372036854775807")])
            #expect(past.status == 200 && past.text == "[]", "\(past)")
        }
        // A value the statement refuses: the worker's problem, as before.
        let refused = try served.get("/items?upTo=many", [("Range", "0-4")])
        #expect(refused.status == 400, "\(refused)")
    }

    @Test("rows of unbounded width (text) are never read whole on the loop: streamed, however few")
    func unboundedRowsStream() throws {
        let served = try Served()
        defer { served.stop() }
        for _ in 1...2 {
            let notes = try served.get("/notes?upTo=3")
            #expect(notes.status == 200 && notes.header("ETag") == nil, "\(notes)")
            #expect(notes.objects.count == 3)
        }
    }

    @Test("a list not yet found short is tried on the batcher by one request at a time, the others take workers")
    func oneTryAtATimeUntilFoundShort() {
        let lists = ShortLists()
        let sql = "SELECT id FROM items"
        func way(_ decision: ShortLists.Decision) -> String {
            switch decision {
            case .unknown: "unknown"
            case .worker: "worker"
            case .batcher(_, _, let attempt): attempt != nil ? "try" : "batcher"
            }
        }
        /// The try `decision` starts, which the test then answers.
        func attempt(_ decision: ShortLists.Decision) -> ShortLists.Attempt? {
            if case .batcher(_, _, let attempt?) = decision { return attempt }
            Issue.record("not a try: \(way(decision))")
            return nil
        }
        #expect(way(lists.decision(for: sql, pageLimit: nil)) == "unknown", "its description is read first")
        #expect(way(lists.decision(for: sql, pageLimit: nil)) == "worker", "while it is read")
        lists.learn(sql, rowLimit: 10, statement: "short")
        let first = attempt(lists.decision(for: sql, pageLimit: nil))
        #expect(way(lists.decision(for: sql, pageLimit: nil)) == "worker", "a worker while the try is under way")
        #expect(way(lists.decision(for: sql, pageLimit: 5)) == "batcher", "a page that fits takes the batcher meanwhile")
        lists.answered(sql, long: false, attempt: first)
        // Found short: every caller takes the batcher at once.
        #expect(way(lists.decision(for: sql, pageLimit: nil)) == "batcher")
        #expect(way(lists.decision(for: sql, pageLimit: nil)) == "batcher")
        var last: ShortLists.Attempt?
        for round in 1...2 {
            // Round 1: a request read on the batcher finds it long; round 2: the try does.
            lists.answered(sql, long: true, attempt: last)
            for _ in 0..<ShortLists.skipsAfterLong {
                #expect(way(lists.decision(for: sql, pageLimit: nil)) == "worker", "round \(round): skipped after a long answer")
            }
            #expect(way(lists.decision(for: sql, pageLimit: 5)) == "batcher", "a page that fits takes the batcher")
            last = attempt(lists.decision(for: sql, pageLimit: nil))
            for _ in 0..<20 {
                #expect(way(lists.decision(for: sql, pageLimit: nil)) == "worker", "round \(round): a worker while the try is under way")
            }
        }
        // A failed try lets the next request try; so does one never answered, once it is old.
        lists.answered(sql, long: nil, attempt: last)
        let current = attempt(lists.decision(for: sql, pageLimit: nil))
        // An answer to an older try leaves the one under way running, short or failed.
        lists.answered(sql, long: false, attempt: first)
        lists.answered(sql, long: nil, attempt: last)
        #expect(way(lists.decision(for: sql, pageLimit: nil)) == "worker", "a stale answer ends no try")
        lists.answered(sql, long: false, attempt: current)
        #expect(way(lists.decision(for: sql, pageLimit: nil)) == "batcher")
        let lost = ShortLists(tryLifetime: .milliseconds(50))
        lost.learn(sql, rowLimit: 10, statement: "short")
        #expect(way(lost.decision(for: sql, pageLimit: nil)) == "try")
        #expect(way(lost.decision(for: sql, pageLimit: nil)) == "worker")
        usleep(80_000)
        #expect(way(lost.decision(for: sql, pageLimit: nil)) == "try", "a try never answered is taken for lost")
    }

    @Test("a list whose answer was slow holds up no reads pipelined behind it: its next requests take a worker")
    func slowListsGoToWorkers() throws {
        let served = try Served()
        defer { served.stop() }
        let first = try served.getWhole("/slow") { answer in
            #expect(answer.status == 200 && answer.text == #"[{"id":1},{"id":2},{"id":3}]"#, "\(answer)")
        }
        #expect(first.header("ETag") != nil, "answered on the batcher, found slow")
        let next = try served.get("/slow")
        #expect(next.status == 200 && next.text == first.text && next.header("ETag") == nil, "\(next)")
    }

    @Test("on the batcher, each caller's role and its row-level security decide the rows, requests interleaved")
    func rolesHoldOnTheBatcher() throws {
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let roles = ["sqlrest_short_a_" + suffix, "sqlrest_short_b_" + suffix]
        let served = try Served(roles: roles)
        defer { served.stop(roles: roles) }
        let expected = [
            roles[0]: (1...5).map { #"{"id":\#($0),"owner":"\#(roles[0])"}"# },
            roles[1]: (101...105).map { #"{"id":\#($0),"owner":"\#(roles[1])"}"# },
        ]
        for round in 1...3 {
            for role in roles {
                let whole = "[" + expected[role]!.joined(separator: ",") + "]"
                let answer = try served.getWhole("/owned", [("X-Test-Role", role)]) { answer in
                    #expect(answer.status == 200 && answer.text == whole, "\(role), round \(round): \(answer)")
                }
                #expect(answer.header("ETag") != nil, "\(role), round \(round): read on the batcher")
            }
            // Without a role (postgres, the pool's user, owns the table): every row.
            #expect(try served.get("/owned").objects.count == 10)
        }
    }

    /// The first `count` objects of a JSON array of flat objects, with the array's opening bracket.
    static func firstElements(_ count: Int, of body: [UInt8]) -> [UInt8] {
        var seen = 0
        for (index, byte) in body.enumerated() where byte == UInt8(ascii: "}") {
            seen += 1
            if seen == count { return Array(body[...index]) }
        }
        return body
    }
}
