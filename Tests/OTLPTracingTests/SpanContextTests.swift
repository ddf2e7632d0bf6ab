import OTLPTracing
import Testing

@Suite("W3C Trace Context")
struct SpanContextTests {
    @Test("a valid traceparent is read and written back as it came")
    func roundTrip() throws {
        let text = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        let context = try #require(SpanContext(traceparent: text))
        #expect(context.isSampled)
        #expect(context.traceparent == text)
        #expect(context.traceIDText == "4bf92f3577b34da6a3ce929d0e0e4736")
    }
}
