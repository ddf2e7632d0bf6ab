import Foundation
import PostgreSQL
@testable import PostgreSQLWebService
import Testing

/// Parent values reach the attached subqueries unchanged, whatever their text or type.
@Suite struct AttachmentBindingTests {
    @Test func awkwardTextAndTypesRoundTripThroughTheBatch() throws {
        let parents = """
            SELECT * FROM (VALUES
                (1, 'plain', 1.5::numeric, TIMESTAMPTZ '2024-01-02 03:04:05.123456+02', ARRAY[1, 2]),
                (2, 'quote " backslash \\ brace { } comma , NULL', -0.0001::numeric, NULL, ARRAY[]::int[]),
                (3, NULL, NULL, TIMESTAMPTZ 'infinity', NULL),
                (4, 'ünïcødé ✓ and a tab\t', 1e20::numeric, TIMESTAMPTZ '1999-12-31 23:59:59+00', ARRAY[3])
            ) AS v(id, label, amount, at, ids)
            ORDER BY id
            """
        let query = Query.list(parents).attaching(
            "echo",
            """
            SELECT :label::text AS label, :amount::numeric AS amount, :at::timestamptz AS "at",
                   ARRAY(SELECT x FROM generate_series(1, 4) x WHERE x = ANY(:ids::int[])) AS matches,
                   :label::text IS NULL AS "labelIsNull"
            """)
        let body = try TestDatabase.json(TestDatabase.body(of: query, on: TestDatabase.pool(size: 1))) as! [[String: Any]]
        #expect(body.count == 4)
        for row in body {
            let echo = try #require((row["echo"] as? [[String: Any]])?.first)
            #expect((echo["label"] as? NSObject) == (row["label"] as? NSObject))
            #expect((echo["amount"] as? NSObject) == (row["amount"] as? NSObject))
            #expect((echo["at"] as? NSObject) == (row["at"] as? NSObject))
            #expect((echo["labelIsNull"] as? Bool) == (row["label"] is NSNull))
        }
        #expect((body[0]["echo"] as? [[String: Any]])?.first?["matches"] as? [Int] == [1, 2])
        #expect((body[2]["echo"] as? [[String: Any]])?.first?["matches"] as? [Int] == [])
    }

    @Test func parentWithoutChildrenGetsAnEmptyArrayAndChildOrderIsKept() throws {
        let query = Query.list("SELECT n FROM generate_series(0, 4) n ORDER BY n")
            .attaching("countdown", "SELECT k FROM generate_series(1, :n) k ORDER BY k DESC")
        let body = try TestDatabase.body(of: query, on: TestDatabase.pool(size: 1), blockSize: 3)
        #expect(
            body
                == #"[{"n":0,"countdown":[]},{"n":1,"countdown":[{"k":1}]},{"n":2,"countdown":[{"k":2},{"k":1}]},"#
                + #"{"n":3,"countdown":[{"k":3},{"k":2},{"k":1}]},{"n":4,"countdown":[{"k":4},{"k":3},{"k":2},{"k":1}]}]"#)
    }

    @Test func rowsOnAConnectionInsideTheCallersTransaction() throws {
        let connection = try TestDatabase.connect()
        try connection.transaction { connection in
            try connection.executeScript("CREATE TEMP TABLE notes(id int, body text) ON COMMIT DROP")
            try connection.execute("INSERT INTO notes VALUES (1, 'uncommitted')")
            let query = Query.list("SELECT id AS noteId FROM notes").attaching("bodies", "SELECT body FROM notes WHERE id = :noteId")
            #expect(
                try TestDatabase.body(of: TestDatabase.rows(of: query, on: connection))
                    == #"[{"noteId":1,"bodies":[{"body":"uncommitted"}]}]"#)
            #expect(connection.isInTransaction)
        }
        #expect(!connection.isInTransaction)
    }

    @Test func subqueryWithoutParametersAndWithTrailingCommentAndSemicolon() throws {
        let query = Query.list("SELECT generate_series(1, 2) AS id").attaching("constant", "SELECT 'same' AS value; -- for every parent\n")
        #expect(
            try TestDatabase.body(of: query, on: TestDatabase.pool(size: 1))
                == #"[{"id":1,"constant":[{"value":"same"}]},{"id":2,"constant":[{"value":"same"}]}]"#)
    }

    @Test func objectShapeWithAttachments() throws {
        let pool = TestDatabase.pool(size: 1)
        let query = Query.object(
            "SELECT n AS number FROM generate_series(1, 1000) n WHERE n >= :from ORDER BY n", ["from": 999], notFound: "none"
        ).attaching("squares", "SELECT :number::int * :number::int AS square")
        #expect(try TestDatabase.body(of: query, on: pool) == #"{"number":999,"squares":[{"square":998001}]}"#)
        #expect(try pool.withConnection { $0.isInTransaction } == false)
    }

    @Test func unquotedAliasesKeepTheirSpelling() throws {
        let query = Query.list("SELECT 1 AS employeeNumber, 2 AS \"Quoted\", 3 AS plain, 'AS notAnAlias' AS text /* AS noAlias */")
        #expect(
            try TestDatabase.body(of: query, on: TestDatabase.pool(size: 1))
                == #"[{"employeeNumber":1,"Quoted":2,"plain":3,"text":"AS notAnAlias"}]"#)
    }
}
