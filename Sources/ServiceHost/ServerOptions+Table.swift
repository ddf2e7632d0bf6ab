import Authentication
import HTTPServer
import OTLPTracing
import PostgreSQL
import PostgreSQLWebService

extension ServerOptions {
    /// One command-line option: its name, its environment variable, what it
    /// means, and how it sets its field (`false` for a value it cannot take).
    /// The meaning is written once, in Markdown with backticks, capitalised:
    /// `--help` prints it without the backticks, a README's table with a
    /// lower-case first letter.
    struct Option: Sendable {
        /// The environment variable: the program's prefix and a name, or a
        /// name that every program shares.
        enum Variable: Sendable {
            case prefixed(String)
            case shared(String)
        }

        let name: String
        let variable: Variable
        let meaning: String
        /// What an empty default means, when it means something.
        let emptyDefault: String?
        let apply: @Sendable (inout ServerOptions, String) -> Bool
        let defaultValue: @Sendable (ServerOptions) -> String
        /// Whether the program cannot run without it (a program's own option only).
        let isRequired: Bool
        /// Whether it is on or off: `--name` alone means `true`.
        let isFlag: Bool

        init(
            _ name: String, _ variable: Variable, _ meaning: String, emptyDefault: String? = nil, isFlag: Bool = false,
            apply: @escaping @Sendable (inout ServerOptions, String) -> Bool,
            defaultValue: @escaping @Sendable (ServerOptions) -> String
        ) {
            self.name = name
            self.variable = variable
            self.meaning = meaning
            self.emptyDefault = emptyDefault
            self.apply = apply
            self.defaultValue = defaultValue
            self.isRequired = false
            self.isFlag = isFlag
        }

        /// An option of one program, its value kept as text (``ServerOptions/subscript(option:)``).
        init(program name: String, variable: String, meaning: String, required: Bool, isFlag: Bool = false) {
            self.name = name
            self.variable = .prefixed(variable)
            self.meaning = meaning
            self.emptyDefault = nil
            self.apply = { options, value in
                let value = isFlag ? ServerOptions.flag(value).map { String($0) } : value
                guard let value else { return false }
                options.programOptions[name] = value
                return true
            }
            self.defaultValue = { $0.programOptions[name] ?? (isFlag ? "false" : "") }
            self.isRequired = required
            self.isFlag = isFlag
        }

        var valueName: String { isFlag ? "[true|false]" : "<\(name)>" }

        /// The variable's name for a program whose variables begin with `prefix`.
        func variable(prefix: String) -> String {
            switch variable {
            case .prefixed(let name): prefix + name
            case .shared(let name): name
            }
        }
    }

    // MARK: - The options

    static let table: [Option] = [
        Option(
            "host", .prefixed("HOST"), "Address to listen on",
            apply: {
                $0.host = $1; return true
            }, defaultValue: { $0.host }),
        Option(
            "port", .prefixed("PORT"), "Port to listen on",
            apply: { set(&$0.port, Int($1)) }, defaultValue: { String($0.port) }),
        Option(
            "database-url", .shared("DATABASE_URL"), "libpq connection string or `postgresql://` URL",
            emptyDefault: "libpq's `PG*` variables",
            apply: {
                $0.databaseURL = $1; return true
            }, defaultValue: { $0.databaseURL }),
        Option(
            "read-database-url", .shared("READ_DATABASE_URL"),
            "A read replica's libpq connection string or URL: `GET` queries run on the healthy replicas in turn, the rest on the primary; repeatable, and the variable takes a comma-separated list of URLs",
            emptyDefault: "none",
            apply: { options, value in
                let urls = replicaURLs(in: value)
                options.readDatabaseURLs += urls
                return !urls.isEmpty
            },
            defaultValue: { $0.readDatabaseURLs.joined(separator: ",") }),
        Option(
            "max-replica-lag", .prefixed("MAX_REPLICA_LAG"),
            "Seconds a replica may lag behind the primary before it takes no reads (until it catches up)",
            apply: { set(&$0.maxReplicaLag, Double($1)) }, defaultValue: { seconds($0.maxReplicaLag) }),
        Option(
            "pooler-compatible", .prefixed("POOLER_COMPATIBLE"),
            "No named prepared statements and no session settings, for a pooler in transaction mode (PgBouncer before 1.21), which the server also detects by itself on its first connection; `--statement-timeout` is then set on the role instead",
            isFlag: true,
            apply: { set(&$0.poolerCompatible, flag($1)) }, defaultValue: { String($0.poolerCompatible) }),
        Option(
            "rows-from", .prefixed("ROWS_FROM"),
            "Where a streamed list's rows are read: `socket`, from the database connection's socket as they arrive, libpq idle meanwhile; `libpq`, through libpq's single-row mode (always so on an encrypted connection)",
            apply: { set(&$0.rowsFromSocket, ["socket": true, "libpq": false][$1]) },
            defaultValue: { $0.rowsFromSocket ? "socket" : "libpq" }),
        Option(
            "database-sslmode", .prefixed("DATABASE_SSLMODE"),
            "libpq's `sslmode` for the database: `disable`, `allow`, `prefer`, `require`, `verify-ca` or `verify-full`; it overrides the connection string's",
            emptyDefault: "the connection string's, else `PGSSLMODE`, else `prefer`",
            apply: { options, value in
                guard ServerOptions.sslModes.contains(value) else { return false }
                options.databaseSSLMode = value
                return true
            },
            defaultValue: { $0.databaseSSLMode }),
        Option(
            "pool-size", .prefixed("POOL_SIZE"), "Most database connections open at once",
            apply: { set(&$0.poolSize, Int($1)) }, defaultValue: { String($0.poolSize) }),
        Option(
            "pipeline-connections", .prefixed("PIPELINE_CONNECTIONS"),
            "Connections per event loop, besides the pool, that run the single-object queries of many requests together; one while it keeps up, more when it is held up",
            apply: { set(&$0.pipelineConnections, Int($1)) }, defaultValue: { String($0.pipelineConnections) }),
        Option(
            "event-loops", .prefixed("EVENT_LOOPS"),
            "Threads that serve the client connections and run their single-object queries; handlers that block run on worker threads",
            emptyDefault: "half the processors, at least one",
            apply: { set(&$0.eventLoops, Int($1).map(Optional.some)) }, defaultValue: { $0.eventLoops.map(String.init) ?? "" }),
        Option(
            "acquire-timeout", .prefixed("ACQUIRE_TIMEOUT"),
            "Seconds a request waits for a free database connection before 503",
            apply: { set(&$0.acquireTimeout, Double($1)) }, defaultValue: { seconds($0.acquireTimeout) }),
        Option(
            "statement-timeout", .prefixed("STATEMENT_TIMEOUT"),
            "Seconds a query may run before it is cancelled and answered 504; `0`: no limit",
            apply: { set(&$0.statementTimeout, Double($1)) }, defaultValue: { seconds($0.statementTimeout) }),
        Option(
            "date-format", .prefixed("DATE_FORMAT"),
            #"Dates as `iso8601` (`"1995-12-01"`) or `epoch-milliseconds`, as HTTP-RPC wrote them"#,
            apply: { set(&$0.dateFormat, dateFormat(named: $1)) }, defaultValue: { name(of: $0.dateFormat) }),
        Option(
            "max-rows", .prefixed("MAX_ROWS"), "Most rows in any list, a page's `limit` included",
            emptyDefault: "no cap",
            apply: { set(&$0.maxRows, Int($1).map(Optional.some)) }, defaultValue: { $0.maxRows.map(String.init) ?? "" }),
        Option(
            "max-arguments", .prefixed("MAX_ARGUMENTS"),
            "Most argument values in one request: query items, form fields and JSON body members, each value of a repeated one counting once; more are answered 400",
            apply: { set(&$0.requestLimits.arguments, count($1)) }, defaultValue: { String($0.requestLimits.arguments) }),
        Option(
            "max-filters", .prefixed("MAX_FILTERS"),
            "Most filters (conditions on columns such as `lastName=eq.Facello`) in one request; more are answered 400",
            apply: { set(&$0.requestLimits.filters, count($1)) }, defaultValue: { String($0.requestLimits.filters) }),
        Option(
            "max-list-items", .prefixed("MAX_LIST_ITEMS"), "Most items in one filter's `in.()` list; more are answered 400",
            apply: { set(&$0.requestLimits.listItems, count($1)) }, defaultValue: { String($0.requestLimits.listItems) }),
        Option(
            "max-batch-calls", .prefixed("MAX_BATCH_CALLS"),
            "Most calls in one JSON-RPC batch; more are answered with one error, `-32600`, and none runs",
            apply: { set(&$0.requestLimits.batchCalls, count($1)) }, defaultValue: { String($0.requestLimits.batchCalls) }),
        Option(
            "max-jsonrpc-bytes", .prefixed("MAX_JSONRPC_BYTES"),
            "Largest `/jsonrpc` request body in bytes, a batch or one call; a larger one is answered 413 before it is read",
            apply: { set(&$0.requestLimits.jsonRPCBytes, count($1)) }, defaultValue: { String($0.requestLimits.jsonRPCBytes) }),
        Option(
            "cors-origin", .prefixed("CORS_ORIGINS"),
            "An origin whose web pages may call the server (CORS), such as `https://app.example.com`, or `*` for any; repeatable, and the variable takes a comma-separated list",
            emptyDefault: "none",
            apply: { options, value in
                let origins = value.split(separator: ",").map { String($0.filter { $0 != " " }) }.filter { !$0.isEmpty }
                options.corsOrigins += origins
                return !origins.isEmpty
            },
            defaultValue: { $0.corsOrigins.joined(separator: ",") }),
        Option(
            "allowed-hosts", .prefixed("ALLOWED_HOSTS"),
            "A host name the server answers for, compared with each request's `Host` without its port (another name gets 421: a page that rebinds its own name to the server's address reaches nothing), or `*` for any; repeatable, and the variable takes a comma-separated list",
            emptyDefault:
                "the names of `--host`: the address and `localhost` for a loopback address; the machine's host name, `localhost` and each interface's address for `0.0.0.0` or `::`",
            apply: { options, value in
                let names = value.split(separator: ",").map { String($0.filter { $0 != " " }) }.filter { !$0.isEmpty }
                options.allowedHosts += names
                return !names.isEmpty
            },
            defaultValue: { $0.allowedHosts.joined(separator: ",") }),
        Option(
            "tls-cert", .prefixed("TLS_CERT"),
            "Certificate file (PEM, with its chain) to serve HTTPS with; needs `--tls-key`",
            emptyDefault: "plain HTTP",
            apply: {
                $0.tlsCertificateFile = $1; return true
            }, defaultValue: { $0.tlsCertificateFile }),
        Option(
            "tls-key", .prefixed("TLS_KEY"),
            "Private key file (PEM) of the certificate, readable by its owner only (`chmod 600`); SIGHUP reads both files again",
            apply: {
                $0.tlsKeyFile = $1; return true
            }, defaultValue: { $0.tlsKeyFile }),
        Option(
            "tls-priorities", .prefixed("TLS_PRIORITIES"),
            "Protocol versions and ciphers an HTTPS client may use, as a GnuTLS priority string; the default allows TLS 1.2 and 1.3 only",
            apply: { options, value in
                guard !value.isEmpty else { return false }
                options.tlsPriorities = value
                return true
            },
            defaultValue: { $0.tlsPriorities }),
        Option(
            "tls-priorities-file", .prefixed("TLS_PRIORITIES_FILE"),
            "File of the GnuTLS priority string (its first line that is not blank or a `#` comment), instead of `--tls-priorities`; read at start and again on SIGHUP, new connections then getting it (a string GnuTLS rejects is logged and the previous one stays)",
            emptyDefault: "none",
            apply: {
                $0.tlsPrioritiesFile = $1; return true
            }, defaultValue: { $0.tlsPrioritiesFile }),
        Option(
            "auth-basic-file", .prefixed("AUTH_BASIC_FILE"),
            "Password file for HTTP basic authentication: lines `user:$pbkdf2-sha256$…` (passlib's format; `hash-password` makes one)",
            emptyDefault: "none",
            apply: {
                $0.authBasicFile = $1; return true
            }, defaultValue: { $0.authBasicFile }),
        Option(
            "auth-basic-postgres", .prefixed("AUTH_BASIC_POSTGRES"),
            "`true`: HTTP basic credentials are checked by logging in to PostgreSQL as that user (needs password authentication in `pg_hba.conf`)",
            apply: { set(&$0.authBasicPostgres, Bool($1)) }, defaultValue: { String($0.authBasicPostgres) }),
        Option(
            "jwt-secret-file", .prefixed("JWT_SECRET_FILE"),
            "File of the shared secret (32 bytes or more) of HS256 bearer tokens",
            emptyDefault: "none",
            apply: {
                $0.jwtSecretFile = $1; return true
            }, defaultValue: { $0.jwtSecretFile }),
        Option(
            "jwt-public-key-file", .prefixed("JWT_PUBLIC_KEY_FILE"),
            "Public key file (PEM) of bearer tokens: RSA (RS256, 2048 bits or more), P-256 (ES256) or Ed25519 (EdDSA)",
            emptyDefault: "none",
            apply: {
                $0.jwtPublicKeyFile = $1; return true
            }, defaultValue: { $0.jwtPublicKeyFile }),
        Option(
            "jwt-jwks-file", .prefixed("JWT_JWKS_FILE"),
            "File of the JSON Web Key Set (`{\"keys\": [...]}`, an identity provider's `jwks.json`) of bearer tokens: a token's `kid` names its key, each key pinned to its `alg` (HS256, RS256, ES256 or EdDSA)",
            emptyDefault: "none",
            apply: {
                $0.jwtJWKSFile = $1; return true
            }, defaultValue: { $0.jwtJWKSFile }),
        Option(
            "jwt-audience", .prefixed("JWT_AUDIENCE"), "The `aud` bearer tokens must name (a string, or one of an array)",
            emptyDefault: "tokens without `aud`",
            apply: {
                $0.jwtAudience = $1; return true
            }, defaultValue: { $0.jwtAudience }),
        Option(
            "jwt-issuer", .prefixed("JWT_ISSUER"), "The `iss` bearer tokens must have, exactly",
            emptyDefault: "any",
            apply: {
                $0.jwtIssuer = $1; return true
            }, defaultValue: { $0.jwtIssuer }),
        Option(
            "jwt-role-claim", .prefixed("JWT_ROLE_CLAIM"),
            "Where a bearer token's claims name its database role: a claim's name, or a path in PostgREST's syntax (`.app_metadata.role`, `.realm_access.roles[0]`, `.\"https://example.com/role\"`)",
            apply: { options, value in
                guard JSONWebTokenVerifier.ClaimPath(value) != nil else { return false }
                options.jwtRoleClaim = value
                return true
            }, defaultValue: { $0.jwtRoleClaim }),
        Option(
            "role-map", .prefixed("ROLE_MAP"),
            "File of `user:role` lines: the database role of each basic user whose role is not its name",
            emptyDefault: "none",
            apply: {
                $0.roleMapFile = $1; return true
            }, defaultValue: { $0.roleMapFile }),
        Option(
            "anonymous-role", .prefixed("ANONYMOUS_ROLE"),
            "Database role of requests without credentials once authentication is on (otherwise they get 401); alone, every request's role",
            emptyDefault: "none",
            apply: {
                $0.anonymousRole = $1; return true
            }, defaultValue: { $0.anonymousRole }),
        Option(
            "password-checks", .prefixed("PASSWORD_CHECKS"),
            "Basic credentials' password checks (slow on purpose) run at once, at a low priority; more wait in a short queue, and past it are answered 503",
            apply: { set(&$0.passwordChecks, Int($1).flatMap { $0 >= 1 ? $0 : nil }) }, defaultValue: { String($0.passwordChecks) }),
        Option(
            "admission-timeout", .prefixed("ADMISSION_TIMEOUT"),
            "Seconds a request waits for its credentials' check (a password check queued or running, a database login that hangs) before it is answered 503 with `Retry-After`",
            apply: { set(&$0.admissionTimeout, Double($1).flatMap { $0 > 0 ? $0 : nil }) }, defaultValue: { seconds($0.admissionTimeout) }),
        Option(
            "max-connections", .prefixed("MAX_CONNECTIONS"), "Most client connections at once; more are refused",
            apply: { set(&$0.maxConnections, Int($1)) }, defaultValue: { String($0.maxConnections) }),
        Option(
            "connection-timeout", .prefixed("CONNECTION_TIMEOUT"),
            "Seconds a client connection may stay idle, or take to send its request's header fields",
            apply: { set(&$0.connectionTimeout, Int($1)) }, defaultValue: { String($0.connectionTimeout) }),
        Option(
            "body-timeout", .prefixed("BODY_TIMEOUT"),
            "Seconds a request's body may take to arrive once its header fields are in; past it the connection is closed",
            apply: { set(&$0.bodyTimeout, Double($1).flatMap { $0 > 0 ? $0 : nil }) }, defaultValue: { seconds($0.bodyTimeout) }),
        Option(
            "max-body-size", .prefixed("MAX_BODY_SIZE"),
            "Largest request body, in bytes; a longer one is answered 413 unread (a service's lower limit for its path holds). A body past 1 MiB is held in a temporary file, not in memory, and a JSON array posted to a table is read from there an object at a time",
            apply: { set(&$0.maxBodySize, Int($1).flatMap { $0 > 0 ? $0 : nil }) }, defaultValue: { String($0.maxBodySize) }),
        Option(
            "body-bytes-in-flight", .prefixed("BODY_BYTES_IN_FLIGHT"),
            "Most bytes of request bodies held at once, all requests together; a body past it is discarded and answered 503 (413 for one body larger than it alone, which no retry would pass)",
            apply: { set(&$0.bodyBytesInFlight, Int($1).flatMap { $0 > 0 ? $0 : nil }) }, defaultValue: { String($0.bodyBytesInFlight) }),
        Option(
            "response-timeout", .prefixed("RESPONSE_TIMEOUT"),
            "Seconds a streamed response may take to be sent, however slowly its client reads; past it the connection is closed and its database connection let go",
            apply: { set(&$0.responseTimeout, Double($1).flatMap { $0 > 0 ? $0 : nil }) }, defaultValue: { seconds($0.responseTimeout) }),
        Option(
            "live", .prefixed("LIVE"),
            "`on`: a list asked for with `Accept: text/event-stream` answers its rows, then each change to them as it commits (Server-Sent Events, docs/LIVE.md; the database needs `live.sql`, which `sql-rest init --live` writes), over one `LISTEN` connection to the primary; `off`: 406",
            apply: { set(&$0.live, ["on": true, "off": false][$1]) }, defaultValue: { $0.live ? "on" : "off" }),
        Option(
            "live-heartbeat", .prefixed("LIVE_HEARTBEAT"),
            "Seconds between the comments an event stream gets while it has nothing to send, so that proxies keep it open",
            apply: { set(&$0.liveHeartbeat, Double($1).flatMap { $0 > 0 ? $0 : nil }) }, defaultValue: { seconds($0.liveHeartbeat) }),
        Option(
            "live-batch-ms", .prefixed("LIVE_BATCH_MS"),
            "Milliseconds the live feed gathers changes before it reads the changed rows again, one statement per group of callers (a list, its filters and a role)",
            apply: { set(&$0.liveBatchMilliseconds, Int($1).flatMap { $0 >= 0 ? $0 : nil }) },
            defaultValue: { String($0.liveBatchMilliseconds) }),
        Option(
            "live-window", .prefixed("LIVE_WINDOW"),
            "Kilobytes of events each group of callers keeps for those who connect again with `Last-Event-ID` (further behind, they get `reset` and a new snapshot); an event stream whose client falls further behind is dropped",
            apply: { set(&$0.liveWindowKilobytes, Int($1).flatMap { $0 >= 1 ? $0 : nil }) },
            defaultValue: { String($0.liveWindowKilobytes) }),
        Option(
            "idle-in-transaction-timeout", .prefixed("IDLE_IN_TRANSACTION_TIMEOUT"),
            "Seconds PostgreSQL lets a pooled connection wait in a transaction for its next statement before it ends the session (`idle_in_transaction_session_timeout`); `0`: no limit",
            apply: { set(&$0.idleInTransactionTimeout, Double($1).flatMap { $0 >= 0 ? $0 : nil }) },
            defaultValue: { seconds($0.idleInTransactionTimeout) }),
        Option(
            "shutdown-timeout", .prefixed("SHUTDOWN_TIMEOUT"), "Seconds SIGTERM or SIGINT lets requests in flight finish",
            apply: { set(&$0.shutdownTimeout, Double($1)) }, defaultValue: { seconds($0.shutdownTimeout) }),
        Option(
            "drain-seconds", .prefixed("DRAIN_SECONDS"),
            "Seconds SIGTERM keeps serving, with `/health/ready` answering 503, before the listener closes, so that a load balancer stops sending first; `0`: none. SIGINT does not drain; a second signal exits at once",
            apply: { set(&$0.drainSeconds, Double($1)) }, defaultValue: { seconds($0.drainSeconds) }),
        Option(
            "metrics", .prefixed("METRICS"), "`on`: count requests and serve `GET /metrics` (Prometheus); `off`: neither",
            apply: { set(&$0.metrics, ["on": true, "off": false][$1]) }, defaultValue: { $0.metrics ? "on" : "off" }),
        Option(
            "otlp-endpoint", .shared("OTEL_EXPORTER_OTLP_ENDPOINT"),
            "The OpenTelemetry collector's OTLP/HTTP endpoint (`http://host:4318`; `/v1/traces` is added unless a path is given): each request's spans (the request, its admission, its statements, its attachment blocks) are exported there, and a request's `traceparent` continues its trace",
            emptyDefault: "none: no tracing",
            apply: { options, value in
                guard (try? OTLPEndpoint(value)) != nil else { return false }
                options.otlpEndpoint = value
                return true
            },
            defaultValue: { $0.otlpEndpoint }),
        Option(
            "trace-sampling", .prefixed("TRACE_SAMPLING"),
            "The share of the traces begun here (requests without a `traceparent`) that are recorded and exported, `0` to `1`; a request with one follows its `sampled` flag",
            apply: { set(&$0.traceSampling, Double($1).flatMap { (0...1).contains($0) ? $0 : nil }) },
            defaultValue: { seconds($0.traceSampling) }),
        Option(
            "server-timing", .prefixed("SERVER_TIMING"),
            "Answers carry `Server-Timing`: the admission's time (`admission`), the handler's with the database work its answer waited for (`handler`), and the time from the request line to the answer (`total`), in milliseconds",
            isFlag: true,
            apply: { set(&$0.serverTiming, flag($1)) }, defaultValue: { String($0.serverTiming) }),
        Option(
            "mhd-patches", .prefixed("MHD_PATCHES"),
            "`on`: change libmicrohttpd's behaviour from underneath (problem documents for its own refusals, less memory per idle connection, event streams' bytes sent as they come) on the versions and architectures tested, else not; `off`: never; `force`: on any version, to try one; or the names of some patches, separated by commas (`error-pages`, `pool-release`, `event-writes`): those only, on the versions tested",
            apply: { set(&$0.mhdPatches, LibraryPatches.Policy(rawValue: $1)) }, defaultValue: { $0.mhdPatches.rawValue }),
        Option(
            "log-format", .prefixed("LOG_FORMAT"),
            "`text` lines, or `json`: one JSON object per line, the access log's fields as members",
            apply: { set(&$0.logFormat, LogFormat(rawValue: $1)) }, defaultValue: { $0.logFormat.rawValue }),
        Option(
            "log-level", .shared("LOG_LEVEL"),
            "Log level: `trace`, `debug`, `info` (a line per request), `notice`, `warning`, `error` or `critical`; the log goes to standard error",
            apply: {
                $0.logLevel = $1; return true
            }, defaultValue: { $0.logLevel }),
    ]

    private static func set<Value>(_ field: inout Value, _ value: Value?) -> Bool {
        guard let value else { return false }
        field = value
        return true
    }

    /// The URLs of a `--read-database-url` value: one, or several separated
    /// by commas (a comma followed by `postgresql://` or `postgres://`, so
    /// that a URL of several hosts, `postgresql://a,b/db`, stays whole).
    static func replicaURLs(in value: String) -> [String] {
        var urls: [String] = []
        var current = ""
        for piece in value.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = piece.drop { $0 == " " }
            if !current.isEmpty, trimmed.hasPrefix("postgresql://") || trimmed.hasPrefix("postgres://") {
                urls.append(current)
                current = String(trimmed)
            } else {
                current += current.isEmpty ? String(trimmed) : "," + piece
            }
        }
        if !current.isEmpty { urls.append(current) }
        return urls.map { String($0.reversed().drop { $0 == " " }.reversed()) }.filter { !$0.isEmpty }
    }

    /// A count of 1 or more, written in decimal digits.
    private static func count(_ value: String) -> Int? {
        Int(value).flatMap { $0 >= 1 ? $0 : nil }
    }

    static func flag(_ value: String) -> Bool? {
        switch value.lowercased() {
        case "true", "1", "yes", "on": true
        case "false", "0", "no", "off": false
        default: nil
        }
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    private static func dateFormat(named name: String) -> JSONRenderingOptions.DateFormat? {
        switch name {
        case "iso8601": .iso8601
        case "epoch-milliseconds": .epochMilliseconds
        default: nil
        }
    }

    private static func name(of dateFormat: JSONRenderingOptions.DateFormat) -> String {
        switch dateFormat {
        case .iso8601: "iso8601"
        case .epochMilliseconds: "epoch-milliseconds"
        }
    }

    // MARK: - Help

    /// The text `--help` prints: what the program does, then every option
    /// with its variable and its default.
    static func help(
        defaults: ServerOptions, program: String, overview: String, environmentPrefix: String,
        programOptions: [Option] = [], commands: [(name: String, summary: String)] = []
    ) -> String {
        let usage = commands.isEmpty ? program : program + " <command>"
        var text = """
            OVERVIEW: \(overview)

            The database is reached through --database-url, else the DATABASE_URL environment
            variable, else libpq's PG* variables (PGHOST, PGPORT, PGDATABASE, PGUSER, ...).
            Every option can also be given in the environment (\(environmentPrefix)PORT, \(environmentPrefix)HOST, ...).

            USAGE: \(usage) [--<option> <value>] ...


            """
        if !commands.isEmpty {
            text += "COMMANDS:\n"
            for command in commands {
                text += "  \(command.name)\n        \(plain(command.summary))\n"
            }
            text += "\n"
        }
        text += "OPTIONS:\n"
        for option in programOptions + table {
            let defaultValue = option.defaultValue(defaults)
            var line = "        " + plain(option.meaning) + " (env " + option.variable(prefix: environmentPrefix)
            if defaultValue.isEmpty, let emptyDefault = option.emptyDefault {
                line += "; default: " + plain(emptyDefault)
            }
            if option.isRequired { line += "; required" }
            line += ")."
            if !defaultValue.isEmpty { line += " (default: \(defaultValue))" }
            text += "  --\(option.name) \(option.valueName)\n" + line + "\n"
        }
        text += "  --version\n        Show the version.\n"
        text += "  -h, --help\n        Show help information.\n"
        text +=
            "\n\(program) hash-password [<user>] [--iterations <n>] reads a password (a line) and prints\n"
            + "its entry for --auth-basic-file: <user>:$pbkdf2-sha256$<iterations>$<salt>$<hash>.\n"
        return text
    }

    /// The options as a Markdown table, for a README: option, variable,
    /// built-in default, meaning.
    static func markdownTable(environmentPrefix: String) -> String {
        let defaults = ServerOptions()
        var text = "| Option | Environment | Default | Meaning |\n| --- | --- | --- | --- |\n"
        for option in table {
            let value = option.defaultValue(defaults)
            let defaultText = value.isEmpty ? option.emptyDefault ?? "" : "`\(value)`"
            let meaning = option.meaning.prefix(1).lowercased() + option.meaning.dropFirst()
            text += "| `--\(option.name)` | `\(option.variable(prefix: environmentPrefix))` | \(defaultText) | \(meaning) |\n"
        }
        return text
    }

    /// Markdown without its backticks.
    private static func plain(_ markdown: String) -> String {
        markdown.filter { $0 != "`" }
    }
}
