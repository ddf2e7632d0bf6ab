import RequestTracing

/// What the spans' resource says of the process: `service.name` and the SDK.
struct OTLPResource: Sendable {
    let serviceName: String
}

/// An `ExportTraceServiceRequest` of OTLP (opentelemetry-proto,
/// `collector/trace/v1`) in protobuf's binary encoding, written by hand:
/// the few messages and fields a span needs, without a protobuf runtime.
///
/// ```swift
/// let body = OTLPProtobuf.exportRequest(spans, resource: OTLPResource(serviceName: "api"))
/// ```
enum OTLPProtobuf {
    /// The request for `spans`, under one resource and one instrumentation scope.
    static func exportRequest(_ spans: [FinishedSpan], resource: OTLPResource) -> [UInt8] {
        var resourceMessage = Writer()
        for (key, value) in [
            ("service.name", resource.serviceName), ("telemetry.sdk.name", "swift-sql-rest"), ("telemetry.sdk.language", "swift"),
        ] {
            resourceMessage.message(1, keyValue(key, .string(value)))  // Resource.attributes
        }
        var scope = Writer()
        scope.string(1, "swift-sql-rest")  // InstrumentationScope.name
        var scopeSpans = Writer()
        scopeSpans.message(1, scope)  // ScopeSpans.scope
        for span in spans { scopeSpans.message(2, encode(span)) }  // ScopeSpans.spans
        var resourceSpans = Writer()
        resourceSpans.message(1, resourceMessage)  // ResourceSpans.resource
        resourceSpans.message(2, scopeSpans)  // ResourceSpans.scope_spans
        var request = Writer()
        request.message(1, resourceSpans)  // ExportTraceServiceRequest.resource_spans
        return request.bytes
    }

    /// One `Span` message.
    static func encode(_ span: FinishedSpan) -> Writer {
        var message = Writer()
        message.bytes(1, bigEndian: [span.context.traceID.high, span.context.traceID.low])  // trace_id
        message.bytes(2, bigEndian: [span.context.spanID])  // span_id
        if let traceState = span.context.traceState { message.string(3, traceState) }  // trace_state
        if let parent = span.parentSpanID { message.bytes(4, bigEndian: [parent]) }  // parent_span_id
        message.string(5, span.name)  // name
        message.varint(6, kindNumber(span.kind))  // kind
        message.fixed64(7, span.start)  // start_time_unix_nano
        message.fixed64(8, span.end)  // end_time_unix_nano
        for (key, value) in sorted(span.attributes) { message.message(9, keyValue(key, value)) }  // attributes
        for event in span.events {
            var encoded = Writer()
            encoded.fixed64(1, event.nanosecondsSinceEpoch)  // Event.time_unix_nano
            encoded.string(2, event.name)  // Event.name
            for (key, value) in sorted(event.attributes) { encoded.message(3, keyValue(key, value)) }
            message.message(11, encoded)  // events
        }
        if let status = span.status {
            var encoded = Writer()
            // Status.code: STATUS_CODE_OK 1, STATUS_CODE_ERROR 2. No message:
            // a status's text could quote what the span must not hold.
            encoded.varint(3, status.code == .ok ? 1 : 2)
            message.message(15, encoded)  // status
        }
        message.fixed32(16, span.context.isSampled ? 1 : 0)  // flags: the W3C trace flags
        return message
    }

    /// `SpanKind` numbers: INTERNAL 1, SERVER 2, CLIENT 3, PRODUCER 4, CONSUMER 5.
    private static func kindNumber(_ kind: SpanKind) -> UInt64 {
        switch kind {
        case .server: 2
        case .client: 3
        case .producer: 4
        case .consumer: 5
        default: 1
        }
    }

    private static func sorted(_ attributes: SpanAttributes) -> [(String, SpanAttribute)] {
        var pairs: [(String, SpanAttribute)] = []
        // SpanAttributes is no Sequence: its own forEach is the one way through.
        // swift-format-ignore: ReplaceForEachWithForLoop
        attributes.forEach { pairs.append(($0, $1)) }
        return pairs.sorted { $0.0 < $1.0 }
    }

    /// A `KeyValue` message.
    private static func keyValue(_ key: String, _ value: SpanAttribute) -> Writer {
        var message = Writer()
        message.string(1, key)
        message.message(2, anyValue(value))
        return message
    }

    /// An `AnyValue` message: string 1, bool 2, int 3, double 4, array 5.
    private static func anyValue(_ value: SpanAttribute) -> Writer {
        var message = Writer()
        switch value {
        case .string(let text): message.string(1, text)
        case .bool(let flag): message.varint(2, flag ? 1 : 0)
        case .int32(let number): message.varint(3, UInt64(bitPattern: Int64(number)))
        case .int64(let number): message.varint(3, UInt64(bitPattern: number))
        case .double(let number): message.fixed64(4, number.bitPattern)
        case .stringConvertible(let convertible): message.string(1, convertible.description)
        case .stringArray(let texts): message.message(5, array(texts.map { .string($0) }))
        case .int32Array(let numbers): message.message(5, array(numbers.map { .int32($0) }))
        case .int64Array(let numbers): message.message(5, array(numbers.map { .int64($0) }))
        case .doubleArray(let numbers): message.message(5, array(numbers.map { .double($0) }))
        case .boolArray(let flags): message.message(5, array(flags.map { .bool($0) }))
        case .stringConvertibleArray(let values): message.message(5, array(values.map { .string($0.description) }))
        default: message.string(1, "")
        }
        return message
    }

    /// An `ArrayValue` message.
    private static func array(_ values: [SpanAttribute]) -> Writer {
        var message = Writer()
        for value in values { message.message(1, anyValue(value)) }
        return message
    }

    // MARK: - The wire format

    /// Protobuf's binary encoding, field by field.
    struct Writer {
        private(set) var bytes: [UInt8] = []

        mutating func varint(_ field: Int, _ value: UInt64) {
            tag(field, wireType: 0)
            appendVarint(value)
        }

        mutating func fixed64(_ field: Int, _ value: UInt64) {
            tag(field, wireType: 1)
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }

        mutating func fixed32(_ field: Int, _ value: UInt32) {
            tag(field, wireType: 5)
            for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
        }

        mutating func string(_ field: Int, _ text: String) {
            tag(field, wireType: 2)
            appendVarint(UInt64(text.utf8.count))
            bytes.append(contentsOf: text.utf8)
        }

        /// A `bytes` field of the given 64-bit words, each big-endian.
        mutating func bytes(_ field: Int, bigEndian words: [UInt64]) {
            tag(field, wireType: 2)
            appendVarint(UInt64(8 * words.count))
            for word in words {
                for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
            }
        }

        mutating func message(_ field: Int, _ message: Writer) {
            tag(field, wireType: 2)
            appendVarint(UInt64(message.bytes.count))
            bytes.append(contentsOf: message.bytes)
        }

        private mutating func tag(_ field: Int, wireType: UInt64) {
            appendVarint(UInt64(field) << 3 | wireType)
        }

        private mutating func appendVarint(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }
    }
}
