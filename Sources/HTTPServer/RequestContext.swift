#if canImport(Glibc)
import Glibc
#endif
import Logging

/// What the server knows about one request while it is received and
/// answered: created when libmicrohttpd reads the request line, dropped
/// when the request completes (the request's `con_cls`).
///
/// Used only by the connection's thread, so not `Sendable`.
final class RequestContext {
    enum Outcome {
        case completed
        case aborted(String)
    }

    let rawTarget: [UInt8]
    let started = ContinuousClock.now
    let logger: Logger

    // Filled by the first access-handler call.
    var hasStarted = false
    var method = HTTPMethod(rawValue: "-")
    var target: RequestTarget?
    var headers = HTTPHeaders()
    var remoteAddress = PeerAddress.text(nil)

    // The body.
    var receivedBytes = 0
    var body: [UInt8] = []
    var form: FormReader?
    /// The body went over the limit: the rest is discarded, the answer is 413.
    var isTooLarge = false
    /// A problem found before the handler runs; answered instead of calling it.
    var rejection: HTTPError?

    // The response.
    var hasResponded = false
    var status = 0
    var bytesSent = 0
    var streamFailed = false
    /// A fixed-length body, kept here while libmicrohttpd sends it (see
    /// `Connection.makeResponse(sending:for:)`).
    var responseBytes: [UInt8] = []

    /// Files holding uploaded parts, removed when the request completes.
    var temporaryFiles: [String] = []

    init(rawTarget: [UInt8], logger: Logger) {
        self.rawTarget = rawTarget
        self.logger = logger
    }

    var rawPathForLog: String {
        target?.rawPath ?? String(decoding: rawTarget.prefix { $0 != UInt8(ascii: "?") }, as: UTF8.self)
    }

    /// The request as handed to the handler.
    func makeRequest() -> HTTPRequest {
        var request = HTTPRequest(
            method: method,
            rawPath: target?.rawPath ?? "/",
            pathSegments: target?.pathSegments ?? [],
            rawQuery: target?.rawQuery,
            queryItems: target?.queryItems ?? [],
            headers: headers,
            formFields: form?.fields ?? [],
            body: body
        )
        request.peerAddress = remoteAddress
        return request
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

    /// Appends the duration so far, in milliseconds with one decimal
    /// (`12.3`).
    func appendElapsedMilliseconds(to line: inout [UInt8]) {
        let duration = started.duration(to: .now).components
        let tenths = duration.seconds * 10_000 + duration.attoseconds / 100_000_000_000_000
        line.append(contentsOf: String(tenths / 10).utf8)
        line.append(UInt8(ascii: "."))
        line.append(UInt8(ascii: "0") + UInt8(tenths % 10))
    }
}
