import OTLPTracing
import Testing

/// W3C Trace Context as the server reads it from a request: what is a
/// `traceparent`, and what is not (which then starts a trace of its own).
@Suite("W3C Trace Context")
struct SpanContextTests {
    @Test("a valid traceparent is read and written back as it came")
    func roundTrip() throws {
        let text = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        let context = try #require(SpanContext(traceparent: text))
        #expect(context.isSampled)
        #expect(context.traceparent == text)
        #expect(context.traceIDText == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(context.spanID == 0x00f0_67aa_0ba9_02b7)
        let unsampled = try #require(SpanContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"))
        #expect(!unsampled.isSampled)
    }

    @Test("a later version's first four fields are read; the rest is not kept")
    func laterVersion() throws {
        let context = try #require(SpanContext(traceparent: "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes-next"))
        #expect(context.traceparent == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
    }

    @Test(
        "anything else is no traceparent: SQL in it, upper case, zero ids, version ff, a wrong length or separator",
        arguments: [
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01*/; DROP TABLE employees; --",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
            "", "00", String(repeating: "0", count: 10_000),
        ])
    func invalid(_ text: String) {
        #expect(SpanContext(traceparent: text) == nil)
    }

    @Test("a tracestate is passed on when it is a list of key=value members, dropped otherwise")
    func traceState() throws {
        let valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        #expect(SpanContext(traceparent: valid, tracestate: "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")?.traceState != nil)
        for bad in ["no-equals", String(repeating: "a=b,", count: 33), "a=" + String(repeating: "x", count: 600), "a=b\u{7}"] {
            let context = try #require(SpanContext(traceparent: valid, tracestate: bad))
            #expect(context.traceState == nil, "\(bad.prefix(40))")
        }
    }
}

@Suite("OTLP endpoints")
struct OTLPEndpointTests {
    @Test("http://host:port gets /v1/traces; a path is used as it is; the port defaults to 4318")
    func valid() throws {
        let base = try OTLPEndpoint("http://127.0.0.1:4318")
        #expect(base.host == "127.0.0.1" && base.port == 4318 && base.path == "/v1/traces")
        #expect(try OTLPEndpoint("http://collector/").path == "/v1/traces")
        #expect(try OTLPEndpoint("http://collector").port == 4318)
        #expect(try OTLPEndpoint("http://collector:55681/custom/traces").path == "/custom/traces")
        let six = try OTLPEndpoint("http://[::1]:4318")
        #expect(six.host == "::1" && six.description == "http://[::1]:4318/v1/traces")
    }

    @Test(
        "https, credentials, a bad port, a query or spaces are refused with the option named",
        arguments: [
            "https://collector:4318", "ftp://collector", "collector:4318", "http://user:secret@collector:4318",
            "http://collector:0", "http://collector:99999", "http://collector:port", "http://collector/v1/traces?x=1",
            "http://", "http://collector/a b", "http://[::1",
        ])
    func invalid(_ url: String) {
        #expect {
            try OTLPEndpoint(url)
        } throws: { error in
            "\(error)".contains("--otlp-endpoint")
        }
    }
}
