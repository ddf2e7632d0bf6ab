@_exported import Tracing

/// Where the spans of one request's work go: the tracer, and the context
/// of the span they are children of (the request's, an attachment
/// block's). The HTTP server makes one for each request whose span is
/// recording; the database layer starts the spans of the statements it
/// runs for the request under it.
///
/// A request whose span is not recording (not sampled) has none: work
/// under a span that is not recorded records nothing, and costs nothing.
///
/// ```swift
/// if let trace = request.trace {
///     let span = trace.startSpan("render", ofKind: .internal)
///     defer { span.end() }
/// }
/// ```
public final class RequestTrace: Sendable {
    /// The tracer that starts the spans.
    public let tracer: any Tracer
    /// The context of the parent span.
    public let context: InstrumentationContext

    /// The trace of the work under the span whose context is `context`.
    ///
    /// ```swift
    /// let trace = RequestTrace(tracer: tracer, context: requestSpan.context)
    /// ```
    public init(tracer: any Tracer, context: InstrumentationContext) {
        self.tracer = tracer
        self.context = context
    }

    /// A span, child of this trace's parent, started now.
    ///
    /// ```swift
    /// let span = trace.startSpan("SELECT", ofKind: .client)
    /// span.end()
    /// ```
    public func startSpan(_ name: String, ofKind kind: SpanKind) -> any Span {
        tracer.startAnySpan(name, context: context, ofKind: kind)
    }

    /// The trace of the work under `span` (a block's statements under the block's span).
    ///
    /// ```swift
    /// let block = trace.startSpan("attachments", ofKind: .internal)
    /// let statements = trace.under(block)
    /// ```
    public func under(_ span: any Span) -> RequestTrace {
        RequestTrace(tracer: tracer, context: span.context)
    }

    /// The `traceparent` of `span`, as the tracer writes it for W3C Trace
    /// Context, when it is one: `00-` + 32 + `-` + 16 + `-` + 2 lower-case
    /// hexadecimal digits, and nothing else. `nil` otherwise (a tracer
    /// that propagates another way): the value is safe to put in SQL text.
    ///
    /// ```swift
    /// trace.traceparent(of: span)   // "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    /// ```
    public func traceparent(of span: any Span) -> String? {
        var carrier: [String: String] = [:]
        tracer.inject(span.context, into: &carrier, using: DictionaryInjector())
        guard let value = carrier["traceparent"], Self.isTraceparent(value) else { return nil }
        return value
    }

    /// Whether `value` is a W3C `traceparent` of version `00` as a tracer writes it.
    static func isTraceparent(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        guard bytes.count == 55 else { return false }
        for (index, byte) in bytes.enumerated() {
            if index == 2 || index == 35 || index == 52 {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                let isHex =
                    (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
                guard isHex else { return false }
            }
        }
        return bytes[0] == UInt8(ascii: "0") && bytes[1] == UInt8(ascii: "0")
    }
}

/// Writes what a tracer injects into a dictionary.
private struct DictionaryInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
        carrier[key.lowercased()] = value
    }
}
