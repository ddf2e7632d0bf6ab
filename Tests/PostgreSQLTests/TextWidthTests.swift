@testable import PostgreSQL
import Testing

/// The widths a result's description bounds: what decides whether a list
/// may be read whole (`ShortLists` in PostgreSQLWebService).
@Suite struct TextWidthTests {
    @Test("types with a maximum length are bounded, escapes included; text, json, arrays and numeric without precision are not")
    func bounds() throws {
        try TestDatabase.pool(size: 1).withConnection { connection in
            let results = try connection.sendPipeline([
                PipelinedStatement(
                    sql: """
                        SELECT 1::int4 AS a, 'x'::varchar(10) AS b, 'y'::char(3) AS c, 1.5::numeric(6, 2) AS d,
                            true AS e, now() AS f, 'name'::name AS g, B'101'::bit(3) AS h
                        LIMIT 0
                        """),
                PipelinedStatement(sql: "SELECT 1::int4 AS a, 'y'::text AS t LIMIT 0"),
                PipelinedStatement(sql: "SELECT 1.5::numeric AS n, ARRAY[1] AS r, '{}'::json AS j, 'x'::varchar AS v LIMIT 0"),
                // A scale past the precision (zeros after the point), a negative one (zeros before it).
                PipelinedStatement(sql: "SELECT NULL::numeric(2, 1000) AS past, NULL::numeric(2, -1000) AS negative LIMIT 0"),
            ])
            let bounded = results[0]
            #expect(bounded.maximumJSONBytes(column: 0) == 12)
            #expect(bounded.maximumJSONBytes(column: 1) == 62)
            #expect(bounded.maximumJSONBytes(column: 2) == 20)
            #expect(bounded.maximumJSONBytes(column: 3) == 10)
            #expect(bounded.maximumJSONBytes(column: 4) == 8)
            #expect(bounded.maximumJSONBytes(column: 5) == 48)
            // name: 63 bytes at most, each escaped to 6 at most.
            #expect((bounded.maximumJSONBytes(column: 6) ?? 0) >= 63 * 6)
            #expect(bounded.maximumJSONBytes(column: 7) == 5)
            let row = try #require(bounded.maximumJSONRowBytes())
            #expect(row >= 12 + 62 + 20 + 10 + 8 + 48 + 63 * 6 + 5 + 8 * (6 + 3))
            #expect(results[1].maximumJSONBytes(column: 1) == nil)
            #expect(results[1].maximumJSONRowBytes() == nil)
            for column in Int32(0)..<4 { #expect(results[2].maximumJSONBytes(column: column) == nil, "column \(column)") }
            #expect(results[3].maximumJSONBytes(column: 0) == 1_004)
            #expect(results[3].maximumJSONBytes(column: 1) == 1_006)
        }
    }
}
