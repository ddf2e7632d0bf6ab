import JSONStreaming

/// A response for the server to send.
///
/// ```swift
/// HTTPResponse(status: .ok, json: Array(#"{"sum":6}"#.utf8))
/// HTTPResponse(status: .ok, headers: ["Content-Type": "application/json"], body: .stream(rows))
/// ```
///
/// A response with a streaming body is used by one thread (the
/// connection's), so `HTTPResponse` is not `Sendable`.
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

    public init(status: HTTPStatus, headers: HTTPHeaders = HTTPHeaders(), body: Body = .empty) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response of the given bytes.
    public init(status: HTTPStatus = .ok, json: [UInt8]) {
        self.init(status: status, headers: ["Content-Type": "application/json"], body: .bytes(json))
    }

    /// A plain-text response (UTF-8).
    public init(status: HTTPStatus = .ok, text: String) {
        self.init(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: .bytes(Array(text.utf8)))
    }
}
