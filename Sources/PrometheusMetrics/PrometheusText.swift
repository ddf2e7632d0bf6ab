/// Writes metrics in the Prometheus text exposition format (version
/// 0.0.4): a `# HELP` and a `# TYPE` line per metric, then its samples.
///
/// ```swift
/// var text = PrometheusText()
/// text.metric("http_streamed_bytes_total", type: .counter, help: "Bytes sent in streamed bodies.")
/// text.sample("http_streamed_bytes_total", labels: [("route", "/employees")], value: 20_480)
/// text.bytes   // "# HELP http_streamed_bytes_total ...\n# TYPE ...\nhttp_streamed_bytes_total{route=\"/employees\"} 20480\n"
/// ```
public struct PrometheusText {
    /// The kinds of metric the format knows.
    public enum MetricType: String {
        case counter, gauge, histogram
    }

    /// The exposition so far, UTF-8.
    public private(set) var bytes: [UInt8] = []

    /// The content type of the format, for the response.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// An empty exposition.
    public init() {
        bytes.reserveCapacity(8 << 10)
    }

    /// The `# HELP` and `# TYPE` lines of a metric; its samples follow.
    public mutating func metric(_ name: String, type: MetricType, help: String) {
        append("# HELP \(name) \(help)\n# TYPE \(name) \(type.rawValue)\n")
    }

    /// One sample line: `name{label="value",...} value`.
    public mutating func sample(_ name: String, labels: [(String, String)] = [], value: UInt64) {
        appendSeries(name, labels: labels)
        append(" \(value)\n")
    }

    /// One sample line with a fractional value.
    public mutating func sample(_ name: String, labels: [(String, String)] = [], value: Double) {
        appendSeries(name, labels: labels)
        append(" \(value)\n")
    }

    /// The `_bucket`, `_sum` and `_count` lines of a histogram; the bounds
    /// and the sum are divided by `scale` (1e9 turns nanoseconds into
    /// seconds).
    public mutating func histogram(_ name: String, labels: [(String, String)] = [], _ snapshot: Histogram.Snapshot, scale: Double = 1) {
        for (index, count) in snapshot.cumulativeCounts.enumerated() {
            let bound = index < snapshot.bounds.count ? Self.number(Double(snapshot.bounds[index]) / scale) : "+Inf"
            appendSeries(name + "_bucket", labels: labels + [("le", bound)])
            append(" \(count)\n")
        }
        appendSeries(name + "_sum", labels: labels)
        append(" \(Self.number(Double(snapshot.sum) / scale))\n")
        appendSeries(name + "_count", labels: labels)
        append(" \(snapshot.count)\n")
    }

    // MARK: - Writing

    private mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    private mutating func appendSeries(_ name: String, labels: [(String, String)]) {
        append(name)
        guard !labels.isEmpty else { return }
        bytes.append(UInt8(ascii: "{"))
        for (index, (label, value)) in labels.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            append(label)
            append("=\"")
            appendEscaped(value)
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// A label value with `\`, `"` and line feeds escaped, as the format requires.
    private mutating func appendEscaped(_ value: String) {
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): append("\\\\")
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\n"): append("\\n")
            default: bytes.append(byte)
            }
        }
    }

    /// A number as the format writes it: `0.005`, `1`, `2.5`.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
