/// The HTTP/1.1 client of the tests, over a blocking socket to 127.0.0.1,
/// so that a test controls exactly the bytes sent and how fast the answer
/// is read. A library target: test targets cannot share sources.
///
/// On one connection (kept alive between requests):
///
/// ```swift
/// let client = try TestClient(port: server.port)
/// let response = try client.request("GET", "/math/sum?a=2&b=4")
/// #expect(response.status == 200 && response.text == "6")
/// ```
///
/// One request on its own connection (`Connection: close`):
///
/// ```swift
/// let reply = try TestClient.request("GET", "/employees/10004", port: server.port)
/// ```
///
/// Raw bytes, half-closes and slow writes are in `TestClient+Raw.swift`.
public final class TestClient {
    /// Why a connection, a send or a read failed.
    ///
    /// ```swift
    /// #expect(throws: TestClient.Failure.connect(errno: ECONNREFUSED)) { try TestClient(port: port) }
    /// ```
    public enum Failure: Error, Equatable {
        /// No connection (`ECONNREFUSED` when nothing listens).
        case connect(errno: Int32)
        /// A send failed (`EPIPE`, `ECONNRESET` once the server closed).
        case send(errno: Int32)
        /// A read failed; `EAGAIN` when nothing came within the timeout.
        case receive(errno: Int32)
        /// The peer closed the connection before a complete response.
        case closed
        /// A chunked body ended (connection closed) without the `0` chunk.
        case missingFinalChunk
        /// Bytes that are not an HTTP/1.1 response, described.
        case malformed(String)
    }

    let socket: Socket
    let reader: ResponseReader

    /// Connects to 127.0.0.1:`port`. A small `receiveBufferSize` limits how
    /// much the kernel buffers for a client that does not read; a read
    /// that gets nothing for `timeoutSeconds` throws `Failure.receive`.
    ///
    /// ```swift
    /// let client = try TestClient(port: server.port, receiveBufferSize: 64 << 10)
    /// ```
    public init(port: Int, receiveBufferSize: Int? = nil, timeoutSeconds: Int = 20) throws {
        socket = try Socket(port: port, receiveBufferSize: receiveBufferSize, timeoutSeconds: timeoutSeconds)
        reader = ResponseReader(socket: socket)
    }

    // MARK: - Requests on this connection

    /// Sends a request with `Host` and, for a body or a `POST` or `PUT`,
    /// `Content-Length` (each unless `headers` has one).
    ///
    /// ```swift
    /// try client.sendRequest("GET", "/employees", headers: [("Connection", "close")])
    /// ```
    public func sendRequest(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) throws {
        try socket.send(Self.requestBytes(method, target: Array(target.utf8), headers: headers, body: body))
    }

    /// Sends a request and reads its response.
    ///
    /// ```swift
    /// let response = try client.request("POST", "/echo", headers: [("Content-Type", "application/json")], body: json)
    /// ```
    public func request(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) throws -> Response {
        try sendRequest(method, target, headers: headers, body: body)
        return try readResponse(isHead: method == "HEAD")
    }

    /// Reads one response, framed by its Content-Length or chunked coding
    /// (a chunked body cut short throws `Failure.missingFinalChunk`). The
    /// body goes to `sink` if given (then `Response.body` stays empty).
    ///
    /// ```swift
    /// let response = try client.readResponse { received += $0.count }
    /// ```
    public func readResponse(isHead: Bool = false, sink: ((UnsafeRawBufferPointer) -> Void)? = nil) throws -> Response {
        try reader.readResponse(isHead: isHead, sink: sink)
    }

    /// Reads the status line, the header fields and at least `count` bytes
    /// that follow them (the start of the body), then stops reading.
    /// Returns the status.
    ///
    /// ```swift
    /// let status = try client.readHeadAndFirstBytes(16_384)
    /// ```
    public func readHeadAndFirstBytes(_ count: Int) throws -> Int {
        let status = try reader.readHead().status
        try reader.waitForUnread(count)
        return status
    }

    /// Reads the status line and the header fields, and nothing after them.
    ///
    /// ```swift
    /// let head = try client.readHead()
    /// ```
    public func readHead() throws -> Response {
        try reader.readHead()
    }

    /// Waits until at least `count` bytes after the head have arrived
    /// (unread); throws `Failure.closed` if the server closes first.
    ///
    /// ```swift
    /// try client.waitForBodyBytes(16_384)
    /// ```
    public func waitForBodyBytes(_ count: Int) throws {
        try reader.waitForUnread(count)
    }

    // MARK: - One request per connection

    /// Sends one request with `Connection: close` on a new connection and
    /// reads the response until the server closes (see `exchange`).
    ///
    /// ```swift
    /// let reply = try TestClient.request("HEAD", "/employees", port: port)
    /// ```
    public static func request(
        _ method: String, _ target: String, port: Int, headers: [(String, String)] = [], body: [UInt8] = [],
        closeSending: Bool = false, timeoutSeconds: Int = 60
    ) throws -> Response {
        try request(
            method, target: Array(target.utf8), port: port, headers: headers, body: body,
            closeSending: closeSending, timeoutSeconds: timeoutSeconds
        )
    }

    /// `request` with a target of any bytes (invalid UTF-8, NUL).
    ///
    /// ```swift
    /// let reply = try TestClient.request("GET", target: Array("/employees/1".utf8) + [0], port: port)
    /// ```
    public static func request(
        _ method: String, target: [UInt8], port: Int, headers: [(String, String)] = [], body: [UInt8] = [],
        closeSending: Bool = false, timeoutSeconds: Int = 60
    ) throws -> Response {
        let bytes = requestBytes(method, target: target, headers: [("Connection", "close")] + headers, body: body)
        return try exchange(
            bytes, port: port, isHead: method == "HEAD", closeSending: closeSending, timeoutSeconds: timeoutSeconds
        )
    }

    /// The request line, `Host` (`127.0.0.1` unless `headers` has one),
    /// `headers`, `Content-Length` and `body`.
    private static func requestBytes(
        _ method: String, target: [UInt8], headers: [(String, String)], body: [UInt8]
    ) -> [UInt8] {
        var head = Array("\(method) ".utf8) + target + Array(" HTTP/1.1\r\n".utf8)
        if !headers.contains(where: { $0.0.lowercased() == "host" }) { head += Array("Host: 127.0.0.1\r\n".utf8) }
        for (name, value) in headers { head += Array("\(name): \(value)\r\n".utf8) }
        let declaresLength = headers.contains { $0.0.lowercased() == "content-length" }
        if !declaresLength && (!body.isEmpty || method == "POST" || method == "PUT") {
            head += Array("Content-Length: \(body.count)\r\n".utf8)
        }
        return head + Array("\r\n".utf8) + body
    }
}

/// A connection belongs to the thread using it.
@available(*, unavailable)
extension TestClient: Sendable {}
