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
    ///     headers: ["X-App-Version": "2.1"], authorization: .basic(username: "ann", password: "secret"),
    ///     cache: try ResponseCache(directory: cachesFolder))
    /// ```
    public struct Configuration: Sendable {
        /// Header fields sent with every call.
        public var headers: [String: String]
        /// Credentials sent with every call.
        public var authorization: Authorization?
        /// Seconds without progress before a call fails with `.timedOut`.
        public var timeout: TimeInterval
        /// Where answers are kept; `nil`: nowhere.
        public var cache: ResponseCache?
        /// How calls use the cache, unless a request says otherwise.
        public var cachePolicy: CachePolicy

        public init(
            headers: [String: String] = [:], authorization: Authorization? = nil, timeout: TimeInterval = 60,
            cache: ResponseCache? = nil, cachePolicy: CachePolicy = .networkFirst
        ) {
            self.headers = headers
            self.authorization = authorization
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
    public func stream<Element: Decodable>(_ request: WebServiceRequest, of type: Element.Type = Element.self) -> WebServiceStream<Element> {
        WebServiceStream(client: self, request: request)
    }

    // MARK: - Raw calls

    /// Sends `request`: the answer's status, header fields and bytes, from
    /// the server or, by the cache policy, from the cache. An error status
    /// throws ``WebServiceError`` (`.server`, with the problem document's
    /// members); so do transport failures, timeouts and cancellation.
    public func send(_ request: WebServiceRequest) async throws -> WebServiceResponse {
        let prepared = try request.prepared(baseURL: baseURL, configuration: configuration)
        guard let cache = configuration.cache, request.method == .get else {
            return try await fetch(prepared)
        }
        return try await cache.answer(prepared.urlRequest, policy: request.cachePolicy ?? configuration.cachePolicy) { urlRequest in
            var revalidating = prepared
            revalidating.urlRequest = urlRequest
            return try await self.exchange(revalidating)
        }
    }

    /// The server's answer to `prepared`, any status.
    func exchange(_ prepared: PreparedRequest) async throws -> WebServiceResponse {
        do {
            let (response, data) = try await transport.data(for: prepared)
            return WebServiceResponse(status: response.statusCode, headers: response.headerFields, data: data)
        } catch {
            throw WebServiceError.transfer(error)
        }
    }

    /// The server's answer to `prepared`; an error status throws.
    private func fetch(_ prepared: PreparedRequest) async throws -> WebServiceResponse {
        let response = try await exchange(prepared)
        guard (200..<300).contains(response.status) else {
            throw WebServiceError(status: response.status, headers: response.headers, body: response.data)
        }
        return response
    }

    /// Starts `request` as a streamed transfer and waits for a successful head.
    func startStreaming(_ request: WebServiceRequest) async throws -> StreamingTransfer {
        let prepared = try request.prepared(baseURL: baseURL, configuration: configuration)
        defer { prepared.removeBodyFile() }
        let task: URLSessionTask = if let bodyFile = prepared.bodyFile {
            transport.session.uploadTask(with: prepared.urlRequest, fromFile: bodyFile)
        } else {
            transport.session.dataTask(with: prepared.urlRequest)
        }
        let transfer = StreamingTransfer(task: task)
        transport.start(task, handler: transfer)
        let head = try await transfer.head()
        guard (200..<300).contains(head.statusCode) else {
            let body = try await transfer.remainder()
            throw WebServiceError(status: head.statusCode, headers: head.headerFields, body: body)
        }
        return transfer
    }
}
