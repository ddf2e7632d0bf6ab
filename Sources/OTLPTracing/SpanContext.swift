import RequestTracing

/// The identity of a span as W3C Trace Context carries it: the trace's
/// id, the span's id, whether the trace is sampled, and the vendors'
/// `tracestate`.
///
/// ```swift
/// let parent = SpanContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
/// parent?.isSampled      // true
/// parent?.traceparent    // the same text
/// ```
public struct SpanContext: Sendable, Hashable {
    /// The trace's 16 bytes, as two big-endian halves.
    public var traceID: TraceID
    /// The span's 8 bytes, big-endian.
    public var spanID: UInt64
    /// Whether the trace is recorded (the `sampled` flag).
    public var isSampled: Bool
    /// The `tracestate` list received, passed on unchanged; `nil` without one.
    public var traceState: String?

    /// A trace id: 16 bytes, never all zero.
    public struct TraceID: Sendable, Hashable {
        /// The first 8 bytes, big-endian.
        public var high: UInt64
        /// The last 8 bytes, big-endian.
        public var low: UInt64
    }

    /// A context of these parts.
    ///
    /// ```swift
    /// SpanContext(traceID: .init(high: 1, low: 2), spanID: 3, isSampled: true)
    /// ```
    public init(traceID: TraceID, spanID: UInt64, isSampled: Bool, traceState: String? = nil) {
        self.traceID = traceID
        self.spanID = spanID
        self.isSampled = isSampled
        self.traceState = traceState
    }

    // MARK: - W3C Trace Context

    /// The parent a `traceparent` header names, `nil` when the header is
    /// not one (W3C Trace Context: version `00`, or a later version's
    /// first four fields; neither id all zeros; lower-case hexadecimal).
    /// Then the request starts a trace of its own.
    ///
    /// ```swift
    /// SpanContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
    /// ```
    public init?(traceparent: String, tracestate: String? = nil) {
        let bytes = Array(traceparent.utf8)
        guard bytes.count >= 55 else { return nil }
        guard let version = Self.hex(bytes[0..<2]), version != 0xff else { return nil }
        // Version 00 is exactly 55 bytes; a later one may add fields after a dash.
        guard version == 0 ? bytes.count == 55 : (bytes.count == 55 || bytes[55] == UInt8(ascii: "-")) else { return nil }
        guard bytes[2] == UInt8(ascii: "-"), bytes[35] == UInt8(ascii: "-"), bytes[52] == UInt8(ascii: "-") else { return nil }
        guard let high = Self.hex(bytes[3..<19]), let low = Self.hex(bytes[19..<35]), high != 0 || low != 0,
            let spanID = Self.hex(bytes[36..<52]), spanID != 0, let flags = Self.hex(bytes[53..<55])
        else { return nil }
        self.traceID = TraceID(high: high, low: low)
        self.spanID = spanID
        self.isSampled = flags & 1 == 1
        self.traceState = tracestate.flatMap(Self.validTraceState)
    }

    /// The `traceparent` header of this context (version `00`).
    public var traceparent: String {
        var text = "00-"
        text.reserveCapacity(55)
        Self.appendHex(traceID.high, to: &text)
        Self.appendHex(traceID.low, to: &text)
        text += "-"
        Self.appendHex(spanID, to: &text)
        text += isSampled ? "-01" : "-00"
        return text
    }

    /// The trace id in lower-case hexadecimal, 32 digits (as the `traceparent` writes it).
    public var traceIDText: String {
        var text = ""
        Self.appendHex(traceID.high, to: &text)
        Self.appendHex(traceID.low, to: &text)
        return text
    }

    /// `value` as a `tracestate` to pass on: at most 512 bytes of visible
    /// ASCII, at most 32 comma-separated members each with a `=`; else
    /// `nil`, and the state is dropped (W3C Trace Context allows that).
    static func validTraceState(_ value: String) -> String? {
        let bytes = value.utf8
        guard !bytes.isEmpty, bytes.count <= 512, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) else { return nil }
        let members = value.split(separator: ",", omittingEmptySubsequences: true)
        guard !members.isEmpty, members.count <= 32, members.allSatisfy({ $0.contains("=") }) else { return nil }
        return value
    }

    /// The value of lower-case hexadecimal digits (at most 16), `nil` for anything else.
    private static func hex(_ digits: ArraySlice<UInt8>) -> UInt64? {
        var value: UInt64 = 0
        for digit in digits {
            let nibble: UInt8
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = digit - UInt8(ascii: "a") + 10
            default: return nil
            }
            value = value << 4 | UInt64(nibble)
        }
        return value
    }

    private static func appendHex(_ value: UInt64, to text: inout String) {
        let digits = Array("0123456789abcdef".utf8)
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<16 { bytes[index] = digits[Int(value >> (60 - 4 * UInt64(index)) & 0xf)] }
        text += String(decoding: bytes, as: UTF8.self)
    }
}

/// Where an `InstrumentationContext` keeps the span it names (``OTLPTracer``'s).
enum SpanContextKey: InstrumentationContextKey {
    typealias Value = SpanContext
    static var nameOverride: String? { "otlp-span-context" }
}
