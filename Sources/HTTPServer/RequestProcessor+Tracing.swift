import RequestTracing

/// The spans of one request: its own (a server span), its admission's
/// while the admission decides, and the trace its work continues when its
/// span records.
///
/// A span holds the method, the route's pattern, the status and the
/// request id, never the path, the query, a header's value or a body:
/// the access log line of the same request id has the path.
final class RequestSpans {
    let span: any Span
    var admission: (any Span)?
    /// The trace the handler's work continues; `nil` when the span does not record.
    let trace: RequestTrace?

    init(span: any Span, trace: RequestTrace?) {
        self.span = span
        self.trace = trace
    }
}

/// The tracer of a server's requests, held by reference: a request tests
/// for it by a pointer, without copying the existential.
final class ServerTracer: Sendable {
    let tracer: any Tracer

    init(_ tracer: any Tracer) {
        self.tracer = tracer
    }
}

/// Reads `traceparent` and `tracestate` for a tracer: a request with
/// several `traceparent` fields names no parent (W3C Trace Context);
/// several `tracestate` fields are one list.
struct RequestHeadersExtractor: Extractor {
    func extract(key: String, from headers: HTTPHeaders) -> String? {
        let values = headers.values(for: key)
        if key == "traceparent" { return values.count == 1 ? values[0] : nil }
        return values.isEmpty ? nil : values.joined(separator: ",")
    }
}

extension RequestProcessor {
    /// Starts the request's span, under the parent its `traceparent` names.
    func startSpans(of context: RequestState, tracer: any Tracer) {
        var parent = InstrumentationContext.topLevel
        tracer.extract(context.headers, into: &parent, using: RequestHeadersExtractor())
        let span = tracer.startAnySpan(context.method.rawValue, context: parent, ofKind: .server)
        guard span.isRecording else {
            context.spans = RequestSpans(span: span, trace: nil)
            return
        }
        span.attributes["http.request.method"] = context.method.rawValue
        span.attributes["sqlrest.request_id"] = context.requestID
        context.spans = RequestSpans(span: span, trace: RequestTrace(tracer: tracer, context: span.context))
    }

    /// The admission starts deciding.
    func admissionBegins(_ context: RequestState) {
        if configuration.serverTiming { context.admissionStarted = .now }
        guard let spans = context.spans, let trace = spans.trace else { return }
        spans.admission = trace.startSpan("admission", ofKind: .internal)
    }

    /// The admission decided: admitted, or refused.
    func admissionEnds(_ context: RequestState, admitted: Bool) {
        if let started = context.admissionStarted {
            context.admissionDuration = started.duration(to: .now)
            context.admissionStarted = nil
        }
        guard let spans = context.spans, let admission = spans.admission else { return }
        spans.admission = nil
        admission.attributes["sqlrest.admission.admitted"] = admitted
        admission.end()
    }

    /// The request is over: its span ends with the status, named by the
    /// route that answered it when the response's observer knows it.
    func endSpans(of context: RequestState) {
        guard let spans = context.spans else { return }
        context.spans = nil
        spans.admission?.end()
        let span = spans.span
        guard span.isRecording else { return span.end() }
        if let route = context.observer?.routePattern {
            span.operationName = "\(context.method.rawValue) \(route)"
            span.attributes["http.route"] = route
        }
        span.attributes["http.response.status_code"] = context.status
        if context.status >= 500 || context.status == 0 { span.setStatus(SpanStatus(code: .error)) }
        span.end()
    }

    /// The `Server-Timing` value of an answer about to be sent: the
    /// admission's time and the handler's, when they ran, then the total so far.
    static func serverTiming(of context: RequestState) -> String {
        var value = ""
        if let admission = context.admissionDuration {
            value += "admission;dur="
            RequestState.appendMilliseconds(admission, to: &value)
            value += ", "
        }
        if let handlerStarted = context.handlerStarted {
            value += "handler;dur="
            RequestState.appendMilliseconds(handlerStarted.duration(to: .now), to: &value)
            value += ", "
        }
        value += "total;dur="
        RequestState.appendMilliseconds(context.started.duration(to: .now), to: &value)
        return value
    }
}

extension RequestState {
    /// Appends `elapsed`, in milliseconds with one decimal (`12.3`).
    static func appendMilliseconds(_ elapsed: Duration, to text: inout String) {
        var bytes: [UInt8] = []
        appendMilliseconds(elapsed, to: &bytes)
        text += String(decoding: bytes, as: UTF8.self)
    }
}
