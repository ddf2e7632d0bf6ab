import Foundation
import PostgreSQL
import Testing

@Suite struct ConnectionTests {
    @Test func connectsAndExecutes() throws {
        let connection = try TestDatabase.connect()
        try connection.executeScript("CREATE TEMP TABLE items(id int PRIMARY KEY, name text)")
        #expect(try connection.execute("INSERT INTO items VALUES (:id, :name)", ["id": 1, "name": "one"]) == 1)
        #expect(try connection.execute("INSERT INTO items VALUES (:id, :name)", ["id": 2, "name": nil]) == 1)
        let rows = try connection.query("SELECT id, name FROM items ORDER BY id")
        let first = try #require(try rows.next())
        #expect(first["id"] == "1")
        #expect(first["name"] == "one")
        let second = try #require(try rows.next())
        #expect(second[1] == nil)
        #expect(try rows.next() == nil)
        #expect(rows.columns.map(\.label) == ["id", "name"])
    }

    @Test func failedConnectionThrowsConnectionError() {
        #expect {
            _ = try Connection("host=127.0.0.1 port=1 connect_timeout=2")
        } throws: { error in
            (error as? DatabaseError)?.code.isConnectionException == true
        }
    }

    @Test func reusesPreparedStatementsBySQLText() throws {
        let connection = try TestDatabase.connect()
        for id in 1...5 {
            _ = try connection.fetchOne(Int.self, "SELECT :id::int AS value", ["id": id])
        }
        #expect(connection.preparedStatementCount == 1)
        let prepared = try connection.fetchAll(
            String.self, "SELECT name AS value FROM pg_prepared_statements ORDER BY name")
        #expect(prepared == ["s1", "s2"])  // s2 is this query itself
    }

    @Test func missingArgumentIsAnErrorNamingIt() throws {
        let connection = try TestDatabase.connect()
        #expect(throws: ParameterError(.missing, name: "id")) {
            try connection.execute("SELECT :id::int", [:])
        }
    }

    struct Employee: Decodable, Equatable {
        struct Name: Decodable, Equatable {
            var first: String
            var last: String
        }
        var employeeNumber: Int
        var name: Name
        var hireDate: Date
        var salary: Double?
        var active: Bool
        var id: UUID
    }

    @Test func decodesRowsByLabel() throws {
        let connection = try TestDatabase.connect()
        let employees = try connection.fetchAll(
            Employee.self,
            """
            SELECT 10001 AS employeeNumber, 'Georgi' AS "name.first", 'Facello' AS "name.last",
                   DATE '1986-06-26' AS hireDate, NULL::float8 AS salary, true AS active,
                   'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid AS id
            """)
        #expect(
            employees == [
                Employee(
                    employeeNumber: 10001, name: .init(first: "Georgi", last: "Facello"),
                    hireDate: Date(timeIntervalSince1970: 520_128_000), salary: nil, active: true,
                    id: UUID(uuidString: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")!)
            ])
    }

    @Test func earlyCloseCancelsAndLeavesConnectionReusable() throws {
        let connection = try TestDatabase.connect()
        let watcher = try TestDatabase.connect()
        let rows = try connection.query("SELECT generate_series(1, 50000000) AS g, repeat('x', 100) AS filler")
        _ = try rows.next()
        let started = ContinuousClock.now
        rows.close()
        // Reading the 50 million rows to their end would take a minute; a cancel, under a second on a quiet machine.
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(try connection.fetchOne(Int.self, "SELECT 42 AS value") == 42)
        let active = try watcher.fetchOne(
            Int.self, "SELECT count(*)::int AS value FROM pg_stat_activity WHERE pid = :pid AND state = 'active'",
            ["pid": connection.backendPID])
        #expect(active == 0)
    }

    @Test func anotherQueryFinishesAnOpenCursor() throws {
        let connection = try TestDatabase.connect()
        let rows = try connection.query("SELECT g FROM generate_series(1, 100000) g")
        #expect(try rows.next()?[0] == "1")
        #expect(try connection.fetchOne(Int.self, "SELECT 7 AS value") == 7)
        #expect(try rows.next() == nil)
    }

    @Test func transactionsCommitAndRollBack() throws {
        let connection = try TestDatabase.connect()
        try connection.executeScript("CREATE TEMP TABLE t(id int)")
        try connection.transaction { try $0.execute("INSERT INTO t VALUES (1)") }
        struct Failure: Error {}
        #expect(throws: Failure.self) {
            try connection.transaction { connection in
                try connection.execute("INSERT INTO t VALUES (2)")
                throw Failure()
            }
        }
        #expect(try connection.fetchAll(Int.self, "SELECT id AS value FROM t") == [1])
        #expect(!connection.isInTransaction)
    }

    @Test func readOnlyTransactionRejectsWrites() throws {
        try TestDatabase.withScratchSchema("CREATE TABLE t(id int)") { schema in
            let connection = try TestDatabase.connect()
            #expect {
                try connection.transaction(readOnly: true) { try $0.execute("INSERT INTO \(schema).t VALUES (1)") }
            } throws: { error in
                (error as? DatabaseError)?.code == .readOnlySQLTransaction
            }
            #expect(!connection.isInTransaction)
            #expect(try connection.fetchOne(Int.self, "SELECT count(*) FROM \(schema).t") == 0)
        }
    }
}
