import EventLoops
import RequestTracing

/// A fully received HTTP request, as handed to a handler.
///
/// The server decodes the path and query itself from the raw request line
/// (percent-decoding, UTF-8 validation) and answers 400 before any handler
/// runs when they are malformed, so handlers only ever see valid strings.
///
/// ```swift
/// let server = HTTPServer(configuration: .init(port: 8080)) { request in
///     HTTPResponse(status: .ok, text: "Hello, \(request.queryItems.first?.value ?? "World")")
/// }
/// ```
public struct HTTPRequest: Sendable {
    /// The request method.
    public var method: HTTPMethod
    /// The path as sent, still percent-encoded, without the query (`/employees/10004`).
    public var rawPath: String
    /// The path's segments, percent-decoded (`["employees", "10004"]`).
    /// Empty segments from doubled or trailing slashes are dropped.
    public var pathSegments: [String]
    /// The query string as sent, without the `?`, or `nil` if there was none.
    /// `/employees?api` has the raw query `"api"`.
    public var rawQuery: String?
    /// Query arguments in order, percent-decoded (`+` is a space).
    /// A name without `=` has the empty value.
    public var queryItems: [QueryItem]
    /// The request's header fields.
    public var headers: HTTPHeaders
    /// Fields of an `application/x-www-form-urlencoded` or
    /// `multipart/form-data` body, in order. Empty for other bodies.
    public var formFields: [FormField]
    /// The raw body for any other content type (a JSON document, say).
    /// Empty for form bodies and bodiless requests. A body the server
    /// holds in a temporary file (``spooledBody``) is read from it on each
    /// access, and empty if the file cannot be read.
    public var body: [UInt8] {
        get { spooledBody.map { (try? $0.contents()) ?? [] } ?? heldBody }
        set {
            heldBody = newValue
            spooledBody = nil
        }
    }
    /// The body's length in bytes, without reading a spooled body.
    public var bodySize: Int { spooledBody?.size ?? heldBody.count }
    /// The body as held in memory (empty when it is spooled).
    private var heldBody: [UInt8]
    /// The body, when it is larger than the server holds in memory
    /// (``HTTPServer/Configuration/bodyMemoryLimit``): a handler that
    /// reads it in pieces from there keeps its memory flat.
    public internal(set) var spooledBody: SpooledBody?
    /// The client's address, as `host:port`, when known.
    public var remoteAddress: String? {
        get { peerAddress.text }
        set { peerAddress = .text(newValue) }
    }
    /// `remoteAddress` as received, formatted only when read.
    var peerAddress: PeerAddress
    /// The request's id, as the response's `X-Request-Id` and the access
    /// log carry it (the client's own when valid, else generated); empty on
    /// a request not received by the server.
    public var requestID = ""
    /// The role the request acts as, once authentication gave it one
    /// (an `Authenticator` sets it); `nil` without authentication. The
    /// database layer runs the request's queries as this role.
    ///
    /// ```swift
    /// request.role = "payroll"
    /// ```
    public var role: String?
    /// The event loop that received the request, `nil` for one the server
    /// did not receive. Work that completes on another thread may hand the
    /// answer back to it; a request made from this one (``redirected(method:rawPath:pathSegments:rawQuery:queryItems:headers:body:)``)
    /// keeps it.
    ///
    /// ```swift
    /// pool.batcher(on: request.eventLoop)
    /// ```
    public var eventLoop: EventLoop?
    /// Where the spans of the request's work go (the database's
    /// statements, a handler's own), when the request's span records;
    /// `nil` otherwise. A request made from this one keeps it.
    ///
    /// ```swift
    /// let span = request.trace?.startSpan("render", ofKind: .internal)
    /// defer { span?.end() }
    /// ```
    public var trace: RequestTrace?

    public init(
        method: HTTPMethod,
        rawPath: String,
        pathSegments: [String],
        rawQuery: String? = nil,
        queryItems: [QueryItem] = [],
        headers: HTTPHeaders = HTTPHeaders(),
        formFields: [FormField] = [],
        body: [UInt8] = [],
        remoteAddress: String? = nil
    ) {
        self.init(
            method: method, rawPath: rawPath, pathSegments: pathSegments, rawQuery: rawQuery, queryItems: queryItems,
            headers: headers, formFields: formFields, body: body, peerAddress: .text(remoteAddress)
        )
    }

    /// A request with the client's address as received (the server's).
    init(
        method: HTTPMethod, rawPath: String, pathSegments: [String], rawQuery: String?, queryItems: [QueryItem],
        headers: HTTPHeaders, formFields: [FormField], body: [UInt8], spooledBody: SpooledBody? = nil, peerAddress: PeerAddress,
        requestID: String = "", role: String? = nil, eventLoop: EventLoop? = nil, trace: RequestTrace? = nil
    ) {
        self.trace = trace
        self.role = role
        self.eventLoop = eventLoop
        self.method = method
        self.rawPath = rawPath
        self.pathSegments = pathSegments
        self.rawQuery = rawQuery
        self.queryItems = queryItems
        self.headers = headers
        self.formFields = formFields
        self.heldBody = body
        self.spooledBody = spooledBody
        self.peerAddress = peerAddress
        self.requestID = requestID
    }

    /// This request sent on to another target: a new method, path, query,
    /// header fields and body, with the same identity (``role``,
    /// ``requestID``, ``remoteAddress``, ``trace``, and whatever else says who asks).
    /// Every request made from another (a JSON-RPC call, a retry) is made
    /// by this, never field by field, so that no part of the caller's
    /// identity can be left behind.
    ///
    /// ```swift
    /// let call = outer.redirected(method: .get, rawPath: "/employees/10004", pathSegments: ["employees", "10004"])
    /// ```
    public func redirected(
        method: HTTPMethod, rawPath: String, pathSegments: [String], rawQuery: String? = nil, queryItems: [QueryItem] = [],
        headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []
    ) -> HTTPRequest {
        var request = self
        request.method = method
        request.rawPath = rawPath
        request.pathSegments = pathSegments
        request.rawQuery = rawQuery
        request.queryItems = queryItems
        request.headers = headers
        request.formFields = []
        request.body = body
        return request
    }

    /// The media type of the body, lower-cased, without parameters
    /// (`application/json` for `Application/JSON; charset=utf-8`).
    public var contentType: String? {
        guard let value = headers["Content-Type"] else { return nil }
        let mediaType = value.split(separator: ";", maxSplits: 1).first ?? ""
        return mediaType.trimmingCharacters(in: " \t").lowercased()
    }
}

/// One `name=value` pair of a query string.
public struct QueryItem: Sendable, Hashable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// One field of a submitted form.
public struct FormField: Sendable {
    public enum Value: Sendable {
        /// A plain field.
        case text(String)
        /// A file part of a multipart body.
        case file(UploadedFile)
    }

    public var name: String
    public var value: Value

    public init(name: String, value: Value) {
        self.name = name
        self.value = value
    }
}

/// A file received in a `multipart/form-data` body.
///
/// The server streams the part into a temporary file while the request
/// arrives and removes the file once the response is over; a handler that
/// wants to keep it must copy or move it.
public struct UploadedFile: Sendable, Hashable {
    /// The file name the client gave, if any.
    public var filename: String?
    /// The part's declared content type, if any.
    public var contentType: String?
    /// Where the content is stored for the duration of the request.
    public var path: String
    /// The content's size in bytes.
    public var size: Int

    public init(filename: String?, contentType: String?, path: String, size: Int) {
        self.filename = filename
        self.contentType = contentType
        self.path = path
        self.size = size
    }
}

extension StringProtocol {
    func trimmingCharacters(in characters: String) -> String {
        let set = Set(characters)
        var slice = Substring(self)
        while let first = slice.first, set.contains(first) { slice.removeFirst() }
        while let last = slice.last, set.contains(last) { slice.removeLast() }
        return String(slice)
    }
}
