internal import CMicroHTTPD
internal import CMicroHTTPDPatches

// MARK: - libmicrohttpd's own error responses

extension Daemon {
    /// Replaces the error responses libmicrohttpd sends on its own with
    /// problem documents, for a server whose ``LibraryPatches`` say so
    /// (installed once, `LibraryPatches.resolve`).
    ///
    /// libmicrohttpd refuses some requests on its own, without asking the
    /// server, with a short HTML page and no option to change it: a request
    /// line or header section larger than the connection's memory pool
    /// (414, 431), whatever its size, since the pool must stay small
    /// (`Daemon.memoryLimit`); a malformed HTTP version, header line,
    /// Content-Length or chunked body (400); a Content-Length or chunk size
    /// beyond 64 bits (413); an HTTP version other than 1.x (505).
    /// `CMicroHTTPDPatches` interposes `MHD_queue_response`, through which
    /// each of these goes out, and sends this replacement instead.
    ///
    /// The problem document is built from the settings of the server the
    /// connection belongs to; `nil` (libmicrohttpd's own page) for a server
    /// whose patches are off. It runs on the connection's event loop, inside
    /// libmicrohttpd's processing of it.
    static let libraryErrorReplacement: MHDErrorResponseReplacement = { connection, status in
        guard let connection, let open = openConnection(connection), open.processor.libraryPatches.replacesErrorPages
        else { return nil }
        return ClientConnection.makeResponse(open.processor.libraryRefusalWithRequestID(status: Int(status)))
    }
}
