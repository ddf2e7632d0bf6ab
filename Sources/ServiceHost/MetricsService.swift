import HTTPServer
import PrometheusMetrics
import PostgreSQL
import PostgreSQLWebService
import WebService

/// `GET /metrics`: the server's figures in the Prometheus text format,
/// mounted by ``ServerProgram`` unless `--metrics off`.
///
/// - requests by route pattern, method and status, with a duration
///   histogram, and the bytes of streamed bodies (`RouteMetrics`);
/// - for each pool, labelled `pool="primary"` and so on: connections in
///   use and idle, callers waiting, the acquire-time histogram, and the
///   sizes of the statement batchers' batches;
/// - database errors answered over HTTP, by SQLSTATE class;
/// - every metric made through swift-metrics (`Counter(label:)`, `Timer`,
///   …), the program's, a library's or a service's own, from the
///   `MetricsRegistry` that ``ServerProgram`` bootstraps as its backend;
/// - the live feed's streams, groups, batches and statements.
///
/// The server's own series are kept in atomics of each route's record and
/// each pool, which a request reaches without a lookup by name or a lock,
/// and are written into the same exposition.
///
/// ```swift
/// let metrics = MetricsService(routes: routeMetrics, pools: [("primary", pool)], registry: registry)
/// ```
public struct MetricsService: WebService {
    public let path = "/metrics"
    public let description = "The server's metrics in the Prometheus text format."

    private let routeMetrics: RouteMetrics
    private let pools: [(name: String, pool: ConnectionPool)]
    private let registry: MetricsRegistry?
    private let live: LiveFeed?

    /// An exporter of `routes`, of each pool under its name, of the
    /// metrics made through swift-metrics into `registry`, and of the
    /// `live` feed's streams, groups, batches and statements.
    public init(
        routes: RouteMetrics, pools: [(name: String, pool: ConnectionPool)], registry: MetricsRegistry? = nil, live: LiveFeed? = nil
    ) {
        self.routeMetrics = routes
        self.pools = pools
        self.registry = registry
        self.live = live
    }

    public var routes: [Route] {
        Route(.get, "/", description: "Returns the metrics in the Prometheus text exposition format.") { () -> HTTPResponse in
            HTTPResponse(status: .ok, headers: ["Content-Type": PrometheusText.contentType], body: .bytes(exposition()))
        }
    }

    /// The whole exposition, as `/metrics` sends it.
    public func exposition() -> [UInt8] {
        var text = PrometheusText()
        routeMetrics.write(to: &text)
        let figures = pools.map { (name: $0.name, statistics: $0.pool.statistics) }
        text.metric("db_pool_connections", type: .gauge, help: "Database connections of the pool, by state (in_use, idle).")
        for (name, statistics) in figures {
            text.sample("db_pool_connections", labels: [("pool", name), ("state", "in_use")], value: UInt64(statistics.inUse))
            text.sample("db_pool_connections", labels: [("pool", name), ("state", "idle")], value: UInt64(statistics.idle))
        }
        text.metric("db_pool_max_connections", type: .gauge, help: "The most connections the pool opens.")
        for (name, statistics) in figures {
            text.sample("db_pool_max_connections", labels: [("pool", name)], value: UInt64(statistics.size))
        }
        text.metric("db_pool_waiting", type: .gauge, help: "Callers waiting in line for a connection of the pool.")
        for (name, statistics) in figures {
            text.sample("db_pool_waiting", labels: [("pool", name)], value: UInt64(statistics.waiting))
        }
        text.metric("db_pool_acquire_duration_seconds", type: .histogram, help: "Time taken to get a connection from the pool.")
        for (name, statistics) in figures {
            text.histogram("db_pool_acquire_duration_seconds", labels: [("pool", name)], statistics.acquireDurations, scale: 1e9)
        }
        text.metric(
            "db_pipeline_batch_size", type: .histogram,
            help: "Requests' statements sent to the database together by one pass of the pipeline loop.")
        for (name, statistics) in figures {
            text.histogram("db_pipeline_batch_size", labels: [("pool", name)], statistics.batchSizes)
        }
        text.metric("db_errors_total", type: .counter, help: "Database errors answered over HTTP, by SQLSTATE class.")
        for (sqlStateClass, count) in DatabaseError.answeredByClass.values {
            text.sample("db_errors_total", labels: [("class", sqlStateClass)], value: count)
        }
        registry?.write(to: &text)
        if let live {
            let figures = live.statistics
            for (name, type, help, value) in [
                ("live_streams", PrometheusText.MetricType.gauge, "Event streams open.", figures.streams),
                ("live_groups", .gauge, "Groups of event streams (a list, its filters and a role) followed.", figures.groups),
                ("live_batches_total", .counter, "Batches of changes the live feed read.", figures.batches),
                ("live_statements_total", .counter, "Statements the live feed ran to read changed rows again.", figures.statements),
                ("live_events_total", .counter, "Events written, once per group.", figures.events),
                ("live_dropped_total", .counter, "Event streams dropped for falling too far behind.", figures.dropped),
                ("live_resets_total", .counter, "Event streams reset (their list to be read again from the start).", figures.resets),
                ("live_listening", .gauge, "Whether the LISTEN connection is up (1) or not (0).", figures.isListening ? 1 : 0),
            ] {
                text.metric(name, type: type, help: help)
                text.sample(name, labels: [], value: UInt64(max(0, value)))
            }
        }
        return text.bytes
    }
}
