import Logging
import OTLPTracing
import RequestTracing
import Testing

/// The tracer without a collector: sampling, propagation, what a span
/// records. Nothing listens on the endpoint; spans are dropped there.
@Suite("OTLP tracer")
struct OTLPTracerTests {
    private func tracer(sampling: Double) throws -> OTLPTracer {
        try OTLPTracer(
            OTLPTracer.Configuration(endpoint: "http://127.0.0.1:9", serviceName: "tests", samplingRatio: sampling),
            logger: Logger(label: "tests"))
    }

    private struct Headers: Extractor, Injector {
        func extract(key: String, from carrier: [String: String]) -> String? { carrier[key] }
        func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) { carrier[key] = value }
    }

    @Test("a trace begun here is recorded at the sampling ratio: all at 1, none at 0, about a tenth at 0.1")
    func ratio() throws {
        let all = try tracer(sampling: 1)
        let none = try tracer(sampling: 0)
        let tenth = try tracer(sampling: 0.1)
        defer { for tracer in [all, none, tenth] { tracer.shutdown() } }
        #expect((0..<100).allSatisfy { _ in all.startSpan("a").isRecording })
        #expect((0..<100).allSatisfy { _ in !none.startSpan("a").isRecording })
        let recorded = (0..<10_000).filter { _ in tenth.startSpan("a").isRecording }.count
        #expect((700...1300).contains(recorded), "\(recorded)")
    }

    @Test("a request's traceparent decides: its trace id and its sampled flag, whatever the ratio")
    func parentBased() throws {
        let tracer = try tracer(sampling: 0)
        defer { tracer.shutdown() }
        var context = InstrumentationContext.topLevel
        tracer.extract(["traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"], into: &context, using: Headers())
        let span = tracer.startSpan("request", context: context, ofKind: .server)
        #expect(span.isRecording)
        #expect(span.spanContext.traceIDText == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(span.spanContext.spanID != 0x00f0_67aa_0ba9_02b7)
        var carrier: [String: String] = [:]
        tracer.inject(span.context, into: &carrier, using: Headers())
        #expect(carrier["traceparent"] == span.spanContext.traceparent)
        let child = tracer.startSpan("statement", context: span.context, ofKind: .client)
        #expect(child.spanContext.traceID == span.spanContext.traceID && child.isRecording)

        var unsampled = InstrumentationContext.topLevel
        tracer.extract(["traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"], into: &unsampled, using: Headers())
        #expect(!tracer.startSpan("request", context: unsampled, ofKind: .server).isRecording)
    }

    @Test("RequestTrace gives the traceparent of a span only in the strict W3C form, fit for SQL text")
    func traceparentForSQL() throws {
        let tracer = try tracer(sampling: 1)
        defer { tracer.shutdown() }
        let request = tracer.startSpan("request", ofKind: .server)
        let trace = RequestTrace(tracer: tracer, context: request.context)
        let statement = trace.startSpan("SELECT", ofKind: .client)
        let traceparent = try #require(trace.traceparent(of: statement))
        #expect(traceparent.wholeMatch(of: /00-[0-9a-f]{32}-[0-9a-f]{16}-01/) != nil)
    }

    @Test("span ids do not repeat")
    func uniqueIDs() throws {
        let tracer = try tracer(sampling: 1)
        defer { tracer.shutdown() }
        let ids = Set((0..<50_000).map { _ in tracer.startSpan("a").spanContext.spanID })
        #expect(ids.count == 50_000 && !ids.contains(0))
    }
}
