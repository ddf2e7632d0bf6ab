import Synchronization

/// A Prometheus histogram with fixed buckets, kept in atomic counters:
/// recording a value is a few relaxed atomic additions, with no lock and
/// no allocation, so it can sit on every request's path.
///
/// Values are whole numbers in the histogram's own unit (nanoseconds for
/// durations, a count for sizes); ``PrometheusText`` scales them when it
/// writes them (seconds).
///
/// ```swift
/// let durations = Histogram(bounds: Histogram.durationBounds)
/// durations.record(1_200_000)            // 1.2 ms, in nanoseconds
/// durations.snapshot().count             // 1
/// ```
public final class Histogram: Sendable {
    /// Upper bounds (inclusive) of the buckets, ascending; one more bucket
    /// (`+Inf`) counts the values above the last.
    public let bounds: [UInt64]
    /// One counter per bucket, not cumulative (the snapshot adds them up).
    private let buckets: Counters
    private let sum = Atomic<UInt64>(0)

    /// A histogram with the buckets `bounds` (ascending).
    ///
    /// ```swift
    /// let sizes = Histogram(bounds: [1, 2, 4, 8, 16, 32, 64])
    /// ```
    public init(bounds: [UInt64]) {
        // Bounds are written in code, not read from outside.
        precondition(zip(bounds, bounds.dropFirst()).allSatisfy { $0 < $1 }, "histogram bounds must ascend")
        self.bounds = bounds
        buckets = Counters(count: bounds.count + 1)
    }

    /// Counts `value` in its bucket and adds it to the sum.
    ///
    /// ```swift
    /// histogram.record(UInt64(elapsed.nanoseconds))
    /// ```
    public func record(_ value: UInt64) {
        // A linear scan: the bounds are few, and the small values (fast
        // requests, small batches) that dominate stop it early.
        var index = 0
        while index < bounds.count, value > bounds[index] { index += 1 }
        buckets.add(at: index)
        sum.add(value, ordering: .relaxed)
    }

    /// Counts a duration, in nanoseconds.
    ///
    /// ```swift
    /// histogram.record(started.duration(to: .now))
    /// ```
    public func record(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return record(UInt64(0)) }
        record(UInt64(seconds) &* 1_000_000_000 &+ UInt64(attoseconds / 1_000_000_000))
    }

    /// The counts so far: cumulative per bucket (as Prometheus writes
    /// them, the last being the total), and the sum.
    ///
    /// The counters are read one by one while others may add to them, so
    /// a snapshot taken under load can be off by the requests of that
    /// instant, as any scrape is.
    public func snapshot() -> Snapshot {
        var cumulative: [UInt64] = []
        cumulative.reserveCapacity(bounds.count + 1)
        var total: UInt64 = 0
        for index in 0...bounds.count {
            total &+= buckets[index]
            cumulative.append(total)
        }
        return Snapshot(bounds: bounds, cumulativeCounts: cumulative, sum: sum.load(ordering: .relaxed))
    }

    /// The counts of a histogram at one moment.
    public struct Snapshot: Sendable {
        /// The buckets' upper bounds; the last count is for `+Inf`.
        public let bounds: [UInt64]
        /// For each bound, then `+Inf`: the values at or below it.
        public let cumulativeCounts: [UInt64]
        /// The sum of every value recorded.
        public let sum: UInt64

        /// The number of values recorded.
        public var count: UInt64 { cumulativeCounts.last ?? 0 }
    }

    // MARK: - Common bounds

    /// Bounds for request and wait durations, in nanoseconds: 0.5 ms to 10 s.
    public static let durationBounds: [UInt64] = [
        500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000, 25_000_000, 50_000_000,
        100_000_000, 250_000_000, 500_000_000, 1_000_000_000, 2_500_000_000, 5_000_000_000, 10_000_000_000,
    ]

    /// Bounds for counts of things sent together (a pipeline's batch): 1 to 256.
    public static let sizeBounds: [UInt64] = [1, 2, 4, 8, 16, 32, 64, 128, 256]
}
