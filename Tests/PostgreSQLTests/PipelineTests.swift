@testable import PostgreSQL
@testable import PostgreSQLWebService
import Testing

/// Several statements in one round trip (`Connection.runPipeline`).
@Suite struct PipelineTests {
    /// libpq carries a streamed query's single-row mode into the first query
    /// of the next pipeline; its rows still come back as one whole result.
    @Test func aPipelineAfterAStreamedQueryReturnsWholeResults() throws {
        try TestDatabase.pool(size: 1).withConnection { connection in
            let rows = try connection.query("SELECT n FROM generate_series(1, 3) n")
            while try rows.next() != nil {}
            let results = try connection.runPipeline([
                PipelinedStatement(sql: "SELECT n FROM generate_series(1, 5) n"),
                PipelinedStatement(sql: "SELECT n FROM generate_series(1, 4) n"),
            ])
            #expect(results.map(\.rowCount) == [5, 4])
            #expect((0..<5).map { results[0].string(row: $0, column: 0) } == ["1", "2", "3", "4", "5"])
        }
    }

    /// A statement asking for its first row only gets it; the statements
    /// after it come whole, and a failure comes back as a result.
    @Test func firstRowOnlyAndFailuresAsResults() throws {
        try TestDatabase.pool(size: 1).withConnection { connection in
            let statement = try connection.preparedStatement(for: "SELECT n FROM generate_series(1, :count) n")
            let results = try connection.sendPipeline([
                PipelinedStatement(statement, values: ["100000"], firstRowOnly: true),
                PipelinedStatement(sql: "SELECT n FROM generate_series(1, 3) n"),
                PipelinedStatement(sql: "SELECT 1 / 0 AS n"),
            ])
            #expect(results.map(\.rowCount) == [1, 3, 0])
            #expect(results[0].string(row: 0, column: 0) == "1")
            #expect(results[2].error?.code == .divisionByZero)
            #expect(try connection.fetchOne(Int.self, "SELECT 42 AS value") == 42)
        }
    }

    /// A pipeline started runs on the server while the caller goes on; its
    /// results are read later, a failure among them thrown then.
    @Test func aStartedPipelineRunsWhileTheCallerGoesOn() throws {
        try TestDatabase.pool(size: 1).withConnection { connection in
            let clock = ContinuousClock()
            let started = clock.now
            let pending = try connection.startPipeline([
                PipelinedStatement(sql: "SELECT pg_sleep(1.5)"),
                PipelinedStatement(sql: "SELECT n FROM generate_series(1, 3) n"),
            ])
            #expect(clock.now - started < .seconds(1))
            let results = try pending.results()
            #expect(clock.now - started >= .milliseconds(1500))
            #expect(results.map(\.rowCount) == [1, 3])

            let failing = try connection.startPipeline([PipelinedStatement(sql: "SELECT 1 / 0 AS n")])
            #expect {
                try failing.results()
            } throws: { error in
                (error as? DatabaseError)?.code == .divisionByZero
            }
            #expect(try connection.fetchOne(Int.self, "SELECT 42 AS value") == 42)
            #expect(!connection.isInTransaction)
        }
    }

    /// Any other statement on the connection first reads and drops the
    /// results of a pipeline still pending; they cannot be read afterwards.
    @Test func anotherStatementDropsAPendingPipeline() throws {
        try TestDatabase.pool(size: 1).withConnection { connection in
            let pending = try connection.startPipeline([PipelinedStatement(sql: "SELECT n FROM generate_series(1, 1000) n")])
            #expect(try connection.fetchOne(Int.self, "SELECT 42 AS value") == 42)
            #expect(throws: DatabaseError.self) { try pending.results() }
            pending.close()
            #expect(try connection.fetchOne(Int.self, "SELECT 43 AS value") == 43)
        }
    }
}
