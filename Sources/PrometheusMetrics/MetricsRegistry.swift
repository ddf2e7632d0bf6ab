import CoreMetrics
import Locking
import Synchronization

/// The backend of swift-metrics for the Prometheus exposition: every
/// metric made through its API (`Counter(label:)`, `Gauge`, `Timer`, …),
/// by the program, a library or a user's service, is kept here and
/// written by ``write(to:)`` beside the server's own series on `/metrics`.
///
/// A metric is found by its label and dimensions once, when it is made;
/// counting then touches its own atomics only (no lookup, no lock). The
/// label becomes the series' name (characters Prometheus does not allow
/// become `_`), the dimensions its labels. Counters are `counter`s;
/// gauges, meters and non-aggregating recorders `gauge`s; timers
/// histograms in seconds, aggregating recorders histograms of their
/// values, both over fixed buckets.
///
/// ```swift
/// let registry = MetricsRegistry()
/// MetricsSystem.bootstrap(registry)          // once per process (ServerProgram does it)
/// CoreMetrics.Counter(label: "orders_placed_total", dimensions: [("channel", "web")]).increment()
/// var text = PrometheusText()
/// registry.write(to: &text)                  // orders_placed_total{channel="web"} 1
/// ```
public final class MetricsRegistry: MetricsFactory {
    private let metrics = Locked<[Key: Series]>([:])

    private struct Key: Hashable {
        let name: String
        let labels: [String]
    }

    /// One series and what kind of metric it is.
    fileprivate enum Series {
        case counter(IntegerSeries)
        case floatingCounter(FloatingSeries)
        case gauge(FloatingSeries)
        case histogram(HistogramSeries)
    }

    /// An empty registry.
    public init() {}

    // MARK: - MetricsFactory

    public func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        if case .counter(let handler) = series(label, dimensions, { .counter(IntegerSeries()) }) { return handler }
        return IntegerSeries()
    }

    public func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        if case .floatingCounter(let handler) = series(label, dimensions, { .floatingCounter(FloatingSeries()) }) { return handler }
        return FloatingSeries()
    }

    public func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        gauge(label, dimensions)
    }

    public func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return gauge(label, dimensions) }
        let made = series(label, dimensions) { .histogram(HistogramSeries(bounds: Self.valueBounds, scale: 1)) }
        if case .histogram(let handler) = made { return handler }
        return HistogramSeries(bounds: Self.valueBounds, scale: 1)
    }

    public func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        let made = series(label, dimensions) { .histogram(HistogramSeries(bounds: Histogram.durationBounds, scale: 1e9)) }
        if case .histogram(let handler) = made { return handler }
        return HistogramSeries(bounds: Histogram.durationBounds, scale: 1e9)
    }

    private func gauge(_ label: String, _ dimensions: [(String, String)]) -> FloatingSeries {
        if case .gauge(let handler) = series(label, dimensions, { .gauge(FloatingSeries()) }) { return handler }
        return FloatingSeries()
    }

    // The series stay: a metric made again later continues the same counts,
    // as a Prometheus series must.
    public func destroyCounter(_ handler: any CounterHandler) {}
    public func destroyMeter(_ handler: any MeterHandler) {}
    public func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}
    public func destroyRecorder(_ handler: any RecorderHandler) {}
    public func destroyTimer(_ handler: any TimerHandler) {}

    /// Bounds of an aggregating recorder's histogram: 1 to 10,000,000, three per decade.
    static let valueBounds: [UInt64] =
        (0...6).flatMap { power -> [UInt64] in
            let decade = (0..<power).reduce(UInt64(1)) { product, _ in product * 10 }
            return [decade, 2 * decade, 5 * decade]
        } + [10_000_000]

    /// The series of `label` and `dimensions`, made by `make` the first
    /// time. A name taken by another kind of metric (a gauge where a
    /// counter is asked for) gives the new one a name of its own, with
    /// its kind appended, so that one name never holds two types; a
    /// timer and an aggregating recorder (both histograms) of one label
    /// share it.
    private func series(_ label: String, _ dimensions: [(String, String)], _ make: () -> Series) -> Series {
        let wanted = make()
        var name = Self.metricName(label)
        let labels = dimensions.flatMap { [Self.labelName($0.0), $0.1] }
        return metrics.withLock { metrics in
            while metrics.contains(where: { $0.key.name == name && !$0.value.isOfKind(wanted) }) {
                name += "_" + wanted.type.rawValue
            }
            let key = Key(name: name, labels: labels)
            if let existing = metrics[key] { return existing }
            metrics[key] = wanted
            return wanted
        }
    }

    // MARK: - The exposition

    /// Writes every series, grouped by name (one `# TYPE` line each), sorted.
    public func write(to text: inout PrometheusText) {
        let all = metrics.withLock { $0.map { ($0.key, $0.value) } }.sorted {
            ($0.0.name, $0.0.labels.joined(separator: "\u{0}")) < ($1.0.name, $1.0.labels.joined(separator: "\u{0}"))
        }
        var written: String?
        for (key, series) in all {
            if written != key.name {
                written = key.name
                text.metric(key.name, type: series.type, help: "Through swift-metrics.")
            }
            let labels = stride(from: 0, to: key.labels.count - 1, by: 2).map { (key.labels[$0], key.labels[$0 + 1]) }
            switch series {
            case .counter(let counter): text.sample(key.name, labels: labels, value: counter.value)
            case .floatingCounter(let counter): text.sample(key.name, labels: labels, value: counter.value)
            case .gauge(let gauge): text.sample(key.name, labels: labels, value: gauge.value)
            case .histogram(let histogram):
                text.histogram(key.name, labels: labels, histogram.histogram.snapshot(), scale: histogram.scale)
            }
        }
    }

    /// `label` as a Prometheus metric name: `[a-zA-Z_:][a-zA-Z0-9_:]*`.
    static func metricName(_ label: String) -> String {
        sanitized(label, allowing: UInt8(ascii: ":"))
    }

    /// A dimension's name as a Prometheus label name: `[a-zA-Z_][a-zA-Z0-9_]*`.
    static func labelName(_ name: String) -> String {
        sanitized(name, allowing: nil)
    }

    private static func sanitized(_ text: String, allowing extra: UInt8?) -> String {
        var bytes: [UInt8] = []
        for byte in text.utf8 {
            let isLetter = (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") || byte == UInt8(ascii: "_")
            let isDigit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
            bytes.append(isLetter || byte == extra || (isDigit && !bytes.isEmpty) ? byte : UInt8(ascii: "_"))
        }
        return bytes.isEmpty ? "_" : String(decoding: bytes, as: UTF8.self)
    }
}

extension MetricsRegistry.Series {
    var type: PrometheusText.MetricType {
        switch self {
        case .counter, .floatingCounter: .counter
        case .gauge: .gauge
        case .histogram: .histogram
        }
    }

    /// Whether `other` is the same kind of series (whatever its values).
    func isOfKind(_ other: Self) -> Bool {
        switch (self, other) {
        case (.counter, .counter), (.floatingCounter, .floatingCounter), (.gauge, .gauge), (.histogram, .histogram): true
        default: false
        }
    }
}

// MARK: - Handlers

/// A counter of whole numbers.
private final class IntegerSeries: CounterHandler {
    private let total = Atomic<Int64>(0)

    func increment(by amount: Int64) {
        total.add(max(0, amount), ordering: .relaxed)
    }

    func reset() {
        total.store(0, ordering: .relaxed)
    }

    var value: UInt64 { UInt64(max(0, total.load(ordering: .relaxed))) }
}

/// A number that is set, or added to: a floating-point counter, a gauge, a meter, a plain recorder.
private final class FloatingSeries: FloatingPointCounterHandler, MeterHandler, RecorderHandler {
    private let bits = Atomic<UInt64>(Double(0).bitPattern)

    var value: Double { Double(bitPattern: bits.load(ordering: .relaxed)) }

    private func update(_ change: (Double) -> Double) {
        var old = bits.load(ordering: .relaxed)
        while true {
            let (exchanged, original) = bits.compareExchange(
                expected: old, desired: change(Double(bitPattern: old)).bitPattern, ordering: .relaxed)
            if exchanged { return }
            old = original
        }
    }

    func increment(by amount: Double) { update { $0 + amount } }
    func decrement(by amount: Double) { update { $0 - amount } }
    func reset() { set(0.0) }
    func set(_ value: Int64) { set(Double(value)) }
    func set(_ value: Double) { bits.store(value.bitPattern, ordering: .relaxed) }
    func record(_ value: Int64) { set(Double(value)) }
    func record(_ value: Double) { set(value) }
}

/// A histogram of durations (in nanoseconds, written in seconds) or of recorded values.
private final class HistogramSeries: RecorderHandler, TimerHandler {
    let histogram: Histogram
    /// What the values are divided by when written.
    let scale: Double

    init(bounds: [UInt64], scale: Double) {
        histogram = Histogram(bounds: bounds)
        self.scale = scale
    }

    func recordNanoseconds(_ duration: Int64) { histogram.record(UInt64(max(0, duration))) }
    func record(_ value: Int64) { histogram.record(UInt64(max(0, value))) }
    func record(_ value: Double) { histogram.record(value.isFinite && value > 0 ? UInt64(min(value, 1.8e19)) : 0) }
}
