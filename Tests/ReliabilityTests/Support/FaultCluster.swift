import Foundation
import HTTPTestClient
import PostgreSQL
import Locking

/// A second private PostgreSQL cluster that the fault tests may stop and
/// restart: `<repo>/.pgdata-faults`, on the shared test cluster's port − 30000
/// (`PGCLUSTER_PORT` or `PGPORT`, default 54329: 24329), or `FAULTS_PGCLUSTER_PORT`.
/// Below Linux's ephemeral range (32768–60999): the tests restart it while
/// the other suites hold hundreds of client sockets, one of which could
/// otherwise have its port ("Address already in use").
///
/// It holds one database, `faults`, with the employees table of
/// `sql/schema.sql` and 300,000 rows (about 20 MB of JSON when listed), made
/// once and kept between runs. Every test brings the cluster up itself and
/// stops it in a `defer`, so a failed test leaves nothing running.
///
/// ```swift
/// let cluster = try FaultCluster.prepared()
/// defer { cluster.stop() }
/// ```
struct FaultCluster: Sendable {
    static let rowCount = 300_000
    static let database = "faults"

    let directory: String
    let port: Int

    static let shared: FaultCluster = {
        let environment = ProcessInfo.processInfo.environment
        let mainPort = (environment["PGCLUSTER_PORT"] ?? environment["PGPORT"]).flatMap { Int($0) } ?? 54329
        let port = environment["FAULTS_PGCLUSTER_PORT"].flatMap { Int($0) } ?? (mainPort > 31024 ? mainPort - 30000 : mainPort + 100)
        return FaultCluster(directory: Paths.repository + "/.pgdata-faults", port: port)
    }()

    private static let isFilled = Locked(false)

    /// The shared cluster, running, with its data in place.
    static func prepared() throws -> FaultCluster {
        let cluster = shared
        try cluster.start()
        try isFilled.withLock { isFilled in
            guard !isFilled else { return }
            try cluster.fill()
            isFilled = true
        }
        return cluster
    }

    // MARK: - Control

    func start() throws { try run("start") }
    func restart() throws { try run("restart") }

    /// Stops the cluster; never throws (used in `defer`).
    func stop() { _ = try? run("stop") }

    var isRunning: Bool { (try? run("status")) != nil }

    @discardableResult
    private func run(_ command: String) throws -> String {
        String(
            decoding: try ToolProcess.run(
                Paths.repository + "/scripts/pg-cluster", [command],
                environment: ["PGCLUSTER_DIR": directory, "PGCLUSTER_PORT": String(port)]
            ), as: UTF8.self)
    }

    // MARK: - Connections

    /// libpq connection string for the server under test: TCP on loopback,
    /// tagged with `application` so `pg_stat_activity` tells its sessions apart.
    func conninfo(application: String) -> String {
        "host=127.0.0.1 port=\(port) user=postgres dbname=\(Self.database) application_name=\(application) connect_timeout=2"
    }

    /// A connection of the test's own (superuser) to `database`.
    func connect(database: String = FaultCluster.database) throws -> Connection {
        try Connection("host=\(directory)/socket port=\(port) user=postgres dbname=\(database) application_name=fault-test")
    }

    /// The sessions of `application`: (state, query) pairs.
    func sessions(of application: String) throws -> [(state: String, query: String)] {
        struct Session: Decodable { var state: String?; var query: String? }
        let connection = try connect()
        defer { connection.close() }
        return try connection.fetchAll(
            Session.self,
            "SELECT state, query FROM pg_stat_activity WHERE application_name = :application",
            ["application": application]
        ).map { ($0.state ?? "", $0.query ?? "") }
    }

    // MARK: - Data

    private func fill() throws {
        let admin = try connect(database: "postgres")
        defer { admin.close() }
        struct Exists: Decodable { var value: Bool }
        let exists =
            try admin.fetchOne(
                Exists.self, "SELECT EXISTS (SELECT FROM pg_database WHERE datname = :name) AS value", ["name": Self.database]
            )?.value ?? false
        if exists, (try? count()) == Self.rowCount { return }
        if exists { try admin.executeScript("DROP DATABASE \(Self.database)") }
        try admin.executeScript("CREATE DATABASE \(Self.database)")

        let connection = try connect()
        defer { connection.close() }
        let schema = try String(contentsOfFile: Paths.repository + "/sql/schema.sql", encoding: .utf8)
        try connection.executeScript(schema)
        try connection.executeScript(
            """
            INSERT INTO employees (emp_no, birth_date, first_name, last_name, gender, hire_date)
            SELECT n, date '1952-01-01' + n % 5000, 'First' || n % 1000, 'Last' || n % 3000,
                   CASE WHEN n % 2 = 0 THEN 'M' ELSE 'F' END, date '1985-01-01' + n % 5000
            FROM generate_series(10001, \(10000 + Self.rowCount)) AS n;
            ALTER TABLE employees ADD PRIMARY KEY (emp_no);
            """)
        try connection.executeScript("VACUUM ANALYZE employees")
    }

    private func count() throws -> Int {
        struct Count: Decodable { var value: Int }
        let connection = try connect()
        defer { connection.close() }
        return try connection.fetchOne(Count.self, "SELECT count(*)::int AS value FROM employees")?.value ?? 0
    }
}

/// Where the repository is.
enum Paths {
    /// The checkout: this file is `<repo>/Tests/ReliabilityTests/Support/FaultCluster.swift`.
    static let repository: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.path
    }()
}

/// The built `employees-server` started with `arguments` on 127.0.0.1 and
/// an ephemeral port, without a drain (`--drain-seconds 0`: these tests
/// measure the stop itself; `--drain-seconds` has its own test).
func startEmployeesServer(_ arguments: [String]) throws -> ChildProcess {
    try ChildProcess(
        try ChildProcess.packageExecutable("employees-server"),
        ["--host", "127.0.0.1", "--port", "0", "--drain-seconds", "0"] + arguments)
}
