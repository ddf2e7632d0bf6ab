import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One call: a method, a path below the client's base URL whose `{name}`
/// variables are filled from the arguments, the other arguments, and the
/// options that apply to this call alone.
///
/// ```swift
/// var request = WebServiceRequest(.get, "/employees/{employeeNumber}", arguments: ["employeeNumber": 10004])
/// request.headers["Accept-Language"] = "fr"
/// let response = try await client.send(request)
/// ```
public struct WebServiceRequest: Sendable {
    /// An HTTP method.
    public struct Method: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let get = Method(rawValue: "GET")
        public static let post = Method(rawValue: "POST")
        public static let put = Method(rawValue: "PUT")
        public static let patch = Method(rawValue: "PATCH")
        public static let delete = Method(rawValue: "DELETE")

        public var description: String { rawValue }
    }

    public var method: Method
    /// The path below the base URL: `/employees/{employeeNumber}`.
    public var path: String
    public var arguments: RequestArguments
    /// How the arguments that are not path variables travel; `nil`: in the
    /// query for GET and DELETE, else as a form (multipart when a file is
    /// among them). With a ``body``, they go in the query.
    public var encoding: ArgumentEncoding?
    /// A body of its own (a JSON document, say), sent as it is.
    public var body: Body?
    /// Header fields of this call, over the client's.
    public var headers: [String: String]
    /// Credentials of this call, over the client's (``CredentialProvider``).
    public var credentials: (any CredentialProvider)?
    /// Hooks of this call, after the client's (``WebServiceHook``).
    public var hooks: [WebServiceHook]
    /// The statuses this call accepts, over the client's
    /// (``WebServiceClient/Configuration/successStatuses``).
    public var successStatuses: Set<Int>?
    /// Receives the progress of this call's upload and download (``TransferProgress``).
    public var progress: (@Sendable (TransferProgress) -> Void)?
    /// How this call uses the client's cache, over the client's policy.
    public var cachePolicy: CachePolicy?
    /// Seconds without progress before the call fails with `.timedOut`, over the client's.
    public var timeout: TimeInterval?

    public init(
        _ method: Method, _ path: String, arguments: RequestArguments = [:], encoding: ArgumentEncoding? = nil,
        body: Body? = nil, headers: [String: String] = [:], credentials: (any CredentialProvider)? = nil,
        hooks: [WebServiceHook] = [], successStatuses: Set<Int>? = nil,
        progress: (@Sendable (TransferProgress) -> Void)? = nil, cachePolicy: CachePolicy? = nil, timeout: TimeInterval? = nil
    ) {
        self.method = method
        self.path = path
        self.arguments = arguments
        self.encoding = encoding
        self.body = body
        self.headers = headers
        self.credentials = credentials
        self.hooks = hooks
        self.successStatuses = successStatuses
        self.progress = progress
        self.cachePolicy = cachePolicy
        self.timeout = timeout
    }

    /// A body sent as given.
    public struct Body: Sendable {
        public var data: Data
        public var contentType: String

        public init(data: Data, contentType: String) {
            self.data = data
            self.contentType = contentType
        }

        /// `value` as a JSON document, dates as ISO 8601 instants.
        ///
        /// ```swift
        /// let body = try WebServiceRequest.Body.json(NewProduct(name: "Tea", price: 4.5))
        /// ```
        public static func json(_ value: some Encodable) throws -> Body {
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            return Body(data: try encoder.encode(value), contentType: "application/json")
        }
    }
}

/// How arguments travel.
public enum ArgumentEncoding: Sendable {
    /// In the URL's query: `?a=2&b=4`, a list as a repeated name.
    case query
    /// `application/x-www-form-urlencoded`.
    case form
    /// `multipart/form-data`: files are streamed from disk.
    case multipart
    /// A JSON object whose members are the arguments.
    case json
}

// MARK: - Building the URL request

/// What a ``WebServiceRequest`` becomes: the URL request, and for a
/// multipart form the file its body was written to.
struct PreparedRequest {
    var urlRequest: URLRequest
    /// The multipart body, uploaded from disk and removed afterwards.
    var bodyFile: URL?

    func removeBodyFile() {
        if let bodyFile { try? FileManager.default.removeItem(at: bodyFile) }
    }
}

extension WebServiceRequest {
    /// The URL of this call below `baseURL`, with its path variables
    /// filled; the arguments left over in the order written.
    func resolvedPath(baseURL: URL) throws -> (url: URL, remaining: [(name: String, value: RequestArgumentValue)]) {
        var remaining = arguments.elements.filter { !$0.value.isAbsent }
        var filled = ""
        var rest = Substring(path)
        while let open = rest.firstIndex(of: "{") {
            filled += rest[..<open]
            guard let close = rest[open...].firstIndex(of: "}") else {
                throw WebServiceError(.invalidRequest, detail: "The path \(path) has a \"{\" without its \"}\".")
            }
            let name = String(rest[rest.index(after: open)..<close])
            guard let index = remaining.firstIndex(where: { $0.name == name }) else {
                throw WebServiceError(.invalidRequest, detail: "The path variable \"\(name)\" has no argument.", parameter: name)
            }
            let texts = remaining[index].value.texts
            guard texts.count == 1 else {
                throw WebServiceError(.invalidRequest, detail: "The path variable \"\(name)\" takes one value.", parameter: name)
            }
            filled += texts[0].addingPercentEncoding(withAllowedCharacters: .pathSegmentAllowed) ?? texts[0]
            remaining.remove(at: index)
            rest = rest[rest.index(after: close)...]
        }
        filled += rest
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        if !filled.hasPrefix("/") { filled = "/" + filled }
        guard let url = URL(string: base + filled) else {
            throw WebServiceError(.invalidRequest, detail: "\(base + filled) is not a valid URL.")
        }
        return (url, remaining)
    }

    /// The arguments' encoding once defaults are applied.
    var effectiveEncoding: ArgumentEncoding {
        if body != nil { return .query }
        if let encoding { return encoding }
        if method == .get || method == .delete { return .query }
        return arguments.hasFileParts ? .multipart : .form
    }

    /// The URL request, its header fields from `configuration` then this
    /// call's own; the credentials are set later, by the chain of hooks
    /// (``WebServiceHook``).
    func prepared(baseURL: URL, configuration: WebServiceClient.Configuration) throws -> PreparedRequest {
        let (url, remaining) = try resolvedPath(baseURL: baseURL)
        let encoding = effectiveEncoding
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            throw WebServiceError(.invalidRequest, detail: "The URL \(url) cannot be taken apart.")
        }
        if encoding == .query, !remaining.isEmpty {
            components.percentEncodedQuery = FormEncoding.encode(remaining)
        }
        guard let requestURL = components.url else {
            throw WebServiceError(.invalidRequest, detail: "The URL \(url) with the query arguments is not a URL.")
        }
        var urlRequest = URLRequest(url: requestURL)
        urlRequest.httpMethod = method.rawValue
        urlRequest.timeoutInterval = timeout ?? configuration.timeout
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        urlRequest.setValue("application/json", forHTTPHeaderField: "Accept")
        for (name, value) in configuration.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        for (name, value) in headers { urlRequest.setValue(value, forHTTPHeaderField: name) }

        var bodyFile: URL?
        if let body {
            urlRequest.httpBody = body.data
            urlRequest.setValue(body.contentType, forHTTPHeaderField: "Content-Type")
        } else {
            switch encoding {
            case .query:
                break
            case .form:
                if remaining.contains(where: { $0.value.containsFilePart }) {
                    throw WebServiceError(.invalidRequest, detail: "Files travel in a multipart form only.")
                }
                urlRequest.httpBody = Data(FormEncoding.encode(remaining).utf8)
                urlRequest.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            case .json:
                var json = "{"
                for (index, element) in remaining.enumerated() {
                    if index > 0 { json += "," }
                    json += JSONText.quoted(element.name) + ":"
                    element.value.appendJSON(to: &json)
                }
                json += "}"
                urlRequest.httpBody = Data(json.utf8)
                urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
            case .multipart:
                let form = try MultipartForm.write(remaining)
                bodyFile = form.file
                urlRequest.setValue("multipart/form-data; boundary=\(form.boundary)", forHTTPHeaderField: "Content-Type")
                urlRequest.setValue(String(form.length), forHTTPHeaderField: "Content-Length")
            }
        }
        return PreparedRequest(urlRequest: urlRequest, bodyFile: bodyFile)
    }
}

/// `application/x-www-form-urlencoded` text, as the query string uses it too.
enum FormEncoding {
    static func encode(_ elements: [(name: String, value: RequestArgumentValue)]) -> String {
        var pairs: [String] = []
        for (name, value) in elements {
            for text in value.texts {
                pairs.append(escape(name) + "=" + escape(text))
            }
        }
        return pairs.joined(separator: "&")
    }

    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .formValueAllowed) ?? text
    }
}

extension CharacterSet {
    /// Unreserved characters (RFC 3986): everything else is escaped in a form value.
    static let formValueAllowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
    /// What a path segment may hold unescaped.
    static let pathSegmentAllowed = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "/?#"))
}
