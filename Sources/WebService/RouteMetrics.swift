import HTTPServer
import PrometheusMetrics
import Locking

/// Request counts and durations by route, for `/metrics`: a router given
/// one (``WebServiceRouter/init(services:runners:logger:openAPI:metrics:limits:serverServices:)``)
/// hands each response the record of the route that answered it, and the
/// server tells that record when the request is over.
///
/// Every route gets its record (a ``Slot``) when the router is built, so
/// a request costs a few relaxed atomic additions on memory of its own
/// route: no lookup by name, no lock. Records are kept by route pattern
/// and method, so a router built again (SIGHUP) goes on counting in them.
///
/// ```swift
/// let metrics = RouteMetrics()
/// let router = try WebServiceRouter(services: [ItemsService()], metrics: metrics)
/// var text = PrometheusText()
/// metrics.write(to: &text)
/// ```
///
/// The series: `http_requests_total{route,method,status}`,
/// `http_request_duration_seconds{route,method}` (a histogram) and
/// `http_streamed_bytes_total{route,method}`. `route` is the pattern as
/// OpenAPI writes it (`/employees/{employeeNumber}`); requests that match
/// no route count under `route="unmatched"`, and the server's own pages
/// under their paths (`/`, `/openapi.json`, `/jsonrpc`, `/employees?api`).
/// HEAD requests count with their GET route.
public final class RouteMetrics: Sendable {
    private let slots = Locked<[SlotKey: Slot]>([:])

    private struct SlotKey: Hashable {
        let route: String
        let method: String
    }

    /// A registry with no route yet.
    public init() {}

    /// The record of `route` and `method`, made on first request for it.
    ///
    /// ```swift
    /// let slot = metrics.slot(route: "/items/{id}", method: "GET")
    /// ```
    public func slot(route: String, method: String) -> Slot {
        slots.withLock { slots in
            let key = SlotKey(route: route, method: method)
            if let slot = slots[key] { return slot }
            let slot = Slot(route: route, method: method)
            slots[key] = slot
            return slot
        }
    }

    /// Writes every route's series, sorted by route and method.
    public func write(to text: inout PrometheusText) {
        let all = slots.withLock { Array($0.values) }.sorted { ($0.route, $0.method) < ($1.route, $1.method) }
        text.metric("http_requests_total", type: .counter, help: "HTTP requests answered, by route pattern, method and status.")
        for slot in all {
            for (status, count) in slot.statusCounts where count > 0 {
                text.sample(
                    "http_requests_total", labels: [("route", slot.route), ("method", slot.method), ("status", String(status))],
                    value: count)
            }
        }
        text.metric(
            "http_request_duration_seconds", type: .histogram,
            help: "Time from the request line to the end of the response, by route pattern and method.")
        for slot in all where slot.durations.snapshot().count > 0 {
            text.histogram(
                "http_request_duration_seconds", labels: [("route", slot.route), ("method", slot.method)],
                slot.durations.snapshot(), scale: 1e9)
        }
        text.metric(
            "http_streamed_bytes_total", type: .counter,
            help: "Body bytes sent in streamed (chunked) responses, by route pattern and method.")
        for slot in all where slot.streamedBytes.value > 0 {
            text.sample(
                "http_streamed_bytes_total", labels: [("route", slot.route), ("method", slot.method)], value: slot.streamedBytes.value)
        }
    }

    // MARK: - One route's record

    /// The counters of one route and method.
    public final class Slot: RequestObserver {
        /// The route's pattern (`/employees/{employeeNumber}`).
        public let route: String
        /// The route's method (`GET`).
        public let method: String
        let durations = Histogram(bounds: Histogram.durationBounds)
        let streamedBytes = Counter()
        /// A counter per status in `Slot.statuses`.
        private let counts = Counters(count: Slot.statuses.count)
        /// Statuses outside `Slot.statuses`, rare: counted under a lock.
        private let otherCounts = Locked<[Int: UInt64]>([:])

        init(route: String, method: String) {
            self.route = route
            self.method = method
        }

        public func requestCompleted(_ request: CompletedRequest) {
            let index = request.status >= 0 && request.status < Slot.statusIndex.count ? Int(Slot.statusIndex[request.status]) : 0
            if index > 0 {
                counts.add(at: index - 1)
            } else {
                otherCounts.withLock { $0[request.status, default: 0] += 1 }
            }
            durations.record(request.duration)
            if request.isStreamed { streamedBytes.add(UInt64(request.bytesSent)) }
        }

        /// The count of each status answered, by status.
        var statusCounts: [(status: Int, count: UInt64)] {
            var result = Slot.statuses.indices.map { (status: Slot.statuses[$0], count: counts[$0]) }
            result += otherCounts.withLock { $0.map { (status: $0.key, count: $0.value) } }
            return result.sorted { $0.status < $1.status }
        }

        /// The statuses a route commonly answers, each with a counter of its own.
        static let statuses = [
            0, 200, 201, 202, 204, 206, 301, 302, 303, 304, 307, 308,
            400, 401, 403, 404, 405, 406, 408, 409, 410, 412, 413, 414, 415, 416, 422, 428, 429, 431,
            500, 501, 502, 503, 504, 505,
        ]

        /// For each status below 600, its index in `statuses` plus one; 0 for the others.
        static let statusIndex: [UInt8] = {
            var table = [UInt8](repeating: 0, count: 600)
            for (index, status) in statuses.enumerated() { table[status] = UInt8(index + 1) }
            return table
        }()
    }
}
