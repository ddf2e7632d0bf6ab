import JSONStreaming
import Synchronization

/// A response for the server to send.
///
/// ```swift
/// HTTPResponse(status: .ok, json: Array(#"{"sum":6}"#.utf8))
/// HTTPResponse(status: .ok, headers: ["Content-Type": "application/json"], body: .stream(rows))
/// ```
///
/// A response with a streaming body is used by one thread (the
/// connection's), so `HTTPResponse` is not `Sendable`.
///
/// A response still to come (``blocking(_:)``, ``later(_:)``,
/// ``async(_:)``) has no status, header fields or body of its own until the
/// server runs its work: ``isDeferred`` tells it apart, and
/// ``resolved()`` waits for the response it becomes.
public struct HTTPResponse {
    public enum Body {
        /// No body (`Content-Length: 0`, or none at all for 204/304/HEAD).
        case empty
        /// A body known in full, sent with `Content-Length`.
        case bytes([UInt8])
        /// A body produced while the client reads it, sent chunked.
        case stream(any StreamingBody)
    }

    public var status: HTTPStatus
    public var headers: HTTPHeaders
    public var body: Body
    /// Told when the request is over, with its status, size and duration
    /// (a router's metrics of the route that answered); `nil`: nobody.
    public var observer: (any RequestObserver)?
    /// The work that produces the response, for one still to come; the
    /// server reads nothing else of it.
    package private(set) var work: Deferred?

    public init(status: HTTPStatus, headers: HTTPHeaders = HTTPHeaders(), body: Body = .empty) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    private init(work: Deferred) {
        self.init(status: .ok)
        self.work = work
    }

    /// Whether the response is still to come: its work runs when the
    /// server (or ``resolved()``) gets to it.
    ///
    /// ```swift
    /// HTTPResponse.blocking { HTTPResponse(text: "done") }.isDeferred   // true
    /// ```
    public var isDeferred: Bool { work != nil }

    /// The `Content-Type` of a JSON answer, with the charset PostgREST's
    /// answers name (JSON is UTF-8 whatever it says; clients that read the
    /// parameter find it).
    public static let jsonContentType = "application/json; charset=utf-8"

    /// A JSON response of the given bytes.
    public init(status: HTTPStatus = .ok, json: [UInt8]) {
        // Room for the fields a JSON response gains on its way out (`ETag`,
        // `Vary`, `Cache-Control`), so that adding them does not reallocate.
        var headers = HTTPHeaders()
        headers.reserveCapacity(4)
        headers.add("Content-Type", Self.jsonContentType)
        self.init(status: status, headers: headers, body: .bytes(json))
    }

    /// A plain-text response (UTF-8).
    public init(status: HTTPStatus = .ok, text: String) {
        self.init(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: .bytes(Array(text.utf8)))
    }
}

// MARK: - Responses that come later

extension HTTPResponse {
    /// A response whose work may block (a database query, a file): it runs
    /// on a worker thread while the event loop serves other connections.
    ///
    /// ```swift
    /// HTTPResponse.blocking { HTTPResponse(text: try! String(contentsOfFile: path)) }
    /// ```
    public static func blocking(_ work: @escaping @Sendable () -> HTTPResponse) -> HTTPResponse {
        HTTPResponse(work: Deferred(.blocking(work)))
    }

    /// A response that another thread completes: `start` runs at once and
    /// must not block; it hands `promise` to whatever finishes the work
    /// (a database pipeline, say), which calls ``ResponsePromise/succeed(_:)``
    /// from any thread. Meanwhile the event loop serves other connections.
    ///
    /// ```swift
    /// HTTPResponse.later { promise in
    ///     adapter.start { outcome in promise.succeed(HTTPResponse(status: .ok, body: .stream(adapter))) }
    /// }
    /// ```
    public static func later(_ start: @escaping (ResponsePromise) -> Void) -> HTTPResponse {
        HTTPResponse(work: Deferred(.later(start)))
    }

    /// A response computed by an `async` function, as a task that runs on
    /// the server's worker threads (its task executor): an event loop never
    /// runs it, so an `async` function that blocks holds up one worker, not
    /// a loop. The task is cancelled with the request only by its own checks.
    ///
    /// ```swift
    /// HTTPResponse.async { HTTPResponse(text: await weather.today()) }
    /// ```
    public static func async(_ work: @escaping @Sendable () async -> HTTPResponse) -> HTTPResponse {
        HTTPResponse(work: Deferred(.task(work)))
    }

    /// The work behind a ``blocking(_:)``, ``later(_:)`` or ``async(_:)`` response.
    package struct Deferred {
        enum Kind {
            case blocking(@Sendable () -> HTTPResponse)
            case later((ResponsePromise) -> Void)
            case task(@Sendable () async -> HTTPResponse)
        }

        let kind: Kind

        init(_ kind: Kind) {
            self.kind = kind
        }
    }
}

/// Completes an ``HTTPResponse/later(_:)`` response, once, from any thread.
///
/// ```swift
/// promise.succeed(HTTPResponse(status: .ok, json: bytes))
/// ```
public final class ResponsePromise: @unchecked Sendable {
    // `@unchecked Sendable`: `fulfil` is set before the promise is handed
    // out, then read and cleared only by the one caller that wins `isDone`.
    private var fulfil: ((HTTPResponse) -> Void)?
    private let isDone = Atomic<Bool>(false)

    init(_ fulfil: @escaping (HTTPResponse) -> Void) {
        self.fulfil = fulfil
    }

    /// Sends `response`. Only the first call counts; later ones close a
    /// streaming body they carry and are otherwise ignored.
    public func succeed(_ response: HTTPResponse) {
        guard isDone.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            if case .stream(let body) = response.body { body.close() }
            return
        }
        // Released at once: a promise kept after its use must not keep
        // the server's objects alive.
        let fulfil = self.fulfil
        self.fulfil = nil
        fulfil?(response)
    }
}
