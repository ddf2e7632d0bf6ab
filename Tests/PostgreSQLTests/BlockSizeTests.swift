import Foundation
import PostgreSQL
@testable import PostgreSQLWebService
import Testing

/// The default block of parent rows: large while few streams with
/// attachments run, small when many do, so that many concurrent streams
/// stay within their memory and one alone makes fewer round trips.
@Suite struct BlockSizeTests {
    static let schema = """
        CREATE TABLE employees (emp_no int PRIMARY KEY);
        CREATE TABLE titles (emp_no int, title text);
        INSERT INTO employees SELECT n FROM generate_series(1, 700) n;
        INSERT INTO titles SELECT n, 'Engineer' FROM generate_series(1, 700) n;
        """

    /// How many times the list's batched child statement ran on `pool`'s
    /// only connection, for a list of the 700 employees with their titles.
    static func childExecutions(_ schema: String, pool: ConnectionPool) throws -> Int {
        let body = try TestDatabase.body(of: Self.list(schema), on: pool)
        #expect(try (TestDatabase.json(body) as! NSArray).count == 700)
        return try pool.withConnection { connection in
            try connection.fetchOne(
                Int.self,
                """
                SELECT sum(generic_plans + custom_plans)::int FROM pg_prepared_statements
                WHERE statement LIKE '%WITH ORDINALITY AS ' || 'p(%'
                """) ?? 0
        }
    }

    static func list(_ schema: String) -> Query {
        Query.list("SELECT emp_no AS employeeNumber FROM \(schema).employees ORDER BY emp_no")
            .attaching("titles", "SELECT title FROM \(schema).titles WHERE emp_no = :employeeNumber")
    }

    @Test func blocksShrinkWhileManyStreamsAreOpen() throws {
        try TestDatabase.withScratchSchema(Self.schema) { schema in
            // Alone: blocks of 256 parents (256 + 256 + 188).
            #expect(try Self.childExecutions(schema, pool: TestDatabase.pool(size: 1)) == 3)

            // With nine other streams open, started and not read to their end:
            // blocks of 64 (ten of 64 and one of 60).
            let others = try (0..<9).map { _ in
                let started = try TestDatabase.rows(of: Self.list(schema), on: TestDatabase.pool(size: 1))
                #expect(started.hasRows)
                return started
            }
            #expect(try Self.childExecutions(schema, pool: TestDatabase.pool(size: 1)) == 11)

            // Once they are closed, large blocks again.
            for adapter in others { adapter.close() }
            #expect(try Self.childExecutions(schema, pool: TestDatabase.pool(size: 1)) == 3)
        }
    }
}
