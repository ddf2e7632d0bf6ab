import PostgreSQL
import PostgreSQLWebService
import Testing

/// A pool with `poolerCompatible` leaves nothing on the server between
/// statements: no prepared statement (each runs from its text), no
/// setting. Through PgBouncer in transaction mode that is what works;
/// `make test-scale` runs the server through a real one.
@Suite struct PoolerCompatibleTests {
    private static func pool() -> ConnectionPool {
        ConnectionPool(.init(size: 1, statementTimeout: .seconds(7), pipelineConnections: 1, poolerCompatible: true))
    }

    /// The statements the server holds for this session.
    private static func serverStatements(_ connection: Connection) throws -> Int {
        try connection.fetchOne(Int.self, "SELECT count(*) AS count FROM pg_prepared_statements") ?? -1
    }

    @Test func blockingQueriesPrepareNothingAndSetNothing() throws {
        let pool = Self.pool()
        defer { pool.close() }
        try pool.withConnection { connection in
            #expect(try connection.fetchOne(Int.self, "SELECT :n::int * 2 AS value", ["n": 21]) == 42)
            #expect(try connection.fetchOne(Int.self, "SELECT :n::int * 2 AS value", ["n": 4]) == 8)
            let rows = try connection.query("SELECT n AS value FROM generate_series(1, :last::int) n", ["last": 3])
            var values: [String?] = []
            while let row = try rows.next() { values.append(row[0]) }
            #expect(values == ["1", "2", "3"])
            #expect(try Self.serverStatements(connection) == 0)
            #expect(try connection.fetchOne(String.self, "SELECT current_setting('statement_timeout') AS value") == "0")
            let description = try connection.describe("SELECT :n::int8 AS doubled")
            #expect(description.parameters.map(\.type) == [.int8])
            #expect(!connection.isInTransaction, "describing opened and closed a transaction of its own")
            #expect(try connection.planWrites("SELECT :n::int AS value") == false)
        }
    }

    @Test func batchedObjectsAndBlocksOfEmbedsPrepareNothing() throws {
        let pool = Self.pool()
        defer { pool.close() }
        let object = PoolBatcherTests.object(
            "SELECT :id::int AS id", ["id": 2], embedding: [("tenfold", "SELECT :id::int * 10 AS tenfold")])
        let outcome = try PoolBatcherTests.run(object, on: pool).get()
        #expect(outcome.body == #"{"id":2,"tenfold":[{"tenfold":20}]}"#)

        let list = Query.list("SELECT n AS id FROM generate_series(1, 3) n ORDER BY n")
            .attaching("squares", "SELECT :id::int * :id::int AS square")
        #expect(
            try TestDatabase.body(of: list, on: pool)
                == #"[{"id":1,"squares":[{"square":1}]},{"id":2,"squares":[{"square":4}]},{"id":3,"squares":[{"square":9}]}]"#)
        let statements = try pool.withConnection { try Self.serverStatements($0) }
        #expect(statements == 0)
    }
}

/// The probe a server runs at start (`PoolerProbe`) against the cluster
/// itself: no pooler, one round trip. Through PgBouncer in transaction
/// mode, which it must find, `make test-scale` runs it.
@Suite struct PoolerProbeTests {
    @Test func theClusterItselfIsNoPooler() throws {
        #expect(try PoolerProbe.check(.init()) == .direct)
    }

    @Test func aDatabaseItCannotReachIsAnError() {
        #expect(throws: DatabaseError.self) {
            try PoolerProbe.check(.init(conninfo: "host=127.0.0.1 port=1 connect_timeout=2"))
        }
    }
}
