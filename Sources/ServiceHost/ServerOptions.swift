#if canImport(Glibc)
import Glibc
#endif
import HTTPServer
import PostgreSQL
import PostgreSQLWebService
import WebService

/// A server's settings: each from its command-line option, else its
/// environment variable, else the default. The options, their variables
/// and their documentation are one table (`ServerOptions/table`), which
/// `--help` prints.
///
/// swift-argument-parser reads the command line (``ServerArguments``,
/// whose options are made from the table).
///
/// ``ServerProgram`` reads them and hands them to the closure that makes
/// the services:
///
/// ```swift
/// ServerProgram(name: "reports", overview: "Serves reports.", environmentPrefix: "REPORTS_") { options, pool in
///     [StatusService(pool: pool, statementTimeout: options.statementTimeout)]
/// }
/// ```
public struct ServerOptions: Equatable, Sendable {
    /// `--host`: the address to listen on.
    public internal(set) var host = "127.0.0.1"
    /// `--port`: the port to listen on; 0 for any free one.
    public internal(set) var port = 8080
    /// `--database-url`: a libpq connection string or URL; empty for libpq's `PG*` variables.
    public internal(set) var databaseURL = ""
    /// `--read-database-url`: the read replicas' connection strings or URLs; none by default.
    public internal(set) var readDatabaseURLs: [String] = []
    /// `--max-replica-lag`: seconds a replica may lag before it takes no reads.
    public internal(set) var maxReplicaLag = 10.0
    /// `--pooler-compatible`: no named prepared statements and no session settings (for PgBouncer in transaction mode).
    public internal(set) var poolerCompatible = false
    /// `--rows-from`: `socket` (streamed rows read from the database connection's socket) or `libpq`.
    public internal(set) var rowsFromSocket = true
    /// `--pool-size`: the most database connections open at once.
    public internal(set) var poolSize = 16
    /// `--pipeline-connections`: the pool's pipeline connections.
    public internal(set) var pipelineConnections = 2
    /// `--event-loops`: threads that serve the client connections; `nil`
    /// for `automaticEventLoops`.
    public internal(set) var eventLoops: Int?
    /// `--acquire-timeout`: seconds a request waits for a database connection.
    public internal(set) var acquireTimeout = 5.0
    /// `--statement-timeout`: seconds a query may run; 0 for no limit.
    public internal(set) var statementTimeout = 30.0
    /// `--date-format`: how dates are written.
    public internal(set) var dateFormat = JSONRenderingOptions.DateFormat.iso8601
    /// `--max-rows`: the most rows in any list; `nil` for no cap.
    public internal(set) var maxRows: Int?
    /// `--max-arguments`, `--max-filters`, `--max-list-items`,
    /// `--max-batch-calls`, `--max-jsonrpc-bytes`: what one request may ask for.
    public internal(set) var requestLimits = RequestLimits()
    /// `--cors-origin`: the origins whose web pages may call the server; `*` for any, none by default.
    public internal(set) var corsOrigins: [String] = []
    /// `--allowed-hosts`: the host names the server answers for; `*` for any, empty for the names of `host`.
    public internal(set) var allowedHosts: [String] = []
    /// `--max-connections`: the most client connections at once.
    public internal(set) var maxConnections = 512
    /// `--connection-timeout`: seconds a client connection may stay idle.
    public internal(set) var connectionTimeout = 30
    /// `--shutdown-timeout`: seconds a stop lets requests in flight finish.
    public internal(set) var shutdownTimeout = 10.0
    /// `--drain-seconds`: seconds SIGTERM keeps serving with readiness at 503 before the listener closes.
    public internal(set) var drainSeconds = 5.0
    /// `--log-level`: `trace` to `critical`.
    public internal(set) var logLevel = "info"
    /// `--log-format`: `text` lines, or `json`, one object per line.
    public internal(set) var logFormat = LogFormat.text
    /// `--metrics`: whether `GET /metrics` is served and requests are counted.
    public internal(set) var metrics = true
    /// `--otlp-endpoint`: the collector's OTLP/HTTP endpoint the spans go to; empty for no tracing.
    public internal(set) var otlpEndpoint = ""
    /// `--trace-sampling`: the share of the traces begun here that are recorded, 0 to 1.
    public internal(set) var traceSampling = 1.0
    /// `--server-timing`: whether answers carry `Server-Timing`.
    public internal(set) var serverTiming = false
    /// `--mhd-patches`: when libmicrohttpd's behaviour is changed (`LibraryPatches`).
    public internal(set) var mhdPatches = LibraryPatches.Policy.onTested

    /// How log lines are written.
    public enum LogFormat: String, Sendable {
        /// `2026-11-22T01:24:09+0000 info employees-server: [HTTPServer] GET /employees/10001 200 …`
        case text
        /// `{"time":"2026-11-22T01:24:09+0000","level":"info","label":"employees-server",…}`
        case json
    }
    /// `--database-sslmode`: libpq's `sslmode`; empty for the connection string's.
    public internal(set) var databaseSSLMode = ""
    /// `--tls-cert`: the PEM certificate file of HTTPS; empty for plain HTTP.
    public internal(set) var tlsCertificateFile = ""
    /// `--tls-key`: the PEM private key file of HTTPS.
    public internal(set) var tlsKeyFile = ""
    /// `--tls-priorities`: the GnuTLS priority string of HTTPS (protocol versions and ciphers).
    public internal(set) var tlsPriorities = HTTPServer.Configuration.modernTLSPriorities
    /// `--tls-priorities-file`: the file of the GnuTLS priority string, read at start and on SIGHUP; empty for none.
    public internal(set) var tlsPrioritiesFile = ""
    /// `--auth-basic-file`: the password file of HTTP basic authentication; empty for none.
    public internal(set) var authBasicFile = ""
    /// `--auth-basic-postgres`: basic credentials checked by logging in to PostgreSQL.
    public internal(set) var authBasicPostgres = false
    /// `--jwt-secret-file`: the HS256 secret's file; empty for none.
    public internal(set) var jwtSecretFile = ""
    /// `--jwt-public-key-file`: the PEM file of the public key (RSA, P-256 or Ed25519) of tokens; empty for none.
    public internal(set) var jwtPublicKeyFile = ""
    /// `--jwt-jwks-file`: the JSON Web Key Set file of tokens' keys; empty for none.
    public internal(set) var jwtJWKSFile = ""
    /// `--jwt-audience`: the `aud` tokens must name; empty for none.
    public internal(set) var jwtAudience = ""
    /// `--jwt-issuer`: the `iss` tokens must have; empty for any.
    public internal(set) var jwtIssuer = ""
    /// `--jwt-role-claim`: where the token's claims name the role (`role`, `.app_metadata.role`).
    public internal(set) var jwtRoleClaim = "role"
    /// `--role-map`: the `user:role` file; empty for none.
    public internal(set) var roleMapFile = ""
    /// `--anonymous-role`: the role of requests without credentials; empty for none.
    public internal(set) var anonymousRole = ""
    /// `--password-checks`: basic password checks run at once.
    public internal(set) var passwordChecks = 1
    /// `--admission-timeout`: seconds a request waits for its credentials' check.
    public internal(set) var admissionTimeout = 10.0
    /// `--body-timeout`: seconds a request's body may take to arrive.
    public internal(set) var bodyTimeout = 30.0
    /// `--max-body-size`: the largest request body, in bytes.
    public internal(set) var maxBodySize = 10 << 20
    /// `--body-bytes-in-flight`: the most bytes of request bodies held at once.
    public internal(set) var bodyBytesInFlight = 64 << 20
    /// `--response-timeout`: seconds a streamed response may take to be sent.
    public internal(set) var responseTimeout = 600.0
    /// `--idle-in-transaction-timeout`: seconds a pooled connection may wait in a transaction; 0 for no limit.
    public internal(set) var idleInTransactionTimeout = 60.0
    /// `--live`: whether lists answer `Accept: text/event-stream` with their rows, then their changes.
    public internal(set) var live = true
    /// `--live-heartbeat`: seconds between the comments of an event stream with nothing to send.
    public internal(set) var liveHeartbeat = 15.0
    /// `--live-batch-ms`: milliseconds the live feed gathers changes before it reads them again.
    public internal(set) var liveBatchMilliseconds = 20
    /// `--live-window`: kilobytes of events each group of callers keeps for those who connect again.
    public internal(set) var liveWindowKilobytes = 1024
    /// The values of the program's own options (``ServerProgram/option(_:variable:meaning:required:)``), by name.
    var programOptions: [String: String] = [:]

    /// The value of the program's own option `name` (`"services"` for
    /// `--services`), from the command line or the environment; `nil` when
    /// neither gives it.
    ///
    /// ```swift
    /// let folder = options[option: "services"] ?? "services"
    /// ```
    public subscript(option name: String) -> String? {
        programOptions[name]
    }

    /// What is wrong with the command line or the environment.
    struct UsageError: Error, Equatable, CustomStringConvertible {
        let description: String
    }

    // MARK: - Checks

    /// Throws the first bound an option's value is out of, or the first pair of options that exclude each other.
    func validate() throws(UsageError) {
        func check(_ condition: Bool, _ message: String) throws(UsageError) {
            if !condition { throw UsageError(description: message) }
        }
        // Seconds and counts have bounds, so that every conversion of theirs
        // (to milliseconds for PostgreSQL, nanoseconds for clocks, C integers
        // for libmicrohttpd) holds them.
        func seconds(_ value: Double, _ name: String, from least: Double, _ words: String) throws(UsageError) {
            try check(
                value >= least && value <= Self.maximumSeconds,
                "--\(name) must be a number of seconds \(words) \(Int(Self.maximumSeconds)).")
        }
        try check((0...65535).contains(port), "--port must be 0 to 65535.")
        try check((1...Self.maximumThreads).contains(poolSize), "--pool-size must be 1 to \(Self.maximumThreads).")
        try check((1...Self.maximumThreads).contains(pipelineConnections), "--pipeline-connections must be 1 to \(Self.maximumThreads).")
        try check((1...Self.maximumThreads).contains(eventLoops ?? 1), "--event-loops must be 1 to \(Self.maximumThreads).")
        try check((1...Self.maximumThreads).contains(passwordChecks), "--password-checks must be 1 to \(Self.maximumThreads).")
        try seconds(acquireTimeout, "acquire-timeout", from: .ulpOfOne, "over 0, up to")
        try seconds(maxReplicaLag, "max-replica-lag", from: .ulpOfOne, "over 0, up to")
        try seconds(statementTimeout, "statement-timeout", from: 0, "from 0 to")
        try seconds(Double(connectionTimeout), "connection-timeout", from: 1, "from 1 to")
        try seconds(shutdownTimeout, "shutdown-timeout", from: 0, "from 0 to")
        try seconds(drainSeconds, "drain-seconds", from: 0, "from 0 to")
        try seconds(bodyTimeout, "body-timeout", from: .ulpOfOne, "over 0, up to")
        try seconds(responseTimeout, "response-timeout", from: .ulpOfOne, "over 0, up to")
        try seconds(idleInTransactionTimeout, "idle-in-transaction-timeout", from: 0, "from 0 to")
        try check((1...Self.maximumConnections).contains(maxConnections), "--max-connections must be 1 to \(Self.maximumConnections).")
        try check(maxRows.map { $0 >= 1 } ?? true, "--max-rows must be at least 1.")
        try check((0...1).contains(traceSampling), "--trace-sampling must be 0 to 1.")
        try check(Self.logLevels.contains(logLevel), "--log-level \(logLevel) is not a log level.")
        try check(tlsCertificateFile.isEmpty == tlsKeyFile.isEmpty, "--tls-cert and --tls-key go together.")
        try check(
            tlsPrioritiesFile.isEmpty || tlsPriorities == HTTPServer.Configuration.modernTLSPriorities,
            "--tls-priorities and --tls-priorities-file exclude each other.")
        try check(authBasicFile.isEmpty || !authBasicPostgres, "--auth-basic-file and --auth-basic-postgres exclude each other.")
        try check(
            [jwtSecretFile, jwtPublicKeyFile, jwtJWKSFile].filter { !$0.isEmpty }.count <= 1,
            "--jwt-secret-file, --jwt-public-key-file and --jwt-jwks-file exclude each other.")
    }

    /// The longest any `--…-timeout` or `--…-seconds` may be: PostgreSQL
    /// counts its timeouts in milliseconds, in 32 bits (about 24 days).
    static let maximumSeconds = Double(Int32.max / 1000)
    /// The most threads or connections one of `--pool-size`,
    /// `--pipeline-connections`, `--event-loops`, `--password-checks` asks for.
    static let maximumThreads = 1024
    /// The most client connections `--max-connections` allows (libmicrohttpd counts them in 32 bits, and each takes a descriptor).
    static let maximumConnections = 1_000_000

    static let sslModes = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"]

    /// Whether requests are authenticated: a scheme or an anonymous role is set.
    var authenticates: Bool {
        !authBasicFile.isEmpty || authBasicPostgres || checksTokens || !anonymousRole.isEmpty
    }

    /// Whether bearer tokens are checked: a secret, a public key or a key set is given.
    var checksTokens: Bool {
        !jwtSecretFile.isEmpty || !jwtPublicKeyFile.isEmpty || !jwtJWKSFile.isEmpty
    }

    /// `--database-url` with `--database-sslmode` added (a later `sslmode`
    /// wins in a libpq connection string and in a URL's query).
    var conninfo: String { withSSLMode(databaseURL) }

    /// `url` (a primary's or a replica's) with `--database-sslmode` added.
    private func withSSLMode(_ url: String) -> String {
        guard !databaseSSLMode.isEmpty else { return url }
        if url.hasPrefix("postgresql://") || url.hasPrefix("postgres://") {
            return url + (url.contains("?") ? "&" : "?") + "sslmode=" + databaseSSLMode
        }
        return url + (url.isEmpty ? "" : " ") + "sslmode=" + databaseSSLMode
    }

    static let logLevels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    // MARK: - The parts' configurations

    /// The database pool these options describe.
    var poolConfiguration: ConnectionPool.Configuration {
        ConnectionPool.Configuration(
            conninfo: conninfo,
            size: poolSize,
            acquireTimeout: .milliseconds(Int(acquireTimeout * 1000)),
            statementTimeout: statementTimeout > 0 ? .milliseconds(Int(statementTimeout * 1000)) : nil,
            idleInTransactionTimeout: idleInTransactionTimeout > 0 ? .milliseconds(Int(idleInTransactionTimeout * 1000)) : nil,
            pipelineConnections: pipelineConnections,
            poolerCompatible: poolerCompatible,
            readsRowsFromSocket: rowsFromSocket
        )
    }

    /// The pools of the read replicas, configured as the primary's but for their URLs.
    var replicaPoolConfigurations: [ConnectionPool.Configuration] {
        readDatabaseURLs.enumerated().map { index, url in
            var configuration = poolConfiguration
            configuration.conninfo = withSSLMode(url)
            configuration.name = "replica-\(index + 1)"
            return configuration
        }
    }

    /// How the replicas are watched.
    var replicaSetConfiguration: ReplicaSet.Configuration {
        ReplicaSet.Configuration(maxLag: .milliseconds(Int(maxReplicaLag * 1000)))
    }

    /// Event loops when `--event-loops` is not given: half the processors,
    /// at least one. Each loop runs the statements of its own requests
    /// (`ConnectionPool.pipeline()`), so a loop is busy for as long as a
    /// request takes, database round trip aside; the other half is left to
    /// PostgreSQL and the clients, which usually share the machine. On two
    /// cores, a second loop halves the pipeline's batches, and requests with
    /// details then fall below pgbench's rate (`make bench`, scenario 2).
    static let automaticEventLoops = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))) / 2)

    /// The HTTP server these options describe: event loops, whose handlers
    /// never block (the router sends blocking work to worker threads).
    var serverConfiguration: HTTPServer.Configuration {
        var configuration = HTTPServer.Configuration(
            host: host,
            port: port,
            maximumConnections: maxConnections,
            connectionTimeout: connectionTimeout,
            maximumBodySize: maxBodySize,
            shutdownTimeout: shutdownTimeout,
            eventLoops: eventLoops ?? Self.automaticEventLoops,
            crossOrigin: corsOrigins.isEmpty ? nil : CrossOriginPolicy(allowedOrigins: corsOrigins),
            tlsPriorities: tlsPriorities,
            accessLogFields: logFormat == .json,
            libraryPatches: mhdPatches
        )
        configuration.bodyTimeout = bodyTimeout
        configuration.maximumBodyBytesInFlight = bodyBytesInFlight
        configuration.responseTimeout = responseTimeout
        configuration.allowedHosts = allowedHosts.isEmpty ? nil : allowedHosts
        configuration.admissionTimeout = admissionTimeout
        configuration.serverTiming = serverTiming
        return configuration
    }

    /// How lists are followed live: streams end a second before the
    /// response deadline would cut them off.
    var liveConfiguration: LiveConfiguration {
        LiveConfiguration(
            heartbeat: .milliseconds(Int(liveHeartbeat * 1000)), batchInterval: .milliseconds(liveBatchMilliseconds),
            window: liveWindowKilobytes << 10, streamLifetime: .milliseconds(Int(max(1, responseTimeout - 1) * 1000)))
    }
}
