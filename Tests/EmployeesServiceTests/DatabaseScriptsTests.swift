import Foundation
import HTTPTestClient
import Testing

/// The database scripts in `sql/` and `scripts/`, checked against the real
/// PostgreSQL that `make test` starts and fills (PG* variables; the sample
/// database is `EMPLOYEES_DATABASE`, default `employees`). The PostgreSQL
/// module is not used on purpose: these tests check the scripts, through
/// `psql`, as a person running them would.
@Suite("Database scripts", .serialized)
struct DatabaseScriptsTests {
    static let root = URL(filePath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let sampleDatabase = ProcessInfo.processInfo.environment["EMPLOYEES_DATABASE"] ?? "employees"

    /// The two real test_db dumps shipped in `sql/test_db/` (see its README for their licence).
    static let dumpsFolder = root.appending(path: "sql/test_db")

    // MARK: - Generated sample

    @Test("generated row counts match the real test_db's scale")
    func generatedCounts() throws {
        let counts = try Self.query(
            """
            SELECT 'employees', count(*) FROM employees UNION ALL
            SELECT 'departments', count(*) FROM departments UNION ALL
            SELECT 'dept_manager', count(*) FROM dept_manager UNION ALL
            SELECT 'dept_emp', count(*) FROM dept_emp UNION ALL
            SELECT 'titles', count(*) FROM titles UNION ALL
            SELECT 'salaries', count(*) FROM salaries
            """)
        let found = Dictionary(uniqueKeysWithValues: counts.map { ($0[0], Int($0[1]) ?? -1) })
        #expect(found["employees"] == 300_024)
        #expect(found["departments"] == 9)
        #expect(found["dept_manager"] == 24)
        for (table, real) in [("dept_emp", 331_603), ("titles", 443_308), ("salaries", 2_844_047)] {
            let count = Double(found[table] ?? 0)
            #expect(abs(count - Double(real)) / Double(real) < 0.03, "\(table): \(count) rows, real \(real)")
        }
        let range = try Self.query("SELECT min(emp_no), max(emp_no) FROM employees")
        #expect(range == [["10001", "310024"]])
    }

    @Test("the generator is deterministic: chained MD5s equal sql/expected-checksums.txt")
    func determinism() throws {
        let expected = try String(contentsOf: Self.root.appending(path: "sql/expected-checksums.txt"), encoding: .utf8)
            .split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty }.map(String.init)
        let found = try Self.run(
            "psql", "-X", "-q", "-A", "-t", "-F", " ", "-v", "ON_ERROR_STOP=1",
            "-d", Self.sampleDatabase, "-f", "sql/checksums.sql")
        #expect(found.status == 0, "\(found.errors)")
        #expect(found.lines == expected)
    }

    @Test("current rows end 9999-01-01; others end on or before 2002-08-01")
    func currentRows() throws {
        let violations = try Self.query(
            """
            SELECT 'dept_emp', count(*) FROM dept_emp WHERE to_date > '2002-08-01' AND to_date <> '9999-01-01' UNION ALL
            SELECT 'titles', count(*) FROM titles WHERE to_date > '2002-08-01' AND to_date <> '9999-01-01' UNION ALL
            SELECT 'salaries', count(*) FROM salaries WHERE to_date > '2002-08-01' AND to_date <> '9999-01-01' UNION ALL
            SELECT 'dept_manager', count(*) FROM dept_manager WHERE to_date > '2002-08-01' AND to_date <> '9999-01-01' UNION ALL
            SELECT 'several current salaries', count(*) FROM (
                SELECT emp_no FROM salaries WHERE to_date = '9999-01-01' GROUP BY emp_no HAVING count(*) > 1) AS s UNION ALL
            SELECT 'current salary, no current title', count(*) FROM salaries AS s
                WHERE s.to_date = '9999-01-01'
                  AND NOT EXISTS (SELECT FROM titles AS t WHERE t.emp_no = s.emp_no AND t.to_date = '9999-01-01') UNION ALL
            SELECT 'current salary, no current department', count(*) FROM salaries AS s
                WHERE s.to_date = '9999-01-01'
                  AND NOT EXISTS (SELECT FROM dept_emp AS d WHERE d.emp_no = s.emp_no AND d.to_date = '9999-01-01') UNION ALL
            SELECT 'departments without one current manager', count(*) FROM departments AS d
                WHERE (SELECT count(*) FROM dept_manager AS m WHERE m.dept_no = d.dept_no AND m.to_date = '9999-01-01') <> 1
            """)
        for row in violations {
            #expect(row[1] == "0", "\(row[0]): \(row[1]) rows")
        }
        let current = try Self.query("SELECT count(*) FROM salaries WHERE to_date = '9999-01-01'")
        let currentCount = Int(current.first?.first ?? "") ?? 0
        #expect(currentCount > 200_000 && currentCount < 300_024, "\(currentCount) current employees")
    }

    // MARK: - Importer

    @Test("the importer verifies the real departments and dept_manager dumps")
    func importRealDumps() throws {
        let database = "employees_import_test"
        defer { Self.dropDatabase(database) }
        let result = try Self.run("scripts/import-test-db", "--database", database, Self.dumpsFolder.path)
        #expect(result.status == 0, "\(result.output)\(result.errors)")
        #expect(
            result.lines.contains {
                $0.hasPrefix("departments") && $0.contains("d1af5e170d2d1591d776d5638d71fc5f  d1af5e170d2d1591d776d5638d71fc5f")
                    && $0.hasSuffix("ok")
            })
        #expect(
            result.lines.contains {
                $0.hasPrefix("dept_manager") && $0.contains("8720e2f0853ac9096b689c14664f847e  8720e2f0853ac9096b689c14664f847e")
                    && $0.hasSuffix("ok")
            })
        let managers = try Self.query(
            "SELECT emp_no, from_date FROM dept_manager WHERE dept_no = 'd009' ORDER BY from_date DESC LIMIT 1", database: database)
        #expect(managers == [["111939", "1996-01-03"]])
    }

    @Test("the importer fails loudly on a corrupted dump")
    func importCorruptedDump() throws {
        let database = "employees_import_corrupt_test"
        let folder = FileManager.default.temporaryDirectory.appending(path: "import-test-db-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer {
            try? FileManager.default.removeItem(at: folder)
            Self.dropDatabase(database)
        }
        let dump = try String(contentsOf: Self.dumpsFolder.appending(path: "load_dept_manager.dump"), encoding: .utf8)
        let corrupted = dump.replacingOccurrences(
            of: "(110085,'d002','1985-01-01','1989-12-17')",
            with: "(110085,'d002','1985-01-01','1989-12-18')")
        #expect(corrupted != dump)
        try corrupted.write(to: folder.appending(path: "load_dept_manager.dump"), atomically: true, encoding: .utf8)

        let result = try Self.run("scripts/import-test-db", "--database", database, folder.path)
        #expect(result.status != 0)
        let line = result.lines.first { $0.hasPrefix("dept_manager") } ?? ""
        #expect(line.contains("8720e2f0853ac9096b689c14664f847e"), "expected checksum printed: \(line)")
        #expect(line.hasSuffix("MD5 MISMATCH"), "\(line)")
        #expect(result.errors.contains("FAILED"))
    }

    // MARK: - Read-only role

    @Test("employees_reader can read every table")
    func readerCanRead() throws {
        for table in ["employees", "departments", "dept_manager", "dept_emp", "titles", "salaries"] {
            let result = try Self.run(
                "psql", "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", Self.sampleDatabase,
                "-c", "SELECT count(*) > 0 FROM \(table)", user: "employees_reader")
            #expect(result.status == 0, "\(table): \(result.errors)")
            #expect(result.lines == ["t"], "\(table)")
        }
    }

    @Test(
        "employees_reader can modify nothing (42501)",
        arguments: [
            "INSERT INTO departments VALUES ('d010', 'Legal')",
            "UPDATE salaries SET salary = salary + 1 WHERE emp_no = 10001",
            "DELETE FROM titles WHERE emp_no = 10001",
            "TRUNCATE dept_emp",
            "CREATE TABLE notes (note text)",
        ])
    func readerCannotWrite(statement: String) throws {
        let result = try Self.run(
            "psql", "-X", "-A", "-t", "-d", Self.sampleDatabase,
            "-c", statement, "-c", "\\echo :LAST_ERROR_SQLSTATE", user: "employees_reader")
        #expect(result.lines.last == "42501", "\(statement): \(result.output)\(result.errors)")
    }

    // MARK: - Running commands

    struct CommandResult {
        var status: Int32
        var output: String
        var errors: String
        var lines: [String] { output.split(separator: "\n").map(String.init) }
    }

    /// Runs a command from the repository root with the test's environment
    /// (PG*), optionally as another database user.
    static func run(_ arguments: String..., user: String? = nil) throws -> CommandResult {
        let outcome = try ToolProcess.outcome(
            "/usr/bin/env", ["--chdir", root.path] + arguments, environment: user.map { ["PGUSER": $0] } ?? [:])
        return CommandResult(status: outcome.status, output: outcome.text, errors: outcome.errors)
    }

    /// The rows of a query, each a list of column texts.
    static func query(_ sql: String, database: String = sampleDatabase) throws -> [[String]] {
        let result = try run("psql", "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-d", database, "-c", sql)
        guard result.status == 0 else {
            throw CommandError(description: "psql failed: \(result.errors)")
        }
        return result.lines.map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
    }

    static func dropDatabase(_ name: String) {
        _ = try? run("psql", "-X", "-q", "-d", "postgres", "-c", "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }

    struct CommandError: Error, CustomStringConvertible {
        var description: String
    }
}
