// MARK: - Refusals before the handler

extension RequestProcessor {
    /// A request line or header section over `maximumHeaderSize`: 414 or
    /// 431. (libmicrohttpd's pool is larger, see `Daemon.memoryLimit`, so
    /// that these reach the server; larger ones get the same documents
    /// through `libraryRefusal(status:)`.)
    func headerProblem(_ context: RequestState) -> HTTPError? {
        if context.rawTarget.count > configuration.maximumHeaderSize {
            return targetTooLong()
        }
        let size = context.headers.reduce(context.rawTarget.count) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
        return size > configuration.maximumHeaderSize ? headerTooLarge() : nil
    }

    func targetTooLong() -> HTTPError {
        HTTPError(.uriTooLong, detail: "The request target is longer than the limit of \(configuration.maximumHeaderSize) bytes.")
    }

    func headerTooLarge() -> HTTPError {
        HTTPError(
            .requestHeaderFieldsTooLarge,
            detail: "The request line and header fields are larger than the limit of \(configuration.maximumHeaderSize) bytes."
        )
    }

    /// 413 for a body over `limit`, naming the path when the limit is its own.
    func tooLarge(_ limit: Int, path: String? = nil) -> HTTPError {
        HTTPError(
            .contentTooLarge, detail: "The request body is larger than the limit of \(limit) bytes\(path.map { " for \($0)" } ?? "").")
    }

    /// 413 for the body of `context`, over its limit (its path's, named, or the server's).
    func tooLarge(_ context: RequestState) -> HTTPError {
        tooLarge(context.maximumBodySize, path: context.bodyLimitPath)
    }

    /// The problem document for a request that libmicrohttpd refused on
    /// its own, with `status`, before the server could answer it
    /// (Daemon+LibraryErrors.swift). libmicrohttpd tells only the status;
    /// the document says what each status of its means.
    func libraryRefusal(status: Int) -> HTTPError {
        switch status {
        case 414:
            // A request line larger than the connection's memory pool.
            return targetTooLong()
        case 431:
            // A header section larger than the pool, or with more fields
            // than the pool has room to record.
            return headerTooLarge()
        case 413:
            // A Content-Length or a chunk size beyond 64 bits.
            return tooLarge(configuration.maximumBodySize)
        case 400:
            return HTTPError(
                .badRequest,
                detail:
                    "The request is not valid HTTP/1.1: its HTTP version, a header field line, its Content-Length or its chunked body is malformed."
            )
        case 505:
            return HTTPError(.httpVersionNotSupported, detail: "The server speaks HTTP/1.1 and HTTP/1.0 only.")
        default:
            // 500: a body libmicrohttpd could not hand over.
            return HTTPError(HTTPStatus(status), detail: "The server could not process the request.")
        }
    }

    /// ``libraryRefusal(status:)`` with a new request id, in the document
    /// and in `X-Request-Id` (the request was never read far enough for
    /// its own).
    func libraryRefusalWithRequestID(status: Int) -> HTTPError {
        var problem = libraryRefusal(status: status)
        let requestID = RequestID.generate()
        problem.extensions.append(("requestId", .string(requestID)))
        problem.headers.add("X-Request-Id", requestID)
        return problem
    }

    /// The answer to a request whose admission was not decided within ``HTTPServer/Configuration/admissionTimeout``.
    func admissionTooLate() -> HTTPError {
        HTTPError(
            .serviceUnavailable,
            detail:
                "The request could not be admitted within \(Self.seconds(configuration.admissionTimeout)) s (its credentials are still being checked); send again shortly.",
            headers: ["Retry-After": "1"])
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
