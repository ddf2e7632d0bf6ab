import Testing
import PostgreSQL

/// `Connection.describe`, `planWrites` and `describeTypes` against the real server.
@Suite("Describing statements")
struct DescribeTests {
    static let schema = """
        CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
        CREATE DOMAIN positive AS int4 CHECK (VALUE > 0);
        CREATE TABLE people (id int4 PRIMARY KEY, name text NOT NULL, nick varchar(10), mood mood, score positive);
        """

    @Test("parameter types, column labels spelled as written, tables, column numbers and NOT NULL")
    func describe() throws {
        try TestDatabase.withScratchSchema(Self.schema) { schema in
            let connection = try TestDatabase.connect()
            defer { connection.close() }
            try connection.executeScript("SET search_path = \(schema)")
            let description = try connection.describe(
                """
                SELECT p.id AS personId, p.name, p.nick AS "nick.name", upper(p.name) AS shout, p.mood, p.score
                FROM people p LEFT JOIN people q ON q.id = p.id WHERE p.id = :id AND p.name LIKE :pattern
                """)
            #expect(description.parameters.map(\.name) == ["id", "pattern"])
            #expect(description.parameters.map(\.type) == [.int4, .text])
            #expect(description.columns.map(\.label) == ["personId", "name", "nick.name", "shout", "mood", "score"])
            #expect(description.columns.map(\.tableColumn) == [1, 2, 3, nil, 4, 5])
            #expect(description.columns.map(\.isNullable) == [false, false, true, true, true, true])
            #expect(Set(description.columns.compactMap(\.table)).count == 1)

            let types = try connection.describeTypes(description.columns.map(\.type))
            let mood = try #require(types[description.columns[4].type])
            #expect(mood.name == "mood" && mood.kind == "e" && mood.enumLabels == ["sad", "ok", "happy"])
            #expect(description.columns[5].type == .int4, "a domain's column is described by its base type")
            let domain = PostgresType(oid: try #require(try connection.fetchOne(UInt32.self, "SELECT 'positive'::regtype::oid AS oid")))
            let positive = try #require(try connection.describeTypes([domain])[domain])
            #expect(positive.kind == "d" && positive.baseType == .int4)
            #expect(try connection.describeTypes([.textArray])[.textArray]?.elementType == .text)
        }
    }

    @Test("a statement that does not prepare throws the server's error with its position")
    func errors() throws {
        let connection = try TestDatabase.connect()
        defer { connection.close() }
        let error = try #require(throws: DatabaseError.self) { try connection.describe("SELECT 1,\n  nope FROM pg_class") }
        #expect(error.code == .undefinedColumn)
        #expect(error.position == 13)
        let untyped = try #require(throws: DatabaseError.self) { try connection.describe("SELECT 1 WHERE :x IS NULL") }
        #expect(untyped.code == .indeterminateDatatype)
    }

    @Test("plans that write: data-modifying statements and WITH queries, and row locks")
    func writes() throws {
        try TestDatabase.withScratchSchema(Self.schema) { schema in
            let connection = try TestDatabase.connect()
            defer { connection.close() }
            try connection.executeScript("SET search_path = \(schema)")
            #expect(try !connection.planWrites("SELECT name FROM people WHERE id = :id"))
            #expect(try connection.planWrites("UPDATE people SET name = :name WHERE id = :id"))
            #expect(try connection.planWrites("WITH gone AS (DELETE FROM people WHERE id = :id RETURNING id) SELECT id FROM gone"))
            #expect(try connection.planWrites("SELECT id FROM people FOR UPDATE"))
        }
    }

    @Test("a violated constraint is named in the error")
    func constraints() throws {
        try TestDatabase.withScratchSchema(Self.schema) { schema in
            let connection = try TestDatabase.connect()
            defer { connection.close() }
            try connection.executeScript("SET search_path = \(schema)")
            try connection.execute("INSERT INTO people (id, name) VALUES (1, 'a')")
            let duplicate = try #require(throws: DatabaseError.self) {
                try connection.execute("INSERT INTO people (id, name) VALUES (1, 'b')")
            }
            #expect(duplicate.constraint == "people_pkey" && duplicate.table == "people")
            let missing = try #require(throws: DatabaseError.self) { try connection.execute("INSERT INTO people (id) VALUES (2)") }
            #expect(missing.code == .notNullViolation && missing.column == "name")
        }
    }
}
