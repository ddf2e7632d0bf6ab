#if canImport(Glibc)
import Glibc
#endif
import EventLoops
import Logging

/// What the server knows about one request while it is received and
/// answered: created when libmicrohttpd reads the request line, dropped
/// when the request completes (the request's `con_cls`).
///
/// Used by one thread at a time: the connection's event loop, or a worker
/// while the connection is suspended. So not `Sendable`.
///
/// The properties that hold buffers are `@exclusivity(unchecked)`: each
/// access to them otherwise goes through the runtime's exclusivity check
/// (`swift_beginAccess`), some ten times per request. One thread uses a context, and none of its accesses overlap
/// (no access calls back into code touching the same property).
final class RequestState {
    enum Outcome {
        case completed
        case aborted(String)
    }

    let rawTarget: [UInt8]
    let started = ContinuousClock.now
    let logger: Logger

    // Filled by the first access-handler call.
    var hasStarted = false
    /// The client's valid `X-Request-Id`, else a generated one (``RequestID``).
    @exclusivity(unchecked) var requestID = ""
    @exclusivity(unchecked) var method = HTTPMethod(rawValue: "-")
    @exclusivity(unchecked) var target: RequestTarget?
    @exclusivity(unchecked) var headers = HTTPHeaders()
    @exclusivity(unchecked) var remoteAddress = PeerAddress.text(nil)

    // The body.
    /// The largest body this request may send (its path's limit, else the server's).
    var maximumBodySize = 0
    /// The path whose own limit `maximumBodySize` is; `nil` for the server's.
    @exclusivity(unchecked) var bodyLimitPath: String?
    var receivedBytes = 0
    @exclusivity(unchecked) var body: [UInt8] = []
    /// The body past the server's ``HTTPServer/Configuration/bodyMemoryLimit``, in a file (`body` is empty then).
    @exclusivity(unchecked) var spooledBody: SpooledBody?
    @exclusivity(unchecked) var form: FormReader?
    /// Bytes of the body counted in the server's bodies in flight.
    var heldBodyBytes = 0
    /// The body is discarded (over a limit): the connection closes after the answer.
    var closesConnection = false
    /// A problem found before the handler runs; answered instead of calling it.
    @exclusivity(unchecked) var rejection: HTTPError?

    // The response.
    var hasResponded = false
    var status = 0
    var bytesSent = 0
    var streamFailed = false
    /// The body was streamed (chunked).
    var isStreamed = false
    /// Told when the request is over (the handler's response carried it).
    @exclusivity(unchecked) var observer: (any RequestObserver)?
    /// A fixed-length body, kept here while libmicrohttpd sends it (see
    /// `Connection.makeResponse(sending:for:)`).
    @exclusivity(unchecked) var responseBytes: [UInt8] = []

    /// Set while another thread produces the response (event loops).
    @exclusivity(unchecked) var deferral: Deferral<PreparedResponse>?
    /// Set while another thread decides whether the request is admitted (event loops).
    @exclusivity(unchecked) var admissionWait: Deferral<Admission>?
    /// The role the admission gave the request.
    @exclusivity(unchecked) var role: String?
    /// The loop that serves the request's connection.
    @exclusivity(unchecked) var eventLoop: EventLoop?
    /// The request's spans, when the server traces (``HTTPServer/Configuration/tracer``).
    @exclusivity(unchecked) var spans: RequestSpans?
    /// When the admission began, and how long it took once it decided (`Server-Timing`).
    var admissionStarted: ContinuousClock.Instant?
    var admissionDuration: Duration?
    /// When the handler was called (`Server-Timing`).
    var handlerStarted: ContinuousClock.Instant?

    /// Files holding uploaded parts, removed when the request completes.
    @exclusivity(unchecked) var temporaryFiles: [String] = []

    init(rawTarget: [UInt8], logger: Logger) {
        self.rawTarget = rawTarget
        self.logger = logger
    }

    /// The request's path as a log line may show it (``LogText``).
    var rawPathForLog: String {
        LogText.escaping(target?.rawPath ?? String(decoding: rawTarget.prefix { $0 != UInt8(ascii: "?") }, as: UTF8.self))
    }

    /// The request's method as a log line may show it (``LogText``).
    var methodForLog: String {
        LogText.escaping(method.rawValue)
    }

    /// The request as handed to the handler.
    func makeRequest() -> HTTPRequest {
        // Built with its peer address at once: setting `peerAddress` after
        // the public initializer would copy the whole request, twice.
        HTTPRequest(
            method: method,
            rawPath: target?.rawPath ?? "/",
            pathSegments: target?.pathSegments ?? [],
            rawQuery: target?.rawQuery,
            queryItems: target?.queryItems ?? [],
            headers: headers,
            formFields: form?.fields ?? [],
            body: body,
            spooledBody: spooledBody,
            peerAddress: remoteAddress,
            requestID: requestID,
            role: role,
            eventLoop: eventLoop,
            trace: spans?.trace
        )
    }

    /// Removes the temporary files; runs when the request completes,
    /// however it ended.
    func removeTemporaryFiles() {
        form?.closeOpenFile()
        for path in temporaryFiles where unlink(path) != 0 && errno != ENOENT {
            logger.warning("cannot remove temporary upload file \(path): errno \(errno)")
        }
        temporaryFiles.removeAll()
    }

    /// Appends `elapsed`, in milliseconds with one decimal (`12.3`).
    static func appendMilliseconds(_ elapsed: Duration, to line: inout [UInt8]) {
        let duration = elapsed.components
        let tenths = duration.seconds * 10_000 + duration.attoseconds / 100_000_000_000_000
        line.append(contentsOf: String(tenths / 10).utf8)
        line.append(UInt8(ascii: "."))
        line.append(UInt8(ascii: "0") + UInt8(tenths % 10))
    }
}
