import CoreMetrics
import PrometheusMetrics
import Testing

/// swift-metrics' metrics, made with a `MetricsRegistry` as their factory,
/// in the Prometheus exposition (the factory is given to each metric here,
/// not bootstrapped: a process bootstraps swift-metrics once).
@Suite struct MetricsRegistryTests {
    private func exposition(_ registry: MetricsRegistry) -> String {
        var text = PrometheusText()
        registry.write(to: &text)
        return String(decoding: text.bytes, as: UTF8.self)
    }

    @Test("a counter with dimensions is a counter series with labels, one # TYPE line per name")
    func counter() {
        let registry = MetricsRegistry()
        CoreMetrics.Counter(label: "orders_placed_total", dimensions: [("channel", "web")], factory: registry).increment(by: 3)
        CoreMetrics.Counter(label: "orders_placed_total", dimensions: [("channel", "api")], factory: registry).increment()
        // The same label and dimensions: the same series.
        CoreMetrics.Counter(label: "orders_placed_total", dimensions: [("channel", "web")], factory: registry).increment()
        let text = exposition(registry)
        #expect(text.contains(#"orders_placed_total{channel="web"} 4"#), "\(text)")
        #expect(text.contains(#"orders_placed_total{channel="api"} 1"#))
        #expect(text.ranges(of: "# TYPE orders_placed_total counter").count == 1)
    }

    @Test("gauges, meters and plain recorders are gauges; timers histograms in seconds; aggregating recorders histograms")
    func kinds() {
        let registry = MetricsRegistry()
        Gauge(label: "queue_length", factory: registry).record(7)
        Meter(label: "workers_busy", factory: registry).increment(by: 2.5)
        CoreMetrics.Timer(label: "job_seconds", factory: registry).recordMilliseconds(3)
        Recorder(label: "batch_items", factory: registry).record(40)
        FloatingPointCounter(label: "bytes_total", factory: registry).increment(by: 1.5)
        let text = exposition(registry)
        #expect(text.contains("# TYPE queue_length gauge\n"), "\(text)")
        #expect(text.contains("queue_length 7.0\n"))
        #expect(text.contains("workers_busy 2.5\n"))
        #expect(text.contains("# TYPE job_seconds histogram\n"))
        #expect(text.contains(#"job_seconds_bucket{le="0.005"} 1"#))
        #expect(text.contains("job_seconds_sum 0.003\n"))
        #expect(text.contains("# TYPE batch_items histogram\n"))
        #expect(text.contains(#"batch_items_bucket{le="50"} 1"#))
        #expect(text.contains("# TYPE bytes_total counter\n"))
        #expect(text.contains("bytes_total 1.5\n"))
    }

    @Test("labels and dimension names become names Prometheus takes; label values are escaped")
    func names() {
        let registry = MetricsRegistry()
        CoreMetrics.Counter(label: "http.client-requests", dimensions: [("the host", "a\"b\nc")], factory: registry).increment()
        CoreMetrics.Counter(label: "9lives", factory: registry).increment()
        let text = exposition(registry)
        #expect(text.contains(#"http_client_requests{the_host="a\"b\nc"} 1"#), "\(text)")
        #expect(text.contains("_lives 1\n"))
    }

    @Test("a label taken by another kind of metric gets a name of its own: one name never holds two types")
    func kindClash() {
        let registry = MetricsRegistry()
        CoreMetrics.Counter(label: "jobs", factory: registry).increment()
        Gauge(label: "jobs", factory: registry).record(2)
        let text = exposition(registry)
        #expect(text.contains("# TYPE jobs counter\njobs 1\n"), "\(text)")
        #expect(text.contains("# TYPE jobs_gauge gauge\njobs_gauge 2.0\n"))
    }

    @Test("a counter does not go down: a negative increment adds nothing")
    func negative() {
        let registry = MetricsRegistry()
        let counter = CoreMetrics.Counter(label: "things", factory: registry)
        counter.increment(by: 5)
        counter.increment(by: -3)
        #expect(exposition(registry).contains("things 5\n"))
    }
}
