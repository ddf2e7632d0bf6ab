import Logging
import RequestTracing
import Synchronization

/// A tracer of swift-distributed-tracing that propagates W3C Trace
/// Context (`traceparent`, `tracestate`) and exports the spans it records
/// by OTLP/HTTP, in protobuf, to a collector.
///
/// Sampling is decided once per trace, where it starts: a request that
/// names a parent follows the parent's `sampled` flag; one that starts a
/// trace is recorded with the probability ``Configuration/samplingRatio``,
/// decided from the trace id (so the same trace is decided alike
/// everywhere). A span that is not recorded costs an object and its
/// context, and is never exported.
///
/// ```swift
/// let tracer = try OTLPTracer(.init(endpoint: "http://127.0.0.1:4318", serviceName: "employees-server"), logger: logger)
/// InstrumentationSystem.bootstrap(tracer)
/// tracer.startSpan("work").end()
/// tracer.shutdown()   // exports what is left
/// ```
public final class OTLPTracer: Tracer {
    public typealias Span = OTLPSpan

    /// Where and how spans go.
    ///
    /// ```swift
    /// var configuration = OTLPTracer.Configuration(endpoint: "http://collector:4318", serviceName: "api")
    /// configuration.samplingRatio = 0.01
    /// ```
    public struct Configuration: Sendable {
        /// The collector's OTLP/HTTP endpoint: `http://host:port`, to which
        /// `/v1/traces` is added, or a URL with its own path, used as it is.
        public var endpoint: String
        /// The `service.name` of the spans' resource.
        public var serviceName: String
        /// The share of the traces started here that are recorded: 0 to 1.
        public var samplingRatio: Double
        /// Finished spans held for export at most; more are dropped (and counted).
        public var maximumQueuedSpans: Int
        /// Spans sent in one export at most.
        public var maximumBatchSize: Int
        /// How long a finished span waits, at most, before its batch goes.
        public var exportDelay: Duration

        /// A configuration; each parameter sets the property of its name.
        public init(
            endpoint: String, serviceName: String, samplingRatio: Double = 1, maximumQueuedSpans: Int = 4096,
            maximumBatchSize: Int = 512, exportDelay: Duration = .seconds(1)
        ) {
            self.endpoint = endpoint
            self.serviceName = serviceName
            self.samplingRatio = min(1, max(0, samplingRatio))
            self.maximumQueuedSpans = max(1, maximumQueuedSpans)
            self.maximumBatchSize = max(1, maximumBatchSize)
            self.exportDelay = exportDelay
        }
    }

    let exporter: SpanExporter
    /// Where the spans go.
    public let endpoint: OTLPEndpoint
    /// Traces whose id's last 56 bits fall below this are recorded.
    private let samplingThreshold: UInt64
    private let identifiers = IdentifierSource()

    /// A tracer exporting to `configuration.endpoint`; throws an
    /// ``OTLPEndpoint/Problem`` for an endpoint it cannot use. Its export
    /// thread starts with it; `logger` tells of failed exports.
    public init(_ configuration: Configuration, logger: Logger) throws {
        endpoint = try OTLPEndpoint(configuration.endpoint)
        exporter = try SpanExporter(
            endpoint: endpoint, resource: OTLPResource(serviceName: configuration.serviceName), configuration: configuration,
            logger: logger)
        samplingThreshold = UInt64(configuration.samplingRatio * Double(1 << 56))
    }

    // MARK: - Propagation

    public func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier, into context: inout InstrumentationContext, using extractor: Extract
    ) where Extract.Carrier == Carrier {
        guard let traceparent = extractor.extract(key: "traceparent", from: carrier),
            let parent = SpanContext(traceparent: traceparent, tracestate: extractor.extract(key: "tracestate", from: carrier))
        else { return }
        context[SpanContextKey.self] = parent
    }

    public func inject<Carrier, Inject: Injector>(
        _ context: InstrumentationContext, into carrier: inout Carrier, using injector: Inject
    ) where Inject.Carrier == Carrier {
        guard let spanContext = context[SpanContextKey.self] else { return }
        injector.inject(spanContext.traceparent, forKey: "traceparent", into: &carrier)
        if let traceState = spanContext.traceState { injector.inject(traceState, forKey: "tracestate", into: &carrier) }
    }

    // MARK: - Spans

    public func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> InstrumentationContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> OTLPSpan {
        let context = context()
        let parent = context[SpanContextKey.self]
        let traceID = parent?.traceID ?? identifiers.traceID()
        let own = SpanContext(
            traceID: traceID, spanID: identifiers.spanID(), isSampled: parent?.isSampled ?? isSampled(traceID),
            traceState: parent?.traceState)
        return OTLPSpan(
            operationName, kind: kind, parentContext: context, spanContext: own, parentSpanID: parent?.spanID,
            start: instant().nanosecondsSinceEpoch, exporter: own.isSampled ? exporter : nil)
    }

    /// Whether a trace started here with `traceID` is recorded.
    func isSampled(_ traceID: SpanContext.TraceID) -> Bool {
        traceID.low & 0x00ff_ffff_ffff_ffff < samplingThreshold
    }

    public func forceFlush() {
        exporter.flush()
    }

    /// Exports what is left and stops the export thread; spans ended
    /// afterwards are dropped.
    public func shutdown() {
        exporter.shutdown()
    }

    /// Spans dropped because the queue was full or an export failed.
    public var droppedSpans: Int { exporter.droppedSpans }
}

/// Span and trace ids: random, without a system call each. A counter
/// drawn at random once per process, mixed by SplitMix64 (a bijection of
/// 64 bits, so ids do not repeat within 2⁶⁴ draws).
final class IdentifierSource: Sendable {
    private let counter: Atomic<UInt64>

    init() {
        var generator = SystemRandomNumberGenerator()
        counter = Atomic(generator.next())
    }

    private func next() -> UInt64 {
        var value = counter.wrappingAdd(0x9E37_79B9_7F4A_7C15, ordering: .relaxed).newValue
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    func spanID() -> UInt64 {
        while true {
            let id = next()
            if id != 0 { return id }
        }
    }

    func traceID() -> SpanContext.TraceID {
        SpanContext.TraceID(high: next(), low: spanID())
    }
}
