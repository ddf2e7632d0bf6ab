import PrometheusMetrics
import Testing

@Suite struct HistogramTests {
    @Test func countsEachValueInTheFirstBucketThatHoldsIt() {
        let histogram = Histogram(bounds: [1, 4, 16])
        for value: UInt64 in [0, 1, 2, 4, 5, 100] { histogram.record(value) }
        let snapshot = histogram.snapshot()
        #expect(snapshot.cumulativeCounts == [2, 4, 5, 6])
        #expect(snapshot.sum == 112)
        #expect(snapshot.count == 6)
    }

    @Test func recordsDurationsInNanoseconds() {
        let histogram = Histogram(bounds: Histogram.durationBounds)
        histogram.record(Duration.milliseconds(3))
        let snapshot = histogram.snapshot()
        #expect(snapshot.sum == 3_000_000)
        // 3 ms is above 2.5 ms and at most 5 ms: counted from the 5 ms bucket on.
        let fiveMilliseconds = Histogram.durationBounds.firstIndex(of: 5_000_000)!
        #expect(snapshot.cumulativeCounts[fiveMilliseconds - 1] == 0)
        #expect(snapshot.cumulativeCounts[fiveMilliseconds] == 1)
    }

    @Test func countsEveryRecordFromManyThreads() async {
        let histogram = Histogram(bounds: Histogram.sizeBounds)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { for value in 0..<10_000 { histogram.record(UInt64(value % 300)) } }
            }
        }
        #expect(histogram.snapshot().count == 80_000)
    }
}

@Suite struct PrometheusTextTests {
    @Test func writesHelpTypeAndSamplesWithEscapedLabels() {
        var text = PrometheusText()
        text.metric("jobs_total", type: .counter, help: "Jobs done.")
        text.sample("jobs_total", labels: [("queue", #"a"b\c"#)], value: UInt64(3))
        text.sample("jobs_total", value: UInt64(4))
        #expect(
            String(decoding: text.bytes, as: UTF8.self) == """
                # HELP jobs_total Jobs done.
                # TYPE jobs_total counter
                jobs_total{queue="a\\"b\\\\c"} 3
                jobs_total 4

                """)
    }

    @Test func writesAHistogramInSecondsWithCumulativeBuckets() {
        let histogram = Histogram(bounds: [5_000_000, 1_000_000_000])
        histogram.record(Duration.milliseconds(2))
        histogram.record(Duration.milliseconds(20))
        var text = PrometheusText()
        text.histogram("wait_seconds", labels: [("pool", "primary")], histogram.snapshot(), scale: 1e9)
        #expect(
            String(decoding: text.bytes, as: UTF8.self) == """
                wait_seconds_bucket{pool="primary",le="0.005"} 1
                wait_seconds_bucket{pool="primary",le="1"} 2
                wait_seconds_bucket{pool="primary",le="+Inf"} 2
                wait_seconds_sum{pool="primary"} 0.022
                wait_seconds_count{pool="primary"} 2

                """)
    }
}
