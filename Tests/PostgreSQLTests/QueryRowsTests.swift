import Foundation
@testable import PostgreSQL
@testable import PostgreSQLWebService
import Testing

/// A query's rows as a response body writes them (`RowStream`), run as
/// `QueryRunner` runs them on a worker.
@Suite struct QueryRowsTests {
    /// One row with a value of many types, compared to PostgreSQL's own `to_json`.
    @Test func mixedTypeRowMatchesToJSON() throws {
        let select = """
            SELECT 1::int2 AS small, 2::int4 AS "integer", 3::int8 AS big, 4.5::numeric AS "decimal",
                   1.25::float4 AS "real", 2.5::float8 AS "double", true AS flag, 'a "quoted"\ttext' AS "text",
                   'x'::char(3) AS fixed, 'n'::name AS "name", '{"a":[1,2]}'::json AS "json", '{"b":null}'::jsonb AS "jsonb",
                   DATE '2024-02-29' AS "date", TIMESTAMP '2024-02-29 13:14:15.5' AS "timestamp",
                   'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid AS id, ARRAY[1, NULL, 3] AS numbers,
                   ARRAY[['a', 'b'], ['c', NULL]] AS matrix, NULL::text AS nothing
            """
        let pool = TestDatabase.pool(size: 1)
        let body = try TestDatabase.body(of: Query.list(select), on: pool)
        let expected = try pool.withConnection { connection in
            try connection.fetchOne(String.self, "SELECT json_agg(r)::text FROM (\(select)) r")
        }
        #expect(try TestDatabase.json(body) == TestDatabase.json(try #require(expected)))
    }

    @Test func specialFloatsAndTimestamptz() throws {
        let pool = TestDatabase.pool(size: 1)
        let query = Query.list(
            """
            SELECT 'NaN'::float8 AS nan, '-Infinity'::float8 AS negative,
                   TIMESTAMPTZ '2024-01-02 03:04:05+00' AS "at", E'\\\\x0102ff'::bytea AS raw
            """)
        let body = try TestDatabase.body(of: query, on: pool)
        #expect(body.hasPrefix(#"[{"nan":null,"negative":null,"at":"2024-01-02T"#))
        #expect(body.hasSuffix(#""raw":"AQL/"}]"#))
    }

    @Test func emptyResultIsAnEmptyArray() throws {
        let body = try TestDatabase.body(of: Query.list("SELECT 1 AS one WHERE false"), on: TestDatabase.pool(size: 1))
        #expect(body == "[]")
    }

    @Test func dottedLabelsMakeNestedObjectsAndAliasesKeepTheirCase() throws {
        let query = Query.list(
            """
            SELECT 10001 AS employeeNumber, 'Georgi' AS "name.first", 'Facello' AS "name.last",
                   'M' AS "details.gender", DATE '1953-09-02' AS "details.birth.date"
            FROM generate_series(1, 2)
            """)
        let body = try TestDatabase.body(of: query, on: TestDatabase.pool(size: 1))
        let row =
            #"{"employeeNumber":10001,"name":{"first":"Georgi","last":"Facello"},"details":{"gender":"M","birth":{"date":"1953-09-02"}}}"#
        #expect(body == "[\(row),\(row)]")
    }

    @Test func objectShapeWritesFirstRowOrReportsNone() throws {
        let pool = TestDatabase.pool(size: 1)
        let found = try TestDatabase.rows(of: Query.object("SELECT :id::int AS id", ["id": 7], notFound: "none"), on: pool)
        #expect(found.hasRows)
        #expect(try TestDatabase.body(of: found) == #"{"id":7}"#)
        let missing = try TestDatabase.rows(of: Query.object("SELECT 1 AS id WHERE false", notFound: "none"), on: pool)
        #expect(!missing.hasRows)
        missing.close()
        #expect(pool.openConnectionCount == 1)
    }

    @Test func errorsSurfaceInStartBeforeAnyOutput() throws {
        #expect {
            try TestDatabase.rows(of: Query.list("SELECT :n::int AS n", ["n": "x"]), on: TestDatabase.pool(size: 1))
        } throws: { error in
            (error as? DatabaseError)?.code == .invalidTextRepresentation
        }
    }

    /// With attachments, BEGIN, DECLARE and the first FETCH go out in one
    /// pipeline: a failure in any of them still surfaces in start(), and the
    /// connection comes back idle, out of pipeline mode and transaction.
    @Test func errorsWithAttachmentsSurfaceInStartAndLeaveTheConnectionClean() throws {
        let pool = TestDatabase.pool(size: 1)
        let failures: [(sql: String, arguments: SQLArguments, code: SQLState)] = [
            ("SELECT :n::int AS n", ["n": "x"], .invalidTextRepresentation),  // fails the DECLARE
            ("SELECT 1 / (n - 2) AS n FROM generate_series(1, 3) n", [:], .divisionByZero),  // fails the FETCH
        ]
        for failure in failures {
            let query = Query.list(failure.sql, failure.arguments).attaching("next", "SELECT :n::int + 1 AS next")
            #expect {
                try TestDatabase.rows(of: query, on: pool)
            } throws: { error in
                (error as? DatabaseError)?.code == failure.code
            }
            try Self.expectIdleConnection(in: pool)
        }
        let object = Query.object("SELECT 1 AS n", notFound: "none").attaching("next", "SELECT :n::int + 1 AS next")
        #expect(try TestDatabase.body(of: object, on: pool) == #"{"n":1,"next":[{"next":2}]}"#)
    }

    // MARK: - Attachments

    static let schema = """
        CREATE TABLE departments(dept_no text PRIMARY KEY, dept_name text);
        CREATE TABLE employees(emp_no int PRIMARY KEY, first_name text, dept_no text REFERENCES departments);
        CREATE TABLE titles(emp_no int, title text, from_date date);
        CREATE TABLE salaries(emp_no int, salary int, from_date date);
        INSERT INTO departments VALUES ('d1', 'Sales'), ('d2', 'Research'), ('d3', 'Empty');
        INSERT INTO employees SELECT n, 'E' || n, CASE WHEN n % 2 = 0 THEN 'd1' ELSE 'd2' END FROM generate_series(1, 700) n;
        INSERT INTO titles SELECT n, t, DATE '2000-01-01' + n FROM generate_series(1, 700) n,
            unnest(ARRAY['Engineer', 'Senior Engineer']) t WHERE n % 3 <> 0;
        INSERT INTO salaries SELECT n, 1000 * k + n, DATE '2000-01-01' + k FROM generate_series(1, 700) n, generate_series(1, 3) k;
        """

    /// Nested twice, with several attachments per level, across several blocks of parents;
    /// compared with the same document built by PostgreSQL with json_agg.
    @Test func nestedAttachmentsTwoLevelsDeepMatchJSONAgg() throws {
        try TestDatabase.withScratchSchema(Self.schema) { schema in
            let pool = TestDatabase.pool(size: 2)
            let employees = Query.list(
                """
                SELECT emp_no AS employeeNumber, first_name AS "name.first" FROM \(schema).employees
                WHERE dept_no = :departmentNumber ORDER BY emp_no DESC
                """
            )
            .attaching("titles", "SELECT title, from_date AS fromDate FROM \(schema).titles WHERE emp_no = :employeeNumber ORDER BY title")
            .attaching(
                "salaries", "SELECT salary FROM \(schema).salaries WHERE emp_no = :employeeNumber AND salary > :minimum ORDER BY salary")
            let query = Query.list(
                "SELECT dept_no AS departmentNumber, dept_name AS name FROM \(schema).departments ORDER BY dept_no",
                ["minimum": 1500]  // :minimum is not a parent column: bound from here
            )
            .attaching("employees", employees)
            .attaching("size", "SELECT count(*) AS employees FROM \(schema).employees WHERE dept_no = :departmentNumber")
            let body = try TestDatabase.body(of: query, on: pool, blockSize: 2)

            let expected = try pool.withConnection { connection in
                try connection.fetchOne(
                    String.self,
                    """
                    SELECT json_agg(json_build_object(
                      'departmentNumber', d.dept_no, 'name', d.dept_name,
                      'employees', (SELECT coalesce(json_agg(json_build_object(
                          'employeeNumber', e.emp_no, 'name', json_build_object('first', e.first_name),
                          'titles', (SELECT coalesce(json_agg(json_build_object('title', t.title, 'fromDate', t.from_date)
                                     ORDER BY t.title), '[]') FROM \(schema).titles t WHERE t.emp_no = e.emp_no),
                          'salaries', (SELECT coalesce(json_agg(json_build_object('salary', s.salary) ORDER BY s.salary), '[]')
                                       FROM \(schema).salaries s WHERE s.emp_no = e.emp_no AND s.salary > 1500))
                        ORDER BY e.emp_no DESC), '[]') FROM \(schema).employees e WHERE e.dept_no = d.dept_no),
                      'size', (SELECT json_agg(json_build_object('employees', count)) FROM
                               (SELECT count(*) FROM \(schema).employees e WHERE e.dept_no = d.dept_no) c)
                    ) ORDER BY d.dept_no)::text FROM \(schema).departments d
                    """)
            }
            #expect(try TestDatabase.json(body) == TestDatabase.json(try #require(expected)))
            #expect(body.contains(#""employeeNumber":700,"name":{"first":"E700"},"titles":[{"title":"Engineer""#))
        }
    }

    /// An object with embeds (its children read in one pipeline right
    /// after the row), run again and again on one connection, keeps every
    /// child row: libpq carries the previous query's single-row mode into the
    /// first query of a pipeline, whose rows must still come back whole.
    @Test func objectWithAttachmentsMatchesJSONAggEveryTime() throws {
        try TestDatabase.withScratchSchema(Self.schema) { schema in
            let pool = TestDatabase.pool(size: 1)
            let expected = try pool.withConnection { connection in
                try connection.fetchOne(
                    String.self,
                    """
                    SELECT json_build_object(
                      'departmentNumber', d.dept_no,
                      'employees', (SELECT json_agg(json_build_object(
                          'employeeNumber', e.emp_no,
                          'titles', (SELECT coalesce(json_agg(json_build_object('title', t.title) ORDER BY t.title), '[]')
                                     FROM \(schema).titles t WHERE t.emp_no = e.emp_no))
                        ORDER BY e.emp_no) FROM \(schema).employees e WHERE e.dept_no = d.dept_no AND e.emp_no < :below),
                      'salaries', (SELECT json_agg(json_build_object('salary', s.salary) ORDER BY s.salary)
                                   FROM \(schema).salaries s WHERE s.emp_no = 4))::text
                    FROM \(schema).departments d WHERE d.dept_no = 'd1'
                    """, ["below": 40])
            }
            for _ in 1...3 {
                let employees = Query.list(
                    """
                    SELECT emp_no AS employeeNumber FROM \(schema).employees
                    WHERE dept_no = :departmentNumber AND emp_no < :below ORDER BY emp_no
                    """
                ).attaching("titles", "SELECT title FROM \(schema).titles WHERE emp_no = :employeeNumber ORDER BY title")
                let query = Query.object(
                    "SELECT dept_no AS departmentNumber FROM \(schema).departments WHERE dept_no = :number",
                    ["number": "d1", "below": 40], notFound: "none"
                )
                .attaching("employees", employees)
                .attaching("salaries", "SELECT salary FROM \(schema).salaries WHERE emp_no = 4 ORDER BY salary")
                let body = try TestDatabase.body(of: query, on: pool)
                #expect(try TestDatabase.json(body) == TestDatabase.json(try #require(expected)))
                // A plain query streamed in between, as other requests would on a pooled connection.
                let count = try pool.withConnection { connection in
                    try connection.fetchOne(Int.self, "SELECT count(*)::int AS n FROM \(schema).titles")
                }
                #expect(count == 934)
            }
        }
    }

    /// An object whose attachments can be bound from the arguments goes in one
    /// round trip; the attachments are kept only if the row agrees with the
    /// arguments, and run again from the row otherwise (even when the guess failed).
    @Test(arguments: [
        (SQLValue.text("2"), "agrees"), (.text("3"), "disagrees"), (.text("abc"), "fails"), (.null, "is NULL"),
    ])
    func objectAttachmentsBoundFromArgumentsMatchTheRow(guess: SQLValue, _: String) throws {
        let pool = TestDatabase.pool(size: 1)
        let query = Query.object(
            "SELECT n AS id FROM generate_series(1, 3) n WHERE n = :wanted", ["wanted": 2, "id": guess], notFound: "none"
        ).attaching("tenfold", "SELECT :id::int * 10 AS tenfold")
        #expect(try TestDatabase.body(of: query, on: pool) == #"{"id":2,"tenfold":[{"tenfold":20}]}"#)
        #expect(try pool.withConnection { try $0.fetchOne(Int.self, "SELECT 42 AS value") } == 42)
    }

    /// In the one-round-trip form, a query of many rows gives its first row,
    /// and the connection is clean afterwards; no row is no object.
    @Test func objectAttachmentsBoundFromArgumentsFirstRowOrNone() throws {
        let pool = TestDatabase.pool(size: 1)
        func object(_ sql: String) -> Query {
            Query.object(sql, ["id": 1], notFound: "none").attaching("tenfold", "SELECT :id::int * 10 AS tenfold")
        }
        let many = object("SELECT n AS id FROM generate_series(1, 200000) n")
        #expect(try TestDatabase.body(of: many, on: pool) == #"{"id":1,"tenfold":[{"tenfold":10}]}"#)
        let none = try TestDatabase.rows(of: object("SELECT 1 AS id WHERE false"), on: pool)
        #expect(!none.hasRows)
        none.close()
        #expect { try TestDatabase.rows(of: object("SELECT 1 / 0 AS id"), on: pool) } throws: {
            ($0 as? DatabaseError)?.code == .divisionByZero
        }
        let (value, inTransaction) = try pool.withConnection { connection in
            (try connection.fetchOne(Int.self, "SELECT 42 AS value"), connection.isInTransaction)
        }
        #expect(value == 42)
        #expect(!inTransaction)
        #expect(pool.openConnectionCount == 1)
    }

    /// The child queries run once per block of parents, not once per parent.
    @Test func attachmentsDoNotRunPerRow() throws {
        try TestDatabase.withScratchSchema(Self.schema) { schema in
            let pool = TestDatabase.pool(size: 1)
            let query = Query.list("SELECT emp_no AS employeeNumber FROM \(schema).employees ORDER BY emp_no")
                .attaching("titles", "SELECT title FROM \(schema).titles WHERE emp_no = :employeeNumber")
            let body = try TestDatabase.body(of: query, on: pool, blockSize: 100)
            #expect(try (TestDatabase.json(body) as! NSArray).count == 700)
            // The pool's only connection ran the batched child statement once per block of 100.
            let executions = try pool.withConnection { connection in
                try connection.fetchOne(
                    Int.self,
                    """
                    SELECT sum(generic_plans + custom_plans)::int FROM pg_prepared_statements
                    WHERE statement LIKE '%WITH ORDINALITY AS ' || 'p(%'
                    """)
            }
            #expect(executions == 7)
        }
    }

    @Test func missingParentColumnIsAnErrorNamingIt() throws {
        let query = Query.list("SELECT 1 AS id").attaching("children", "SELECT :parentId::int AS x")
        #expect(throws: ParameterError(.missing, name: "parentId")) {
            try TestDatabase.rows(of: query, on: TestDatabase.pool(size: 1))
        }
    }

    // MARK: - Streaming

    /// A million rows go through write(into:) without the process growing.
    @Test func millionRowStreamKeepsMemoryFlat() throws {
        let pool = TestDatabase.pool(size: 1)
        let adapter = try TestDatabase.rows(
            of: Query.list("SELECT generate_series(1, 1000000) AS id, 'employee number ' || 42 AS label, now() AS at"), on: pool)
        defer { adapter.close() }
        var output: [UInt8] = []
        var total = 0
        var calls = 0
        var residentAfterWarmUp = 0
        while try adapter.write(into: &output) {
            total += output.count
            output.removeAll(keepingCapacity: true)
            calls += 1
            if calls == 200 { residentAfterWarmUp = ProcessMemory.residentKilobytes() }
        }
        total += output.count
        let growth = ProcessMemory.residentKilobytes() - residentAfterWarmUp
        #expect(total > 50_000_000)
        // ThreadSanitizer's shadow memory and access history grow with every
        // thread of the process (the other suites run meanwhile): twice the
        // bound there, still below the 50 MB that went through.
        let bound = ProcessMemory.isUnderThreadSanitizer ? 40_000 : 20_000
        #expect(growth < bound, "resident memory grew by \(growth) kB")
    }

    /// The rows of a block's attached statement grouped by parent when
    /// they do not come in parent order: each parent's rows in the order
    /// they came.
    @Test func attachedRowsOutOfParentOrderAreGroupedByParent() throws {
        try TestDatabase.pool(size: 1).withConnection { connection in
            let embed = Query.Embed(key: "values", query: Query.list("SELECT :v::text AS v"))
            let result = try connection.runSimple(
                """
                SELECT ordinal, v FROM (VALUES (1, 2, 'b1'), (2, 1, 'a1'), (3, 2, 'b2'), (4, 4, 'd1'), (5, 1, 'a2'))
                AS t(position, ordinal, v) ORDER BY position
                """)
            let block = try ChildBlock(embed, parentCount: 4, result: result, arguments: [:], connection: connection)
            let arrays = (0..<4).map { parent in
                var output: [UInt8] = []
                block.write(forParent: Int32(parent), options: JSONRenderingOptions(), to: &output)
                return String(decoding: output, as: UTF8.self)
            }
            #expect(arrays == [#"[{"v":"a1"},{"v":"a2"}]"#, #"[{"v":"b1"},{"v":"b2"}]"#, "[]", #"[{"v":"d1"}]"#])
        }
    }

    /// An attached statement that fails in a later block (the next block's
    /// statements run while one is written) ends the stream with its error
    /// and leaves the connection idle.
    @Test func anAttachmentFailingInALaterBlockEndsTheStream() throws {
        let pool = TestDatabase.pool(size: 1)
        let query = Query.list("SELECT n FROM generate_series(1, 1000) n ORDER BY n")
            .attaching("inverse", "SELECT 1.0 / (:n - 650) AS inverse")
        let adapter = try TestDatabase.rows(of: query, on: pool, blockSize: 100)
        var output: [UInt8] = []
        #expect {
            while try adapter.write(into: &output) {}
        } throws: { error in
            (error as? DatabaseError)?.code == .divisionByZero
        }
        // Blocks 1 to 6 were written, but not the one that failed.
        #expect(String(decoding: output, as: UTF8.self).contains(#"{"n":600,"inverse":"#))
        #expect(!String(decoding: output, as: UTF8.self).contains(#"{"n":601,"#))
        adapter.close()
        try Self.expectIdleConnection(in: pool)
    }

    /// The pool's one connection, after an adapter failed and was closed:
    /// it runs the next statement, outside any transaction, and is kept.
    static func expectIdleConnection(in pool: ConnectionPool) throws {
        let (value, inTransaction) = try pool.withConnection { connection in
            (try connection.fetchOne(Int.self, "SELECT 41 + 1 AS value"), connection.isInTransaction)
        }
        #expect(value == 42)
        #expect(!inTransaction)
        #expect(pool.openConnectionCount == 1)
    }

    @Test func closingEarlyCancelsAndReturnsACleanConnection() throws {
        let pool = TestDatabase.pool(size: 1)
        for attached in [false, true] {
            var query = Query.list("SELECT generate_series(1, 100000000) AS id")
            if attached { query = query.attaching("one", "SELECT :id::int + 1 AS next") }
            let adapter = try TestDatabase.rows(of: query, on: pool)
            var output: [UInt8] = []
            #expect(try adapter.write(into: &output))
            #expect(output.count < 100_000)
            adapter.close()
            let (active, inTransaction) = try pool.withConnection { connection in
                (
                    try connection.fetchOne(
                        Int.self,
                        "SELECT count(*)::int FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND query LIKE '%100000000%'"
                    ),
                    connection.isInTransaction
                )
            }
            #expect(active == 0)
            #expect(!inTransaction)
            #expect(pool.openConnectionCount == 1)
        }
    }
}

enum ProcessMemory {
    /// Whether the process runs under ThreadSanitizer (`swift test --sanitize=thread`).
    static let isUnderThreadSanitizer = dlsym(nil, "__tsan_init") != nil

    /// glibc's `malloc_trim`, which Swift's Glibc module does not declare.
    private static let mallocTrim = dlsym(nil, "malloc_trim").map {
        unsafeBitCast($0, to: (@convention(c) (Int) -> Int32).self)
    }

    /// VmRSS from /proc/self/status, in kilobytes, after returning the
    /// memory malloc keeps freed to the system: the suites running
    /// meanwhile (the hostile-input server's threads, each with its own
    /// malloc arena) would otherwise count what they allocated and freed.
    static func residentKilobytes() -> Int {
        _ = mallocTrim?(0)
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
        }
        return 0
    }
}
