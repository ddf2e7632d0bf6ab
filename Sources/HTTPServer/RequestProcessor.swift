#if canImport(Glibc)
import Glibc
#endif
import JSONStreaming
import Logging
import Synchronization

/// The server's side of each request: reads what libmicrohttpd delivers
/// into a `RequestState`, calls the handler once the body is complete,
/// queues its response and writes the access-log line at the end.
///
/// One processor serves one running server; its methods run on the event
/// loops, several at once, and touch only the request's own context besides
/// the atomics below.
final class RequestProcessor: Sendable {
    let configuration: HTTPServer.Configuration
    /// libmicrohttpd's behaviour as this server changes it.
    let libraryPatches: LibraryPatches
    let logger: Logger
    private let handler: HTTPServer.Handler

    /// Requests begun (request line read) and not yet completed.
    let requestsInFlight = Atomic<Int>(0)
    /// Client connections open now (the accept policy's count).
    let openConnections = Atomic<Int>(0)
    /// Set when a graceful stop begins: responses then carry `Connection: close`.
    let isDraining = Atomic<Bool>(false)
    /// Closes connections whose header fields, body or streamed response take too long.
    let deadlines: ConnectionDeadline
    /// Bytes of request bodies held now, every request's together.
    let bodyBytesInFlight = Atomic<Int>(0)
    /// The threads for work that may block.
    let workers: WorkerPool
    /// The names the server answers for.
    let allowedHosts: AllowedHosts
    /// The connections suspended while other threads work for them.
    let suspensions = SuspensionRegistry()
    /// The tracer of the requests' spans, if any (``HTTPServer/Configuration/tracer``).
    let tracer: ServerTracer?

    init(configuration: HTTPServer.Configuration, logger: Logger, handler: @escaping HTTPServer.Handler) {
        self.configuration = configuration
        self.libraryPatches = LibraryPatches.resolve(configuration.libraryPatches)
        self.logger = logger
        self.handler = handler
        self.deadlines = ConnectionDeadline(
            header: Double(configuration.connectionTimeout), body: configuration.bodyTimeout,
            response: configuration.responseTimeout, admission: configuration.admissionTimeout)
        workers = WorkerPool(limit: configuration.maximumConnections)
        allowedHosts = AllowedHosts(configured: configuration.allowedHosts, listeningOn: configuration.host)
        tracer = configuration.tracer.map(ServerTracer.init)
    }

    // MARK: - Access-handler steps

    /// The header fields are in. Returns `false` to have the connection closed.
    ///
    /// In this order, each before the next runs: the header's size, the
    /// body's framing (``RequestFraming``), the host (``AllowedHosts``),
    /// the body's announced size, a write from another site, a CORS
    /// preflight (answered without credentials, which browsers never send
    /// with one), the admission.
    func begin(_ context: RequestState, on connection: ClientConnection, method: String, isHTTP10: Bool) -> Bool {
        context.hasStarted = true
        context.method = HTTPMethod(rawValue: method)
        context.headers = connection.headers
        context.remoteAddress = connection.remoteAddress
        context.eventLoop = Self.loopDaemon(of: connection)?.loop
        context.requestID = RequestID.accepting(context.headers["X-Request-Id"]) ?? RequestID.generate()
        if let tracer { startSpans(of: context, tracer: tracer.tracer) }
        if let problem = headerProblem(context) ?? RequestFraming.problem(in: context.headers, isHTTP10: isHTTP10) {
            return respond(with: problem.response, to: context, on: connection, closeConnection: true)
        }
        if let problem = allowedHosts.problem(headers: context.headers, rawTarget: context.rawTarget, isHTTP10: isHTTP10) {
            return respond(with: problem.response, to: context, on: connection, closeConnection: Self.expectsBody(context))
        }
        do {
            context.target = try RequestTarget(parsing: context.rawTarget)
        } catch {
            context.rejection = error
        }

        // No body may be larger than all bodies together may be: one that is could never be held, and is
        // answered 413 here rather than the 503 of a full server, which its retries would meet forever.
        context.maximumBodySize = min(configuration.maximumBodySize, configuration.maximumBodyBytesInFlight)
        if Self.expectsBody(context), !configuration.maximumBodySizeByPath.isEmpty, let target = context.target {
            // The path as the router reads it: decoded segments, one slash between them.
            let path = "/" + target.pathSegments.joined(separator: "/")
            if let limit = configuration.maximumBodySizeByPath[path], limit < context.maximumBodySize {
                context.maximumBodySize = limit
                context.bodyLimitPath = path
            }
        }
        if let length = context.headers["Content-Length"].flatMap({ Int($0.trimmingCharacters(in: " \t")) }),
            length > context.maximumBodySize
        {
            return respond(with: tooLarge(context).response, to: context, on: connection, closeConnection: true)
        }
        if configuration.refusesCrossSiteWrites,
            CrossOriginPolicy.isCrossSiteWrite(
                method: context.method, headers: context.headers, policy: configuration.crossOrigin, hosts: allowedHosts)
        {
            let problem = HTTPError(
                .forbidden,
                detail:
                    "A \(context.method) from a web page of another site is refused: its Origin is not this server's, nor one it allows.")
            return respond(with: problem.response, to: context, on: connection, closeConnection: Self.expectsBody(context))
        }
        if context.rejection == nil,
            let preflight = configuration.crossOrigin?.preflightResponse(method: context.method, headers: context.headers)
        {
            return respond(with: preflight, to: context, on: connection, closeConnection: Self.expectsBody(context))
        }
        if context.rejection == nil, let admission = configuration.admission {
            if configuration.serverTiming || context.spans != nil { admissionBegins(context) }
            return conclude(admission.admit(context.makeRequest()), context: context, on: connection)
        }
        return proceed(context, on: connection)
    }

    /// Acts on the admission's decision: the body is read, the request answered at once, or the decision waited for.
    private func conclude(_ admission: Admission, context: RequestState, on connection: ClientConnection) -> Bool {
        switch admission {
        case .admitted(let role):
            admissionEnds(context, admitted: true)
            context.role = role
            return proceed(context, on: connection)
        case .refused(let problem):
            admissionEnds(context, admitted: false)
            return respond(with: problem.response, to: context, on: connection, closeConnection: Self.expectsBody(context))
        case .pending(let start):
            guard let daemon = Self.loopDaemon(of: connection) else { return false }
            // An event loop must not wait: the connection is set aside
            // until the decision comes, and libmicrohttpd calls again then
            // (`finish`), or until the admission deadline answers 503.
            let suspension = Suspension(connection: connection.handle, daemon: daemon, registry: suspensions)
            let wait = Deferral<Admission>(suspension: suspension)
            context.admissionWait = wait
            suspension.lock.withLock { suspension.suspendLocked() }
            if let watch = Daemon.watch(connection.handle) {
                let late = admissionTooLate()
                deadlines.admissionPending(watch) { _ = wait.fulfil(.refused(late)) }
            }
            start { _ = wait.fulfil($0) }
            return true
        }
    }

    /// The daemon whose loop serves `connection`. Every connection has its
    /// record from its opening on (`Daemon.connectionChanged`); without
    /// one, the caller closes the connection.
    private static func loopDaemon(of connection: ClientConnection) -> EventLoopDaemon? {
        Daemon.openConnection(connection.handle)?.loopDaemon
    }

    /// The request goes on: its body is read (within the body deadline), then the handler called.
    private func proceed(_ context: RequestState, on connection: ClientConnection) -> Bool {
        if Self.expectsBody(context), let watch = Daemon.watch(connection.handle) { deadlines.bodyExpected(watch) }
        if context.rejection == nil, let contentType = context.contentType, FormReader.handles(contentType) {
            do {
                context.form = try FormReader(connection: connection, context: context)
            } catch {
                context.rejection = error
            }
        }
        return true
    }

    /// Whether the request announced a body (its connection is closed when
    /// it is answered before the body is read).
    private static func expectsBody(_ context: RequestState) -> Bool {
        if context.headers["Transfer-Encoding"] != nil { return true }
        guard let length = context.headers["Content-Length"] else { return false }
        return Int(length.trimmingCharacters(in: " \t")) != 0
    }

    /// A piece of the body arrived.
    func receive(_ chunk: UnsafeRawBufferPointer, for context: RequestState, on connection: ClientConnection) -> Bool {
        guard !context.hasResponded else { return true }
        context.receivedBytes += chunk.count
        if context.receivedBytes > context.maximumBodySize {
            // A response can only be queued once the body is in: discard
            // the rest and answer 413 then, unless it goes on for too long.
            if context.receivedBytes > 2 * context.maximumBodySize + (1 << 20) {
                logger.warning("closing the connection of \(context.methodForLog) \(context.rawPathForLog): body far over the limit")
                return false
            }
            if !context.closesConnection {
                context.closesConnection = true
                context.rejection = tooLarge(context)
                releaseBody(of: context)
            }
            return true
        }
        guard context.rejection == nil else { return true }
        let held = bodyBytesInFlight.add(chunk.count, ordering: .relaxed).newValue
        context.heldBodyBytes += chunk.count
        if held > configuration.maximumBodyBytesInFlight {
            // Discarded, not held: the rest goes the same way, and the answer is 503.
            releaseBody(of: context)
            context.closesConnection = true
            context.rejection = HTTPError(
                .serviceUnavailable, detail: "The server holds as many request bodies as it may at once; send again shortly.",
                headers: ["Retry-After": "1"])
            return true
        }
        if let form = context.form {
            if let problem = form.process(chunk) { context.rejection = problem }
        } else if let spooled = context.spooledBody {
            if !spooled.append(chunk) { bodyNotStored(context) }
        } else if context.body.count + chunk.count > configuration.bodyMemoryLimit {
            spool(context, chunk)
        } else {
            if context.body.isEmpty, let length = context.headers["Content-Length"].flatMap({ Int($0.trimmingCharacters(in: " \t")) }) {
                context.body.reserveCapacity(min(length, configuration.bodyMemoryLimit))
            }
            context.body.append(contentsOf: chunk)
        }
        return true
    }

    /// Moves the body received so far, and `chunk`, into a temporary file, where the rest goes too.
    private func spool(_ context: RequestState, _ chunk: UnsafeRawBufferPointer) {
        guard let spooled = SpooledBody() else {
            bodyNotStored(context)
            return
        }
        let stored = context.body.withUnsafeBytes { spooled.append($0) } && spooled.append(chunk)
        context.body = []
        guard stored else {
            bodyNotStored(context)
            return
        }
        context.spooledBody = spooled
    }

    /// The body cannot be written to its temporary file: the rest is discarded and the request answered 503.
    private func bodyNotStored(_ context: RequestState) {
        logger.error("cannot store the body of \(context.methodForLog) \(context.rawPathForLog) in a temporary file: errno \(errno)")
        releaseBody(of: context)
        context.closesConnection = true
        context.rejection = HTTPError(
            .serviceUnavailable, detail: "The server cannot store the request body now; send again shortly.",
            headers: ["Retry-After": "1"])
    }

    /// The whole request is in: run the handler (unless the request was
    /// rejected) and queue its response.
    ///
    /// A response that needs work that may block
    /// (``HTTPResponse/blocking(_:)``, ``HTTPResponse/later(_:)``, a
    /// streaming body) suspends the connection; libmicrohttpd calls again
    /// once it is resumed, and the response is queued then.
    func finish(_ context: RequestState, on connection: ClientConnection) -> Bool {
        guard !context.hasResponded else { return true }
        if let wait = context.admissionWait {
            switch wait.take() {
            case .ready(let admission):
                context.admissionWait = nil
                if let watch = Daemon.watch(connection.handle) { deadlines.admissionDecided(watch) }
                return conclude(admission, context: context, on: connection)
            case .waiting:
                return true
            case .abandoned:
                let problem = HTTPError(.serviceUnavailable, detail: "The server is stopping.")
                return respond(with: problem.response, to: context, on: connection, closeConnection: true)
            }
        }
        if let watch = Daemon.watch(connection.handle) { deadlines.bodyReceived(watch) }
        if let deferral = context.deferral {
            switch deferral.take() {
            case .ready(let prepared):
                return respond(
                    with: prepared.response, to: context, on: connection, closeConnection: closesConnection(context),
                    pump: prepared.pump, isCompressed: prepared.isCompressed)
            case .waiting:
                return true
            case .abandoned:
                let problem = HTTPError(.serviceUnavailable, detail: "The server is stopping.")
                return respond(with: problem.response, to: context, on: connection, closeConnection: true)
            }
        }
        if context.rejection == nil, let form = context.form, let problem = form.finish() {
            context.rejection = problem
        }
        if configuration.serverTiming { context.handlerStarted = .now }
        let response = context.rejection?.response ?? handler(context.makeRequest())
        context.observer = response.observer
        if Self.needsWorker(response) {
            guard let daemon = Self.loopDaemon(of: connection) else { return false }
            deferResponse(response, to: context, on: connection, daemon: daemon)
            return true
        }
        return respond(with: response, to: context, on: connection, closeConnection: closesConnection(context))
    }

    private func closesConnection(_ context: RequestState) -> Bool {
        context.closesConnection || isDraining.load(ordering: .acquiring)
    }

    /// Drops what the request holds of its body, and its count in ``bodyBytesInFlight``.
    private func releaseBody(of context: RequestState) {
        context.form?.abandon()
        context.form = nil
        context.body = []
        context.spooledBody = nil
        if context.heldBodyBytes > 0 {
            bodyBytesInFlight.subtract(context.heldBodyBytes, ordering: .relaxed)
            context.heldBodyBytes = 0
        }
    }

    private func respond(
        with response: HTTPResponse, to context: RequestState, on connection: ClientConnection, closeConnection: Bool,
        pump: StreamPump? = nil, isCompressed: Bool = false
    ) -> Bool {
        context.hasResponded = true
        if case .stream = response.body, let watch = Daemon.watch(connection.handle) { deadlines.responseStreaming(watch) }
        var response = response
        if response.status.code >= 400 {
            Self.addRequestID(context.requestID, toProblemIn: &response)
            response = response.problemAsPlainText(for: context.headers)
        }
        if configuration.serverTiming { response.headers.add("Server-Timing", Self.serverTiming(of: context)) }
        if !isCompressed, let compression = configuration.compression {
            response = compression.apply(to: consume response, requestHeaders: context.headers)
        }
        if let crossOrigin = configuration.crossOrigin {
            response = crossOrigin.apply(to: response, requestHeaders: context.headers)
        }
        return connection.queue(response, for: context, closeConnection: closeConnection, pump: pump)
    }

    /// Adds the request's id to a problem document, as its `requestId`
    /// member: every problem document the server sends carries it, whoever
    /// wrote it (a refusal here, the router, a database error's mapping).
    private static func addRequestID(_ requestID: String, toProblemIn response: inout HTTPResponse) {
        guard case .bytes(let document) = response.body, document.last == UInt8(ascii: "}"),
            response.headers["Content-Type"] == "application/problem+json"
        else { return }
        var body = document
        body.removeLast()
        body.append(contentsOf: #","requestId":"#.utf8)
        JSONWriter.appendString(requestID, to: &body)
        body.append(UInt8(ascii: "}"))
        response.body = .bytes(body)
    }

    // MARK: - Completion

    /// The request is over: clean up, tell the response's observer, and
    /// write the access-log line.
    func complete(_ context: RequestState, outcome: RequestState.Outcome) {
        // A response made ready after the client left is closed here: it
        // holds its body, and so perhaps a database connection.
        context.deferral?.end()?.discard(closingOn: workers)
        _ = context.admissionWait?.end()
        context.removeTemporaryFiles()
        if context.heldBodyBytes > 0 { bodyBytesInFlight.subtract(context.heldBodyBytes, ordering: .relaxed) }
        let elapsed = context.started.duration(to: .now)
        if context.spans != nil { endSpans(of: context) }
        context.observer?.requestCompleted(
            CompletedRequest(
                status: context.status, bytesSent: context.bytesSent, isStreamed: context.isStreamed, duration: elapsed))
        // The line would be built before `logger.info` decides to drop it:
        // at a quieter log level, it is not built at all.
        guard logger.logLevel <= .info else { return }
        if configuration.accessLogFields {
            return logAccessFields(context, outcome: outcome, elapsed: elapsed)
        }
        // Assembled as bytes: a chain of `String` appends costs several
        // times as much, once per request.
        var line: [UInt8] = []
        line.reserveCapacity(128)
        line.append(contentsOf: context.methodForLog.utf8)
        line.append(UInt8(ascii: " "))
        line.append(contentsOf: context.rawPathForLog.utf8)
        line.append(UInt8(ascii: " "))
        line.append(contentsOf: (context.status == 0 ? "-" : String(context.status)).utf8)
        line.append(UInt8(ascii: " "))
        line.append(contentsOf: String(context.bytesSent).utf8)
        line.append(contentsOf: " bytes ".utf8)
        RequestState.appendMilliseconds(elapsed, to: &line)
        line.append(contentsOf: " ms requestId=".utf8)
        line.append(contentsOf: context.requestID.utf8)
        if let problem = Self.problem(of: context, outcome: outcome) {
            line.append(contentsOf: " (\(problem))".utf8)
        }
        logger.info(Logger.Message(stringLiteral: String(decoding: line, as: UTF8.self)))
    }

    /// The access-log entry as metadata fields, for a log handler that
    /// writes them as such (JSON lines): `method`, `path`, `status`,
    /// `bytes`, `durationMs`, `requestId`, and `problem` for a request cut short.
    private func logAccessFields(_ context: RequestState, outcome: RequestState.Outcome, elapsed: Duration) {
        let (seconds, attoseconds) = elapsed.components
        let tenthsOfMilliseconds = seconds * 10_000 + attoseconds / 100_000_000_000_000
        var metadata: Logger.Metadata = [
            "method": .string(context.methodForLog),
            "path": .string(context.rawPathForLog),
            "status": .stringConvertible(context.status),
            "bytes": .stringConvertible(context.bytesSent),
            "durationMs": .stringConvertible(Double(tenthsOfMilliseconds) / 10),
            "requestId": .string(context.requestID),
        ]
        if let problem = Self.problem(of: context, outcome: outcome) { metadata["problem"] = .string(problem) }
        logger.info("request", metadata: metadata)
    }

    private static func problem(of context: RequestState, outcome: RequestState.Outcome) -> String? {
        if context.streamFailed { return "stream aborted" }
        if case .aborted(let reason) = outcome { return reason }
        return nil
    }
}

extension RequestState {
    /// `HTTPRequest.contentType`, before the request is built.
    var contentType: String? {
        guard headers["Content-Type"] != nil else { return nil }
        return HTTPRequest(method: method, rawPath: "", pathSegments: [], headers: headers).contentType
    }
}
