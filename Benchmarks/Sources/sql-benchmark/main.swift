// sql-benchmark: nested JSON through ResultSetAdapter.attach versus one
// hand-written json_agg + LATERAL query run by psql into /dev/null.
//
//     swift build -c release --package-path Benchmarks --product sql-benchmark   (or make bench)
//     eval "$(scripts/pg-cluster env)"; Benchmarks/.build/release/sql-benchmark [employees] [runs]
//
// Connects with DATABASE_URL or the PG* variables. Creates the schema
// `sql_benchmark` with synthetic employees (about 1.5 titles and 9 salaries
// each) on first use. The target the benchmark checks: the adapter takes
// at most twice the time of psql.

import Foundation
import PostgreSQL
import PostgreSQLWebService

let arguments = CommandLine.arguments
let employeeCount = arguments.count > 1 ? Int(arguments[1]) ?? 10_000 : 10_000
let runs = arguments.count > 2 ? Int(arguments[2]) ?? 5 : 5
let schema = "sql_benchmark"
let conninfo = ProcessInfo.processInfo.environment["DATABASE_URL"] ?? ""

// MARK: - Data

func createData(on connection: Connection) throws {
    let existing = try connection.fetchOne(
        Int.self, "SELECT count(*)::int FROM pg_tables WHERE schemaname = :schema AND tablename = 'employees'",
        ["schema": schema])
    if existing == 1,
        try connection.fetchOne(Int.self, "SELECT count(*)::int FROM \(schema).employees") == employeeCount
    {
        return
    }
    print("creating \(employeeCount) synthetic employees in schema \(schema) ...")
    try connection.executeScript(
        """
        DROP SCHEMA IF EXISTS \(schema) CASCADE;
        CREATE SCHEMA \(schema);
        CREATE TABLE \(schema).employees (
            emp_no int PRIMARY KEY, birth_date date NOT NULL, first_name text NOT NULL,
            last_name text NOT NULL, gender char(1) NOT NULL, hire_date date NOT NULL);
        CREATE TABLE \(schema).titles (
            emp_no int NOT NULL REFERENCES \(schema).employees, title text NOT NULL,
            from_date date NOT NULL, to_date date, PRIMARY KEY (emp_no, title, from_date));
        CREATE TABLE \(schema).salaries (
            emp_no int NOT NULL REFERENCES \(schema).employees, salary int NOT NULL,
            from_date date NOT NULL, to_date date NOT NULL, PRIMARY KEY (emp_no, from_date));
        INSERT INTO \(schema).employees
            SELECT 10000 + n, DATE '1950-01-01' + (n * 7919) % 5000, 'First' || n, 'Last' || (n % 997),
                   CASE WHEN n % 2 = 0 THEN 'M' ELSE 'F' END, DATE '1985-01-01' + (n * 104729) % 5000
            FROM generate_series(1, \(employeeCount)) n;
        INSERT INTO \(schema).titles
            SELECT e.emp_no, (ARRAY['Staff', 'Senior Staff', 'Engineer', 'Senior Engineer'])[k + 1 + e.emp_no % 3],
                   e.hire_date + k * 900, CASE WHEN k = 0 AND e.emp_no % 2 = 0 THEN e.hire_date + 900 END
            FROM \(schema).employees e, generate_series(0, 1) k
            WHERE k = 0 OR e.emp_no % 2 = 0;
        INSERT INTO \(schema).salaries
            SELECT e.emp_no, 40000 + (e.emp_no * 31 + k * 1733) % 60000, e.hire_date + k * 365, e.hire_date + (k + 1) * 365
            FROM \(schema).employees e, generate_series(0, 17) k
            WHERE k < 4 + (e.emp_no % 11);
        ANALYZE \(schema).employees; ANALYZE \(schema).titles; ANALYZE \(schema).salaries;
        """)
}

// MARK: - The two ways

let employeesSQL = """
    SELECT emp_no AS employeeNumber, first_name AS "name.first", last_name AS "name.last",
           gender, birth_date AS birthDate, hire_date AS hireDate
    FROM \(schema).employees ORDER BY emp_no
    """
let titlesSQL = """
    SELECT title, from_date AS fromDate, to_date AS toDate
    FROM \(schema).titles WHERE emp_no = :employeeNumber ORDER BY from_date, title
    """
let salariesSQL = """
    SELECT salary, from_date AS fromDate, to_date AS toDate
    FROM \(schema).salaries WHERE emp_no = :employeeNumber ORDER BY from_date
    """
let jsonAggSQL = """
    SELECT json_agg(json_build_object(
        'employeeNumber', e.emp_no, 'name', json_build_object('first', e.first_name, 'last', e.last_name),
        'gender', e.gender, 'birthDate', e.birth_date, 'hireDate', e.hire_date,
        'titles', t.titles, 'salaries', s.salaries) ORDER BY e.emp_no)
    FROM \(schema).employees e
    CROSS JOIN LATERAL (
        SELECT coalesce(json_agg(json_build_object('title', title, 'fromDate', from_date, 'toDate', to_date)
                                 ORDER BY from_date, title), '[]') AS titles
        FROM \(schema).titles WHERE emp_no = e.emp_no) t
    CROSS JOIN LATERAL (
        SELECT coalesce(json_agg(json_build_object('salary', salary, 'fromDate', from_date, 'toDate', to_date)
                                 ORDER BY from_date), '[]') AS salaries
        FROM \(schema).salaries WHERE emp_no = e.emp_no) s
    """

/// Streams the nested document through the adapter, 16 KB at a time, and
/// returns the bytes (kept only when `keep` is set).
func runAdapter(_ pool: ConnectionPool, keep: Bool) throws -> (bytes: Int, body: [UInt8]) {
    let adapter = ResultSetAdapter(pool, sql: employeesSQL)
    adapter.attach("titles", titlesSQL)
    adapter.attach("salaries", salariesSQL)
    defer { adapter.close() }
    var output: [UInt8] = []
    var kept: [UInt8] = []
    var total = 0
    while try adapter.write(into: &output) {
        total += output.count
        if keep { kept += output }
        output.removeAll(keepingCapacity: true)
    }
    total += output.count
    if keep { kept += output }
    return (total, kept)
}

func runPSQL() throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    var arguments = ["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-o", "/dev/null", "-c", jsonAggSQL]
    if !conninfo.isEmpty { arguments += ["-d", conninfo] }
    process.arguments = arguments
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw DatabaseError(code: .internalError, message: "psql exited with status \(process.terminationStatus)")
    }
}

func time(_ body: () throws -> Void) rethrows -> Duration {
    let start = ContinuousClock.now
    try body()
    return ContinuousClock.now - start
}

func milliseconds(_ duration: Duration) -> String {
    String(format: "%.1f ms", duration.timeInterval * 1000)
}

func median(_ durations: [Duration]) -> Duration {
    durations.sorted()[durations.count / 2]
}

extension Duration {
    var timeInterval: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

// MARK: - Run

do {
    let setup = try Connection(conninfo)
    try createData(on: setup)
    let counts = try setup.fetchAll(
        String.self,
        """
        SELECT format('%s employees, %s titles, %s salaries', (SELECT count(*) FROM \(schema).employees),
               (SELECT count(*) FROM \(schema).titles), (SELECT count(*) FROM \(schema).salaries))
        """)
    print(counts[0])

    // Same document both ways (compared as parsed JSON).
    let pool = ConnectionPool(.init(conninfo: conninfo, size: 2))
    let adapterJSON = try JSONSerialization.jsonObject(with: Data(try runAdapter(pool, keep: true).body)) as! NSArray
    let aggregate = try setup.fetchOne(String.self, jsonAggSQL) ?? "[]"
    let aggregateJSON = try JSONSerialization.jsonObject(with: Data(aggregate.utf8)) as! NSArray
    guard adapterJSON == aggregateJSON else {
        print("MISMATCH: the adapter's document differs from json_agg's")
        exit(1)
    }
    print("documents identical: \(adapterJSON.count) employees")

    var adapterTimes: [Duration] = []
    var psqlTimes: [Duration] = []
    var bytes = 0
    for _ in 0..<runs {
        adapterTimes.append(try time { bytes = try runAdapter(pool, keep: false).bytes })
        psqlTimes.append(try time { try runPSQL() })
    }
    let adapterMedian = median(adapterTimes)
    let psqlMedian = median(psqlTimes)
    print(
        "ResultSetAdapter + 2 attachments (\(bytes) bytes): median \(milliseconds(adapterMedian)), best \(milliseconds(adapterTimes.min()!))"
    )
    print("psql json_agg + LATERAL to /dev/null:            median \(milliseconds(psqlMedian)), best \(milliseconds(psqlTimes.min()!))")

    // For scale: a flat result of a million rows, streamed.
    var streamed = 0
    let flat = try time {
        let adapter = ResultSetAdapter(pool, sql: "SELECT generate_series(1, 1000000) AS id, 'row' AS label, true AS flag")
        defer { adapter.close() }
        var output: [UInt8] = []
        while try adapter.write(into: &output) {
            streamed += output.count
            output.removeAll(keepingCapacity: true)
        }
        streamed += output.count
    }
    print("ResultSetAdapter, 1,000,000 flat rows (\(streamed) bytes): \(milliseconds(flat))")

    let ratio = adapterMedian.timeInterval / psqlMedian.timeInterval
    print(String(format: "ratio adapter / psql: %.2f (target ≤ 2.00) %@", ratio, ratio <= 2 ? "PASS" : "FAIL"))
    exit(ratio <= 2 ? 0 : 2)
} catch {
    print("sql-benchmark: \(error)")
    exit(1)
}
