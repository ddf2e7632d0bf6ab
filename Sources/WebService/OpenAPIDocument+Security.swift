/// How the API's requests are authenticated, as the OpenAPI document
/// declares it: the HTTP schemes (`components/securitySchemes`), the
/// document's `security` (any one scheme, or none when anonymous requests
/// are served), and the paths that need no credentials (`security: []`).
///
/// ```swift
/// let security = OpenAPISecurity(schemes: [.basic, .bearerJWT], allowsAnonymous: true, publicPathPrefixes: ["/health/"])
/// try WebServiceRouter(services: services, runners: [runner], openAPI: OpenAPIInfo(title: "Products", security: security))
/// ```
public struct OpenAPISecurity: Sendable, Hashable {
    /// An HTTP authentication scheme (`type: http`), by the name the
    /// document gives it.
    ///
    /// ```swift
    /// OpenAPISecurity.Scheme.basic.name   // "basic"
    /// ```
    public struct Scheme: Sendable, Hashable {
        /// Its key in `components/securitySchemes`.
        public var name: String
        /// The `Authorization` scheme, as RFC 9110 names it: `basic`, `bearer`.
        public var scheme: String
        /// What a bearer token is (`JWT`); `nil` to say nothing.
        public var bearerFormat: String?

        public init(name: String, scheme: String, bearerFormat: String? = nil) {
            self.name = name
            self.scheme = scheme
            self.bearerFormat = bearerFormat
        }

        /// HTTP basic authentication, named `basic`.
        public static let basic = Scheme(name: "basic", scheme: "basic")
        /// Bearer JSON Web Tokens, named `bearer`.
        public static let bearerJWT = Scheme(name: "bearer", scheme: "bearer", bearerFormat: "JWT")
    }

    /// The schemes a request may authenticate with, any one of them.
    public var schemes: [Scheme]
    /// Whether a request without credentials is served too (as an anonymous role).
    public var allowsAnonymous: Bool
    /// The paths that begin with one of these need no credentials (`/health/`).
    public var publicPathPrefixes: [String]

    public init(schemes: [Scheme], allowsAnonymous: Bool = false, publicPathPrefixes: [String] = []) {
        self.schemes = schemes
        self.allowsAnonymous = allowsAnonymous
        self.publicPathPrefixes = publicPathPrefixes
    }
}

extension OpenAPIDocument {
    /// `components/securitySchemes`; `nil` without a scheme.
    var securitySchemes: JSONValue? {
        guard let security = info.security, !security.schemes.isEmpty else { return nil }
        var schemes: JSONValue = [:]
        for scheme in security.schemes {
            var object: JSONValue = ["type": "http", "scheme": .string(scheme.scheme)]
            if let format = scheme.bearerFormat { object["bearerFormat"] = .string(format) }
            schemes[scheme.name] = object
        }
        return schemes
    }

    /// The document's `security`: each scheme, and `{}` when anonymous
    /// requests are served; `nil` without a scheme.
    var documentSecurity: JSONValue? {
        guard let security = info.security, !security.schemes.isEmpty else { return nil }
        var requirements: [JSONValue] = security.schemes.map { [$0.name: []] }
        if security.allowsAnonymous { requirements.append([:]) }
        return .array(requirements)
    }

    /// Whether the operations of the path `template` need no credentials.
    func isPublic(_ template: String) -> Bool {
        guard let security = info.security, !security.schemes.isEmpty else { return false }
        return security.publicPathPrefixes.contains { template.hasPrefix($0) }
    }
}
