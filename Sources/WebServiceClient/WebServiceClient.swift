import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Calls the operations of a web service as typed `async` functions, in
/// the manner of HTTP-RPC's `WebServiceProxy`: a method, a path whose
/// `{name}` variables come from the arguments, and the other arguments in
/// the query (GET, DELETE) or a form, multipart form or JSON body.
///
/// ```swift
/// let client = WebServiceClient(baseURL: URL(string: "http://localhost:8080")!)
/// let employee = try await client.get(
///     "/employees/{employeeNumber}", arguments: ["employeeNumber": 10004, "details": ["titles", "salaries"]],
///     as: Employee.self)
/// let sum = try await client.get("/math/sum", arguments: ["values": [1, 2, 3]], as: Double.self)
/// ```
///
/// Answers are decoded with the server's date formats
/// (``WebServiceDecoding``); ``send(_:)`` gives the raw bytes and header
/// fields; ``stream(_:arguments:headers:of:)`` decodes a list as it
/// arrives. With a ``ResponseCache``, answers are kept on disk and served
/// when the server cannot be reached (``CachePolicy``).
///
/// A client may be shared by any number of tasks.
public final class WebServiceClient: Sendable {
    /// Settings for every call of a client; each has a default.
    ///
    /// ```swift
    /// let configuration = WebServiceClient.Configuration(
    ///     headers: ["X-App-Version": "2.1"], credentials: .basic(username: "ann", password: "secret"),
    ///     hooks: [.retry(), .logging()], cache: try ResponseCache(directory: cachesFolder))
    /// ```
    public struct Configuration: Sendable {
        /// Header fields sent with every call.
        public var headers: [String: String]
        /// Where each call's `Authorization` comes from, renewed after a 401
        /// (``CredentialProvider``); `nil`: none, or what `headers` holds.
        public var credentials: (any CredentialProvider)?
        /// What every call goes through, in this order, before a call's own
        /// hooks (``WebServiceHook``).
        public var hooks: [WebServiceHook]
        /// The statuses a call returns; any other throws ``WebServiceError``.
        public var successStatuses: Set<Int>
        /// Seconds without progress before a call fails with `.timedOut`.
        public var timeout: TimeInterval
        /// Where answers are kept; `nil`: nowhere.
        public var cache: ResponseCache?
        /// How calls use the cache, unless a request says otherwise.
        public var cachePolicy: CachePolicy

        public init(
            headers: [String: String] = [:], credentials: (any CredentialProvider)? = nil, hooks: [WebServiceHook] = [],
            successStatuses: Set<Int> = Set(200..<300), timeout: TimeInterval = 60, cache: ResponseCache? = nil,
            cachePolicy: CachePolicy = .networkFirst
        ) {
            self.headers = headers
            self.credentials = credentials
            self.hooks = hooks
            self.successStatuses = successStatuses
            self.timeout = timeout
            self.cache = cache
            self.cachePolicy = cachePolicy
        }
    }

    /// Where the service is: paths are appended to it (`http://host:8080` or `https://host/api`).
    public let baseURL: URL
    public let configuration: Configuration
    let transport: SessionTransport

    /// A client of the service at `baseURL`. `session` configures the
    /// underlying `URLSession` (proxies, TLS, connection limits); its own
    /// URL cache is not used. Credential header fields among its
    /// `httpAdditionalHeaders` move to `configuration.headers` (unless set
    /// there), so that the cache and the redirect rules see them.
    public init(
        baseURL: URL, configuration: Configuration = Configuration(),
        session: URLSessionConfiguration = .default
    ) {
        self.baseURL = baseURL
        // `copy()` of a configuration is a configuration (NSCopying), whatever the caller's.
        let session = session.copy() as! URLSessionConfiguration
        var configuration = configuration
        if var additional = session.httpAdditionalHeaders {
            for (key, value) in additional {
                let name = "\(key)"
                guard CredentialFields.names.contains(where: { $0.caseInsensitiveCompare(name) == .orderedSame }) else { continue }
                additional[key] = nil
                if !configuration.headers.keys.contains(where: { $0.caseInsensitiveCompare(name) == .orderedSame }) {
                    configuration.headers[name] = "\(value)"
                }
            }
            session.httpAdditionalHeaders = additional
        }
        self.configuration = configuration
        session.urlCache = nil
        session.requestCachePolicy = .reloadIgnoringLocalCacheData
        transport = SessionTransport(configuration: session)
    }

    deinit {
        transport.invalidate()
    }

    // MARK: - Typed calls

    /// `GET path`, the arguments in the query; the answer decoded as `type`.
    public func get<T: Decodable>(
        _ path: String, arguments: RequestArguments = [:], headers: [String: String] = [:], as type: T.Type = T.self
    ) async throws -> T {
        try await send(WebServiceRequest(.get, path, arguments: arguments, headers: headers)).decode(T.self)
    }

    /// `DELETE path`, the arguments in the query; the answer decoded as `type`.
    public func delete<T: Decodable>(
        _ path: String, arguments: RequestArguments = [:], headers: [String: String] = [:], as type: T.Type = T.self
    ) async throws -> T {
        try await send(WebServiceRequest(.delete, path, arguments: arguments, headers: headers)).decode(T.self)
    }

    /// `POST path`, the arguments as a form (multipart when one is a file),
    /// or as `encoding` says; the answer decoded as `type`.
    public func post<T: Decodable>(
        _ path: String, arguments: RequestArguments = [:], encoding: ArgumentEncoding? = nil,
        headers: [String: String] = [:], as type: T.Type = T.self
    ) async throws -> T {
        try await send(WebServiceRequest(.post, path, arguments: arguments, encoding: encoding, headers: headers)).decode(T.self)
    }

    /// `POST path` with `body` as a JSON document, the arguments in the query.
    public func post<Body: Encodable, T: Decodable>(
        _ path: String, arguments: RequestArguments = [:], json body: Body, headers: [String: String] = [:],
        as type: T.Type = T.self
    ) async throws -> T {
        try await send(WebServiceRequest(.post, path, arguments: arguments, body: .json(body), headers: headers)).decode(T.self)
    }

    /// `PUT path`, the arguments as ``post(_:arguments:encoding:headers:as:)`` sends them.
    public func put<T: Decodable>(
        _ path: String, arguments: RequestArguments = [:], encoding: ArgumentEncoding? = nil,
        headers: [String: String] = [:], as type: T.Type = T.self
    ) async throws -> T {
        try await send(WebServiceRequest(.put, path, arguments: arguments, encoding: encoding, headers: headers)).decode(T.self)
    }

    /// `PUT path` with `body` as a JSON document.
    public func put<Body: Encodable, T: Decodable>(
        _ path: String, arguments: RequestArguments = [:], json body: Body, headers: [String: String] = [:],
        as type: T.Type = T.self
    ) async throws -> T {
        try await send(WebServiceRequest(.put, path, arguments: arguments, body: .json(body), headers: headers)).decode(T.self)
    }

    /// `PATCH path`, the arguments as ``post(_:arguments:encoding:headers:as:)`` sends them.
    public func patch<T: Decodable>(
        _ path: String, arguments: RequestArguments = [:], encoding: ArgumentEncoding? = nil,
        headers: [String: String] = [:], as type: T.Type = T.self
    ) async throws -> T {
        try await send(WebServiceRequest(.patch, path, arguments: arguments, encoding: encoding, headers: headers)).decode(T.self)
    }

    /// `PATCH path` with `body` as a JSON document.
    public func patch<Body: Encodable, T: Decodable>(
        _ path: String, arguments: RequestArguments = [:], json body: Body, headers: [String: String] = [:],
        as type: T.Type = T.self
    ) async throws -> T {
        try await send(WebServiceRequest(.patch, path, arguments: arguments, body: .json(body), headers: headers)).decode(T.self)
    }

    /// The elements of the JSON array that `GET path` answers, decoded as
    /// they arrive (``WebServiceStream``).
    public func stream<Element: Decodable>(
        _ path: String, arguments: RequestArguments = [:], headers: [String: String] = [:], of type: Element.Type = Element.self
    ) -> WebServiceStream<Element> {
        WebServiceStream(client: self, request: WebServiceRequest(.get, path, arguments: arguments, headers: headers))
    }

    /// The elements of the JSON array that `request` answers, decoded as they arrive.
    public func stream<Element: Decodable>(_ request: WebServiceRequest, of type: Element.Type = Element.self) -> WebServiceStream<Element>
    {
        WebServiceStream(client: self, request: request)
    }

    // MARK: - Raw calls

    /// Sends `request` through the hooks (``WebServiceHook``): the answer's
    /// status, header fields and bytes, from the server or, by the cache
    /// policy, from the cache. A status outside the success statuses throws
    /// ``WebServiceError`` (`.server`, with the problem document's members);
    /// so do transport failures, timeouts and cancellation.
    public func send(_ request: WebServiceRequest) async throws -> WebServiceResponse {
        let prepared = try request.prepared(baseURL: baseURL, configuration: configuration)
        defer { prepared.removeBodyFile() }
        let response = try await WebServiceHook.run(hooks(of: request)[...], prepared.urlRequest) { urlRequest in
            var sent = prepared
            sent.urlRequest = urlRequest
            return try await self.answer(sent, for: request)
        }
        return try checked(response, for: request)
    }

    /// The chain `request` goes through: its credentials, the client's
    /// hooks, its own. An `Authorization` among the call's own header fields
    /// wins over the client's credentials, as the call's fields win over the client's.
    private func hooks(of request: WebServiceRequest) -> [WebServiceHook] {
        var hooks: [WebServiceHook] = []
        let ownField = request.headers.keys.contains { $0.caseInsensitiveCompare("Authorization") == .orderedSame }
        if let credentials = request.credentials ?? (ownField ? nil : configuration.credentials) {
            hooks.append(.credentials(credentials))
        }
        return hooks + configuration.hooks + request.hooks
    }

    /// `response` when its status is one `request` accepts; else its error.
    private func checked(_ response: WebServiceResponse, for request: WebServiceRequest) throws -> WebServiceResponse {
        guard (request.successStatuses ?? configuration.successStatuses).contains(response.status) else {
            throw WebServiceError(status: response.status, headers: response.headers, body: response.data)
        }
        return response
    }

    /// The answer to `prepared` (as the hooks left it), any status: from
    /// the cache by its policy for a GET when there is one, else the server's.
    private func answer(_ prepared: PreparedRequest, for request: WebServiceRequest) async throws -> WebServiceResponse {
        guard let cache = configuration.cache, request.method == .get else {
            return try await exchange(prepared, progress: request.progress)
        }
        do {
            return try await cache.answer(prepared.urlRequest, policy: request.cachePolicy ?? configuration.cachePolicy) { urlRequest in
                var revalidating = prepared
                revalidating.urlRequest = urlRequest
                return try await self.exchange(revalidating, progress: request.progress)
            }
        } catch let error as WebServiceError where error.code == .server && error.status != nil {
            // The cache throws on an error status; the hooks see it as an answer.
            return WebServiceResponse(status: error.status ?? 0, headers: error.headers, data: error.body ?? Data())
        }
    }

    /// The server's answer to `prepared`, any status.
    func exchange(_ prepared: PreparedRequest, progress: (@Sendable (TransferProgress) -> Void)? = nil) async throws -> WebServiceResponse {
        do {
            let (response, data) = try await transport.data(for: prepared, progress: progress)
            return WebServiceResponse(status: response.statusCode, headers: response.headerFields, data: data)
        } catch {
            throw WebServiceError.transfer(error)
        }
    }

    /// How a stream begins: a transfer whose body is still to read, or a
    /// body already whole (a hook's answer).
    enum StreamStart {
        case transfer(StreamingTransfer)
        case body(Data)
    }

    /// Starts `request` as a streamed transfer through the hooks, and waits
    /// for a successful head. The hooks see the head with an empty body (the
    /// body is the stream's), or an error's whole body.
    func startStreaming(_ request: WebServiceRequest) async throws -> StreamStart {
        let prepared = try request.prepared(baseURL: baseURL, configuration: configuration)
        defer { prepared.removeBodyFile() }
        let latest = LatestTransfer()
        let response = try await WebServiceHook.run(hooks(of: request)[...], prepared.urlRequest) { urlRequest in
            var sent = prepared
            sent.urlRequest = urlRequest
            let task = self.transport.task(for: sent)
            let transfer = StreamingTransfer(task: task)
            self.transport.start(task, handler: transfer, progress: request.progress)
            do {
                let head = try await transfer.head()
                var response = WebServiceResponse(status: head.statusCode, headers: head.headerFields, data: Data())
                if (200..<300).contains(head.statusCode) {
                    latest.replace(with: transfer)
                } else {
                    latest.replace(with: nil)
                    response.data = try await transfer.remainder()
                }
                return response
            } catch {
                throw WebServiceError.transfer(error)
            }
        }
        let transfer = latest.take()
        do {
            _ = try checked(response, for: request)
        } catch {
            transfer?.cancel()
            throw error
        }
        if let transfer, response.data.isEmpty { return .transfer(transfer) }
        transfer?.cancel()
        return .body(response.data)
    }
}

/// The transfer of a stream's last attempt (a hook may send it more than
/// once); the one it replaces is cancelled.
///
/// `@unchecked Sendable`: `transfer` is touched only with `lock` held.
final class LatestTransfer: @unchecked Sendable {
    private let lock = NSLock()
    private var transfer: StreamingTransfer?

    func replace(with transfer: StreamingTransfer?) {
        let previous = lock.withLock {
            defer { self.transfer = transfer }
            return self.transfer
        }
        if previous !== transfer { previous?.cancel() }
    }

    func take() -> StreamingTransfer? {
        lock.withLock {
            defer { transfer = nil }
            return transfer
        }
    }
}
