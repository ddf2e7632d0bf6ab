internal import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#endif

/// A borrowed `MHD_Connection`, valid during one access-handler call.
/// libmicrohttpd owns the connection; this only reads from it and queues
/// the response.
struct ClientConnection {
    let handle: OpaquePointer
    /// Whether its server's patches leave the read buffer unzeroed (``LibraryPatches``).
    let releasesPoolPages: Bool

    init(_ handle: OpaquePointer, releasesPoolPages: Bool) {
        self.handle = handle
        self.releasesPoolPages = releasesPoolPages
    }

    // MARK: - Request

    /// The request's header fields, in the order received.
    var headers: HTTPHeaders {
        var headers = HTTPHeaders()
        // Counted first (no iterator: libmicrohttpd only counts), so that
        // the fields take one allocation, not one per doubling.
        headers.reserveCapacity(Int(MHD_get_connection_values(handle, .HEADER_KIND, nil, nil)))
        withUnsafeMutablePointer(to: &headers) { pointer in
            _ = MHD_get_connection_values(
                handle, .HEADER_KIND,
                { cls, _, key, value in
                    guard let cls, let key else { return .YES }
                    let headers = cls.assumingMemoryBound(to: HTTPHeaders.self)
                    headers.pointee.add(ClientConnection.string(key), value.map(ClientConnection.string) ?? "")
                    return .YES
                }, pointer)
        }
        return headers
    }

    /// The client's address (a copy, made text only if a handler reads it).
    var remoteAddress: PeerAddress {
        shim_MHD_get_client_address(handle).map(PeerAddress.init(copying:)) ?? .text(nil)
    }

    private static func string(_ cString: UnsafePointer<CChar>) -> String {
        String(decoding: UnsafeRawBufferPointer(start: cString, count: strlen(cString)), as: UTF8.self)
    }

    // MARK: - Response

    /// Hands `response` to libmicrohttpd, which sends it once the request
    /// has been read. Returns `false` if that failed (the connection is then
    /// closed); a streaming body is closed in every case.
    ///
    /// A streaming body is read from `pump`, which a worker made after
    /// pulling the body's first block (`RequestProcessor.prepare`): a body
    /// that ended within it comes as bytes instead. A HEAD gets the headers
    /// its GET would, since its first block is pulled as for a GET;
    /// libmicrohttpd sends no body for it.
    func queue(_ response: HTTPResponse, for context: RequestState, closeConnection: Bool, pump: StreamPump? = nil) -> Bool {
        let isHead = context.method == .head
        let created: OpaquePointer?
        var isChunked = false
        switch response.body {
        case .empty:
            created = MHD_create_response_from_buffer(0, nil, .RESPMEM_PERSISTENT)
        case .bytes(let bytes):
            created = ClientConnection.makeResponse(sending: bytes, for: context)
            if !isHead { context.bytesSent = bytes.count }
        case .stream(let body):
            if let pump {
                created = pump.makeResponse(for: handle)
                isChunked = true
                context.isStreamed = true
            } else {
                // Never so: a streaming response is queued only with its pump.
                body.close()
                created = nil
            }
        }
        guard let created else {
            context.logger.error("cannot create the response for \(context.methodForLog) \(context.rawPathForLog)")
            return false
        }
        defer { MHD_destroy_response(created) }

        ClientConnection.add(response.headers, to: created)
        // Straight to libmicrohttpd: appended to `response.headers`, it
        // would copy the response's whole header array on every request.
        _ = context.requestID.withCString { MHD_add_response_header(created, "X-Request-Id", $0) }
        // libmicrohttpd 0.9.75 sends the terminating chunk even for HEAD,
        // which a client would take for the start of the next response:
        // closing is right whatever the version does, patched or not.
        var closeConnection = closeConnection
        if isHead, isChunked { closeConnection = true }
        if closeConnection {
            _ = MHD_add_response_header(created, "Connection", "close")
        }
        context.status = response.status.code
        Daemon.leaveReadBufferUnzeroed(self)
        return MHD_queue_response(handle, UInt32(response.status.code), created) == .YES
    }

    /// A fixed-length response whose body is `bytes`, which the request's
    /// context keeps until the request completes: libmicrohttpd sends them
    /// from there instead of from a copy of its own (`RESPMEM_MUST_COPY`
    /// cost a `malloc` and a `memcpy` per request). It reads them only while
    /// sending, and reports the request completed only after that.
    static func makeResponse(sending bytes: [UInt8], for context: RequestState) -> OpaquePointer? {
        context.responseBytes = bytes
        return context.responseBytes.withUnsafeBytes { buffer in
            MHD_create_response_from_buffer(
                buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress), .RESPMEM_PERSISTENT
            )
        }
    }

    /// A response for `error` that owns a copy of its body: for an answer
    /// sent outside any request's context (Daemon+LibraryErrors.swift).
    static func makeResponse(_ error: HTTPError) -> OpaquePointer? {
        let response = error.response
        guard case .bytes(let body) = response.body else { return nil }
        let created = body.withUnsafeBytes { buffer in
            MHD_create_response_from_buffer(buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress), .RESPMEM_MUST_COPY)
        }
        if let created { add(response.headers, to: created) }
        return created
    }

    private static func add(_ headers: HTTPHeaders, to response: OpaquePointer) {
        // `withCString` rather than passing the strings to C directly: the
        // implicit conversion copies each string into a new array (two
        // allocations per request for `Content-Type` alone).
        for (name, value) in headers where !isFramingHeader(name) {
            _ = name.withCString { name in
                value.withCString { value in MHD_add_response_header(response, name, value) }
            }
        }
    }

    /// Framing is libmicrohttpd's business: it sets these from the body.
    /// Every field of every response passes here: a name of another length
    /// (in UTF-8, which lower-casing keeps for ASCII) is told apart without
    /// comparing it.
    private static func isFramingHeader(_ name: String) -> Bool {
        switch name.utf8.count {
        case 14: HTTPHeaders.namesMatch(name, "Content-Length")
        case 17: HTTPHeaders.namesMatch(name, "Transfer-Encoding")
        default:
            name.utf8.contains { $0 >= 0x80 }
                && (HTTPHeaders.namesMatch(name, "Content-Length") || HTTPHeaders.namesMatch(name, "Transfer-Encoding"))
        }
    }
}
