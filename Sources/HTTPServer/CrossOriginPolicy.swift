/// Which web pages of other origins may call the server (CORS): their
/// browsers' preflight `OPTIONS` requests are answered here, before any
/// handler, and the responses to their requests carry
/// `Access-Control-Allow-Origin`. Off unless configured.
///
/// ```swift
/// HTTPServer.Configuration(crossOrigin: CrossOriginPolicy(allowedOrigins: ["https://app.example.com"]))
/// HTTPServer.Configuration(crossOrigin: CrossOriginPolicy(allowedOrigins: ["*"]))   // any page
/// ```
public struct CrossOriginPolicy: Sendable {
    /// Origins such as `https://app.example.com`, compared exactly; `*` allows any.
    public var allowedOrigins: [String]
    /// Seconds a browser may keep a preflight's answer.
    public var maxAge: Int

    /// The response header fields a page's script may read besides the simple ones.
    static let exposedHeaders = "Content-Range, ETag, Link, Location, Retry-After"
    static let allowedMethods = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"

    /// A policy for `allowedOrigins`.
    ///
    /// ```swift
    /// CrossOriginPolicy(allowedOrigins: ["https://a.example", "https://b.example"], maxAge: 600)
    /// ```
    public init(allowedOrigins: [String], maxAge: Int = 600) {
        self.allowedOrigins = allowedOrigins
        self.maxAge = maxAge
    }

    /// The value of `Access-Control-Allow-Origin` for a request from `origin`, `nil` when it is not allowed.
    func allowedOrigin(_ origin: String?) -> String? {
        guard let origin else { return nil }
        if allowedOrigins.contains("*") { return "*" }
        return allowedOrigins.contains(origin) ? origin : nil
    }

    /// The answer to a preflight request (`OPTIONS` with `Origin` and
    /// `Access-Control-Request-Method`) from an allowed origin; `nil` for
    /// any other request, which goes on to the handler.
    func preflightResponse(method: HTTPMethod, headers: HTTPHeaders) -> HTTPResponse? {
        guard method == .options, let requested = headers["Access-Control-Request-Method"], !requested.isEmpty,
            let origin = allowedOrigin(headers["Origin"])
        else { return nil }
        var response = HTTPResponse(status: .noContent)
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Access-Control-Allow-Methods"] = Self.allowedMethods
        if let requestedHeaders = headers["Access-Control-Request-Headers"], !requestedHeaders.isEmpty {
            response.headers["Access-Control-Allow-Headers"] = requestedHeaders
        }
        response.headers["Access-Control-Max-Age"] = String(maxAge)
        if origin != "*" { response.headers["Vary"] = "Origin" }
        return response
    }

    /// `response` with the header fields a page from an allowed `Origin` needs to read it.
    func apply(to response: HTTPResponse, requestHeaders: HTTPHeaders) -> HTTPResponse {
        guard let origin = allowedOrigin(requestHeaders["Origin"]), response.headers["Access-Control-Allow-Origin"] == nil
        else { return response }
        var response = response
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Access-Control-Expose-Headers"] = Self.exposedHeaders
        if origin != "*" { response.headers.add("Vary", "Origin") }
        return response
    }

    /// Whether a request that may change state comes from a web page of
    /// another site: any method but GET, HEAD and OPTIONS, whose `Origin`
    /// is not one of the server's own (one of `hosts`, on the port the
    /// request came to: the port in `Host`, else the scheme's) nor one
    /// `policy` lists by name (`*` does not count), or, without `Origin`,
    /// whose `Sec-Fetch-Site` is `cross-site`. `Origin` is compared with
    /// the names the server answers for, never with `Host` alone, which a
    /// page that rebinds its name to the server's address would choose;
    /// with any name allowed, its host must be the one `Host` names.
    /// `Origin: null` (a sandboxed page, a redirect across sites) counts as
    /// another site. A request from a program other than a browser sends
    /// neither and is never refused here.
    ///
    /// ```swift
    /// CrossOriginPolicy.isCrossSiteWrite(method: .post, headers: ["Host": "api.example", "Origin": "https://evil.example"],
    ///                                    policy: nil, hosts: AllowedHosts(configured: ["api.example"], listeningOn: "::"))   // true
    /// ```
    static func isCrossSiteWrite(method: HTTPMethod, headers: HTTPHeaders, policy: CrossOriginPolicy?, hosts: AllowedHosts) -> Bool {
        if method == .get || method == .head || method == .options { return false }
        guard let origin = headers["Origin"] else {
            return headers["Sec-Fetch-Site"]?.lowercased() == "cross-site"
        }
        // Only an origin listed by name may write: `*` lets any page read, never write.
        if policy?.allowedOrigins.contains(origin) == true, origin != "null" { return false }
        guard let separator = origin.firstRange(of: "://"),
            let (originHost, originPort) = AllowedHosts.hostAndPort(origin[separator.upperBound...]),
            let host = headers["Host"], let (requestHost, requestPort) = AllowedHosts.hostAndPort(Substring(host))
        else { return true }
        let defaultPort: Substring = origin[..<separator.lowerBound].lowercased() == "https" ? "443" : "80"
        guard (originPort ?? defaultPort) == (requestPort ?? defaultPort) else { return true }
        return !hosts.isServerName(originHost, requestHost: requestHost)
    }
}
