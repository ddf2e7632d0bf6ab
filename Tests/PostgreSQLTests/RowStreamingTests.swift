import PostgreSQL
import Testing

/// Rows streamed from the socket (`WireRowReader`): values in place,
/// buffers that grow and are kept, failures that leave the connection
/// usable, and libpq finding it as it was left. Each test runs also with
/// libpq reading the rows (single-row mode), as on an encrypted connection.
@Suite struct RowStreamingTests {
    /// A connection that streams from the socket, or through libpq.
    static func connect(throughLibpq: Bool) throws -> Connection {
        let connection = try TestDatabase.connect()
        connection.streamsThroughLibpq = throughLibpq
        return connection
    }

    /// NULLs, empty texts, non-ASCII text, a value longer than the reader's
    /// buffer and many rows come out as the server sent them.
    @Test(arguments: [false, true]) func valuesComeOutAsSent(throughLibpq: Bool) throws {
        let connection = try Self.connect(throughLibpq: throughLibpq)
        defer { connection.close() }
        let rows = try connection.query(
            """
            SELECT g AS n, CASE WHEN g % 3 = 0 THEN NULL ELSE 'é' || g END AS text,
                   '' AS empty, CASE WHEN g = 500 THEN repeat('x', 200000) END AS long
            FROM generate_series(1, 1000) g
            """)
        var count = 0
        while let row = try rows.next() {
            count += 1
            #expect(row["n"] == String(count))
            #expect(row["text"] == (count % 3 == 0 ? nil : "é\(count)"))
            #expect(row["empty"] == "")
            #expect(row["long"] == (count == 500 ? String(repeating: "x", count: 200_000) : nil))
        }
        #expect(count == 1000)
        #expect(rows.columns.map(\.label) == ["n", "text", "empty", "long"])
        #expect(try connection.fetchOne(Int.self, "SELECT 1 AS value") == 1)
    }

    /// A list's loop (`readRows(while:_:)`) reads the rows without a `Row`
    /// each, in blocks that stop when asked, between rows read with
    /// `next()`; it says when the rows have ended. Through libpq there is
    /// no such loop (`nil`): every row comes from `next()`.
    @Test(arguments: [false, true]) func rowsReadInBlocksComeOutAsSent(throughLibpq: Bool) throws {
        let connection = try Self.connect(throughLibpq: throughLibpq)
        defer { connection.close() }
        let rows = try connection.query(
            """
            SELECT g AS n, CASE WHEN g % 3 = 0 THEN NULL ELSE 'é' || g END AS text,
                   CASE WHEN g = 500 THEN repeat('x', 200000) END AS long
            FROM generate_series(1, 1000) g
            """)
        var seen: [(n: String?, text: String?, long: Int?)] = []
        var ended = false
        while !ended {
            guard let row = try rows.next() else { break }
            seen.append((row["n"], row["text"], row["long"]?.count))
            var inBlock = 0
            let outcome = try rows.readRows(while: { inBlock < 7 }) { value in
                inBlock += 1
                func text(_ column: Int) -> String? { value(column).map { String(decoding: $0, as: UTF8.self) } }
                seen.append((text(0), text(1), value(2)?.count))
            }
            if throughLibpq { #expect(outcome == nil) }
            ended = outcome ?? false
        }
        #expect(seen.count == 1000)
        for (index, row) in seen.enumerated() {
            let n = index + 1
            #expect(row.n == String(n))
            #expect(row.text == (n % 3 == 0 ? nil : "é\(n)"))
            #expect(row.long == (n == 500 ? 200_000 : nil))
        }
        #expect(try rows.next() == nil)
        #expect(rows.columns.map(\.label) == ["n", "text", "long"])
        #expect(try connection.fetchOne(Int.self, "SELECT 1 AS value") == 1)
    }

    /// Rows kept while later ones are read keep their values: the reader
    /// reads the next row into a frame and a buffer of its own then.
    @Test(arguments: [false, true]) func keptRowsKeepTheirValues(throughLibpq: Bool) throws {
        let connection = try Self.connect(throughLibpq: throughLibpq)
        defer { connection.close() }
        let rows = try connection.query("SELECT g AS n, repeat(chr(65 + g % 26), 300) AS filler FROM generate_series(1, 3000) g")
        var kept: [Row] = []
        while let row = try rows.next() {
            if Int(row["n"]!)! % 7 == 0 { kept.append(row) }
        }
        #expect(kept.count == 3000 / 7)
        for row in kept {
            let n = Int(row["n"]!)!
            #expect(n % 7 == 0)
            #expect(row["filler"] == String(repeating: String(UnicodeScalar(UInt8(65 + n % 26))), count: 300))
        }
    }

    /// A failure after some rows is thrown once the server has said so,
    /// also to a list's loop reading blocks; the connection runs the next
    /// statement.
    @Test(arguments: [false, true], [false, true])
    func aFailureAfterRowsIsThrownAndTheConnectionGoesOn(throughLibpq: Bool, inBlocks: Bool) throws {
        let connection = try Self.connect(throughLibpq: throughLibpq)
        defer { connection.close() }
        let rows = try connection.query("SELECT 10 / (100 - g) AS n FROM generate_series(1, 200) g")
        var count = 0
        #expect {
            while try rows.next() != nil {
                count += 1
                if inBlocks { _ = try rows.readRows(while: { true }) { _ in count += 1 } }
            }
        } throws: { ($0 as? DatabaseError)?.code == .divisionByZero }
        #expect(count >= 0 && count < 100)
        #expect(try rows.next() == nil)
        #expect(!connection.isBroken)
        #expect(try connection.fetchOne(Int.self, "SELECT 2 AS value") == 2)
    }

    /// A statement that fails inside a transaction leaves it failed, as
    /// libpq then knows: the next statement is refused until the rollback.
    @Test(arguments: [false, true]) func aFailureInsideATransactionLeavesItFailed(throughLibpq: Bool) throws {
        let connection = try Self.connect(throughLibpq: throughLibpq)
        defer { connection.close() }
        try connection.execute("BEGIN")
        let rows = try connection.query("SELECT 1 / 0 AS n")
        #expect(throws: DatabaseError.self) { _ = try rows.next() }
        #expect(connection.isInTransaction)
        #expect { try connection.execute("SELECT 1") } throws: { ($0 as? DatabaseError)?.code == .inFailedSQLTransaction }
        try connection.execute("ROLLBACK")
        #expect(!connection.isInTransaction)
        #expect(try connection.fetchOne(Int.self, "SELECT 3 AS value") == 3)
    }

    /// Rows read inside a transaction leave it open.
    @Test(arguments: [false, true]) func aTransactionStaysOpenAcrossAStream(throughLibpq: Bool) throws {
        let connection = try Self.connect(throughLibpq: throughLibpq)
        defer { connection.close() }
        try connection.execute("BEGIN")
        let rows = try connection.query("SELECT g AS n FROM generate_series(1, 10) g")
        var count = 0
        while try rows.next() != nil { count += 1 }
        #expect(count == 10)
        #expect(connection.isInTransaction)
        try connection.execute("COMMIT")
        #expect(!connection.isInTransaction)
    }

    /// A connection that prepares nothing sends the statement's text with each run.
    @Test(arguments: [false, true]) func aConnectionThatPreparesNothingStreams(throughLibpq: Bool) throws {
        let pool = ConnectionPool(.init(size: 1, poolerCompatible: true))
        defer { pool.close() }
        try pool.withConnection { connection in
            connection.streamsThroughLibpq = throughLibpq
            for round in 1...3 {
                let rows = try connection.query("SELECT g * :factor AS n FROM generate_series(1, 5) g", ["factor": round])
                var values: [String] = []
                while let row = try rows.next() { values.append(row["n"] ?? "") }
                #expect(values == (1...5).map { String($0 * round) })
            }
            #expect(connection.preparedStatementCount == 1)
        }
    }

    /// A backend terminated while its rows stream: the cursor throws a
    /// connection failure and the connection is broken, for the pool to replace.
    @Test(arguments: [false, true]) func aLostConnectionIsAFailureAndBreaksIt(throughLibpq: Bool) throws {
        let connection = try Self.connect(throughLibpq: throughLibpq)
        defer { connection.close() }
        let killer = try TestDatabase.connect()
        defer { killer.close() }
        let rows = try connection.query("SELECT g AS n, pg_sleep(0.001) FROM generate_series(1, 100000) g")
        _ = try rows.next()
        try killer.execute("SELECT pg_terminate_backend(:pid)", ["pid": connection.backendPID])
        #expect { while try rows.next() != nil {} } throws: { ($0 as? DatabaseError)?.isConnectionFailure == true }
        #expect(connection.isBroken)
    }

    /// A statement that returns no rows streams none.
    @Test(arguments: [false, true]) func noRowsAndNoColumns(throughLibpq: Bool) throws {
        let connection = try Self.connect(throughLibpq: throughLibpq)
        defer { connection.close() }
        let empty = try connection.query("SELECT 1 AS one WHERE false")
        #expect(try empty.next() == nil)
        #expect(empty.columns.map(\.label) == ["one"])
        try TestDatabase.withScratchSchema("CREATE TABLE items (id int)") { schema in
            let rows = try connection.query("INSERT INTO \(schema).items VALUES (1)")
            #expect(try rows.next() == nil)
            #expect(try connection.fetchOne(Int.self, "SELECT count(*)::int AS value FROM \(schema).items") == 1)
        }
    }
}
