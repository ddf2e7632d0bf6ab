import Foundation
import PostgreSQL
import Testing

/// Every SQLSTATE the dispatcher maps, produced for real by the server.
@Suite struct DatabaseErrorTests {
    private func error(_ body: () throws -> Void) -> DatabaseError? {
        do {
            try body()
            return nil
        } catch {
            return error as? DatabaseError
        }
    }

    @Test func invalidInputCodes() throws {
        let connection = try TestDatabase.connect()
        let cases: [(String, SQLArguments, SQLState)] = [
            ("SELECT :v::int", ["v": "secret-x"], .invalidTextRepresentation),
            ("SELECT :v::int2", ["v": 70000], .numericValueOutOfRange),
            ("SELECT :v::date", ["v": "secret-date"], .invalidDatetimeFormat),
            ("SELECT :v::date", ["v": "2024-02-30"], .datetimeFieldOverflow),
        ]
        for (sql, arguments, code) in cases {
            let error = try #require(error { try connection.execute(sql, arguments) })
            #expect(error.code == code)
            #expect(error.code.class == "22")
            #expect(!error.message.isEmpty)
            #expect(!error.description.contains("secret"))
        }
    }

    @Test func constraintViolationsCarryDetail() throws {
        try TestDatabase.withScratchSchema(
            """
            CREATE TABLE parents(id int PRIMARY KEY);
            CREATE TABLE children(id int PRIMARY KEY, parent int REFERENCES parents);
            INSERT INTO parents VALUES (1);
            """
        ) { schema in
            let connection = try TestDatabase.connect()
            let unique = try #require(error { try connection.execute("INSERT INTO \(schema).parents VALUES (:id)", ["id": 1]) })
            #expect(unique.code == .uniqueViolation)
            #expect(unique.message.contains("parents_pkey"))
            #expect(unique.detail == "Key (id)=(1) already exists.")
            #expect(!unique.description.contains("Key (id)"))
            let foreign = try #require(
                error { try connection.execute("INSERT INTO \(schema).children VALUES (1, :parent)", ["parent": 99]) })
            #expect(foreign.code == .foreignKeyViolation)
            #expect(foreign.detail?.contains("is not present in table") == true)
        }
    }

    @Test func insufficientPrivilege() throws {
        try TestDatabase.withScratchSchema("CREATE TABLE secrets(id int)") { schema in
            let connection = try TestDatabase.connect()
            let role = "\(schema)_reader"
            try connection.executeScript("CREATE ROLE \(role) NOLOGIN; GRANT USAGE ON SCHEMA \(schema) TO \(role)")
            defer { try? connection.executeScript("RESET ROLE; DROP OWNED BY \(role); DROP ROLE \(role)") }
            try connection.executeScript("SET ROLE \(role)")
            let denied = try #require(error { try connection.execute("SELECT * FROM \(schema).secrets") })
            #expect(denied.code == .insufficientPrivilege)
            #expect(denied.message == "permission denied for table secrets")
        }
    }

    @Test func statementTimeoutIsQueryCanceled() throws {
        let connection = try TestDatabase.connect()
        try connection.executeScript("SET statement_timeout = 10")
        let canceled = try #require(error { try connection.execute("SELECT pg_sleep(1)") })
        #expect(canceled.code == .queryCanceled)
        #expect(canceled.message == "canceling statement due to statement timeout")
        #expect(!connection.isBroken)
        #expect(try connection.fetchOne(Int.self, "SELECT 1") == 1)
    }

    @Test func hintIsReported() throws {
        let connection = try TestDatabase.connect()
        let undefined = try #require(error { try connection.execute("SELECT no_such_function(:x::int)", ["x": 1]) })
        #expect(undefined.code == SQLState(rawValue: "42883"))
        #expect(undefined.hint?.contains("explicit type casts") == true)
    }

    @Test func terminatedBackendIsAdminShutdownAndMarksConnectionBroken() throws {
        let connection = try TestDatabase.connect()
        let killer = try TestDatabase.connect()
        try killer.execute("SELECT pg_terminate_backend(:pid)", ["pid": connection.backendPID])
        let failure = try #require(error { try connection.execute("SELECT 1") })
        #expect(failure.isConnectionFailure)
        #expect(failure.code == .adminShutdown || failure.code.isConnectionException)
        #expect(connection.isBroken)
    }

    @Test func readOnlyTransactionCode() {
        #expect(SQLState.readOnlySQLTransaction.rawValue == "25006")
        #expect(SQLState.connectionFailure.isConnectionException)
        #expect(DatabaseError(code: .adminShutdown, message: "bye").isConnectionFailure)
    }
}
