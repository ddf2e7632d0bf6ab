@testable import PostgreSQL
@testable import PostgreSQLWebService
import Testing

/// Each connection's statements (`PreparedStatementCache`), on a blocking
/// connection and on the pipeline loop's: past the limit they are all
/// deallocated on the server, and statements go on working.
@Suite struct PreparedStatementCacheTests {
    static let limit = PreparedStatementCache.limit

    @Test func aConnectionDeallocatesAllPastTheLimit() throws {
        let connection = try TestDatabase.connect()
        for number in 0...Self.limit {
            #expect(try connection.fetchOne(Int.self, "SELECT \(number) AS value") == number)
        }
        #expect(connection.preparedStatementCount == 1)
        let count = try connection.fetchOne(Int.self, "SELECT count(*)::int AS value FROM pg_prepared_statements")
        #expect(count == 2)  // the last statement and this one
        #expect(try connection.fetchOne(Int.self, "SELECT 0 AS value") == 0)
    }

    /// An object's statements are looked up one after the other: the one
    /// that fills the cache must not deallocate those looked up before it.
    @Test func anObjectWhoseStatementsFillTheCache() throws {
        let connection = try TestDatabase.connect()
        for number in 0..<(Self.limit - 1) {
            _ = try connection.fetchOne(Int.self, "SELECT \(number) AS value")
        }
        let query = PoolBatcherTests.object(
            "SELECT :id::int AS id", ["id": 5], embedding: [("tenfold", "SELECT :id::int * 10 AS tenfold")])
        #expect(try TestDatabase.body(of: TestDatabase.rows(of: query, on: connection)) == #"{"id":5,"tenfold":[{"tenfold":50}]}"#)
    }

    /// A block's attachments are looked up one after the other too, each
    /// with its batch form and the statement that names its types: at
    /// whichever of those the cache fills, the block's statements all run.
    @Test(arguments: 1...4) func aBlockWhoseStatementsFillTheCache(room: Int) throws {
        let connection = try TestDatabase.connect()
        for number in 0..<(Self.limit - room) {
            _ = try connection.fetchOne(Int.self, "SELECT \(number) AS value")
        }
        let query = Query.list("SELECT n FROM generate_series(1, 2) n")
            .attaching("tenfold", "SELECT :n::int * 10 AS tenfold")
            .attaching("hundredfold", "SELECT :n::int * 100 AS hundredfold")
        #expect(
            try TestDatabase.body(of: TestDatabase.rows(of: query, on: connection)) == """
                [{"n":1,"tenfold":[{"tenfold":10}],"hundredfold":[{"hundredfold":100}]},\
                {"n":2,"tenfold":[{"tenfold":20}],"hundredfold":[{"hundredfold":200}]}]
                """)
    }

    @Test func theLoopsConnectionDeallocatesAllPastTheLimit() throws {
        let pool = ConnectionPool(.init(conninfo: "", size: 1, pipelineConnections: 1))
        defer { pool.close() }
        func object(_ sql: String, attaching attachment: String? = nil) throws -> String {
            let query = PoolBatcherTests.object(sql, embedding: attachment.map { [("more", $0)] } ?? [])
            return try PoolBatcherTests.run(query, on: pool).get().body
        }
        for number in 0...Self.limit {
            #expect(try object("SELECT \(number) AS n") == #"{"n":\#(number)}"#)
        }
        // On the loop's one connection: the last statement and this one.
        #expect(try object("SELECT count(*) AS n FROM pg_prepared_statements") == #"{"n":2}"#)
        #expect(try object("SELECT 0 AS n", attaching: "SELECT 1 AS one") == #"{"n":0,"more":[{"one":1}]}"#)
    }
}
