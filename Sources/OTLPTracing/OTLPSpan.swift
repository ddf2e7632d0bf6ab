import Locking
import RequestTracing

/// A span of ``OTLPTracer``: recorded, and exported once ended, when its
/// trace is sampled; otherwise it keeps nothing but its context, which
/// its children and the propagation read.
///
/// An error recorded on it keeps the error's type only, never its
/// message (a database's messages quote values).
///
/// ```swift
/// let span = tracer.startSpan("SELECT", ofKind: .client)
/// span.attributes["db.system"] = "postgresql"
/// span.end()
/// ```
public final class OTLPSpan: Span {
    /// The context it was started in, without its own ids.
    private let parentContext: InstrumentationContext
    /// The span's ids, as its children and `traceparent` name them.
    public let spanContext: SpanContext
    /// Where the span goes once ended; `nil` when it is not recorded.
    private let exporter: SpanExporter?
    /// What it collects; `nil` when it is not recorded.
    private let state: Locked<State>?
    /// The name it was started with.
    private let name: String

    /// What a recording span collects until it ends.
    struct State {
        var name: String
        var attributes = SpanAttributes()
        var status: SpanStatus?
        var events: [SpanEvent] = []
        var isEnded = false
    }

    init(
        _ name: String, kind: SpanKind, parentContext: InstrumentationContext, spanContext: SpanContext, parentSpanID: UInt64?,
        start: UInt64, exporter: SpanExporter?
    ) {
        self.parentContext = parentContext
        self.spanContext = spanContext
        self.kind = kind
        self.parentSpanID = parentSpanID
        self.start = start
        self.exporter = exporter
        self.name = name
        self.state = exporter == nil ? nil : Locked(State(name: name))
    }

    let kind: SpanKind
    let parentSpanID: UInt64?
    /// Nanoseconds since the epoch.
    let start: UInt64

    public var isRecording: Bool { exporter != nil }

    /// The context it was started in with its own ids, made when asked
    /// for: a span nobody asks (one not recorded, most often) makes none.
    public var context: InstrumentationContext {
        var context = parentContext
        context[SpanContextKey.self] = spanContext
        return context
    }

    public var operationName: String {
        get { state?.withLock { $0.name } ?? name }
        set { state?.withLock { $0.name = newValue } }
    }

    public var attributes: SpanAttributes {
        get { state?.withLock { $0.attributes } ?? [:] }
        set { state?.withLock { $0.attributes = newValue } }
    }

    public func setStatus(_ status: SpanStatus) {
        state?.withLock { $0.status = status }
    }

    public func addEvent(_ event: SpanEvent) {
        state?.withLock { if $0.events.count < Self.maximumEvents { $0.events.append(event) } }
    }

    /// The most events a span keeps.
    static let maximumEvents = 32

    public func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant)
    {
        guard isRecording else { return }
        var recorded = attributes
        recorded["exception.type"] = String(describing: type(of: error))
        addEvent(SpanEvent(name: "exception", at: instant(), attributes: recorded))
    }

    public func addLink(_ link: SpanLink) {}

    public func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        guard let exporter, let state else { return }
        let end = instant().nanosecondsSinceEpoch
        let finished: State? = state.withLock { state in
            guard !state.isEnded else { return nil }
            state.isEnded = true
            return state
        }
        guard let finished else { return }
        exporter.add(
            FinishedSpan(
                context: spanContext, parentSpanID: parentSpanID, kind: kind, start: start, end: max(start, end),
                name: finished.name, attributes: finished.attributes, status: finished.status, events: finished.events))
    }
}

/// A span ended and waiting for export.
struct FinishedSpan: Sendable {
    let context: SpanContext
    let parentSpanID: UInt64?
    let kind: SpanKind
    let start: UInt64
    let end: UInt64
    let name: String
    let attributes: SpanAttributes
    let status: SpanStatus?
    let events: [SpanEvent]
}
