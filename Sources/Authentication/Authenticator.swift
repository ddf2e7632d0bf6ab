import HTTPServer
import Logging
import Locking
import WebService

/// Authenticates requests before a handler sees them, and sets the role
/// each acts as (``HTTPServer/HTTPRequest/role``), which the database layer
/// applies to the request's queries (`SET LOCAL ROLE` in their transaction).
///
/// - HTTP basic (`Authorization: Basic …`), when ``Configuration/passwords``
///   says how to check a password: against a password file of salted
///   hashes, or by a check of the server's (logging in to PostgreSQL as the
///   user). The role is the user's entry in ``Configuration/roles``, else
///   the user name. A success is remembered for a minute under a keyed hash
///   of the header, so that the slow check runs once, off the event loop.
/// - Bearer tokens (`Authorization: Bearer …`), when
///   ``Configuration/tokens`` checks them: the role is the token's role
///   claim, else the anonymous role.
/// - A request without `Authorization` acts as
///   ``Configuration/anonymousRole``, or gets 401 when there is none.
///   With an anonymous role and no scheme, every request acts as it, and
///   `Authorization` is ignored as it is without authentication.
///
/// A missing or bad credential gets `401 Unauthorized` as a problem
/// document, with a `WWW-Authenticate` challenge for each scheme. No
/// credential is logged or echoed. The paths of
/// ``Configuration/publicPathPrefixes`` (the health probes) need none.
///
/// ```swift
/// let authenticator = Authenticator(Authenticator.Configuration(
///     realm: "employees", tokens: try JSONWebTokenVerifier(key: .secret(secret))), logger: logger)
/// let server = HTTPServer(configuration: configuration) { request in
///     authenticator.respond(to: request) { router.respond(to: $0) }
/// }
/// ```
public final class Authenticator: Sendable {
    /// How a basic credential's password is checked.
    public enum PasswordCheck: Sendable {
        /// Against the hashes of a password file, by user name.
        case hashes([String: PasswordHash])
        /// By a function that may block (the server's: a login to
        /// PostgreSQL); it returns whether the password is right, and
        /// throws when it cannot tell (the database is down, say), which
        /// answers as the error says.
        case check(@Sendable (_ user: String, _ password: String) throws -> Bool)
    }

    /// What authenticates, and the roles requests act as.
    ///
    /// ```swift
    /// Authenticator.Configuration(realm: "employees", passwords: .hashes(hashes), roles: ["alice": "payroll"])
    /// ```
    public struct Configuration: Sendable {
        /// The realm of the challenges (`Basic realm="employees"`).
        public var realm: String
        /// How basic credentials are checked; `nil`: no basic authentication.
        public var passwords: PasswordCheck?
        /// How bearer tokens are checked; `nil`: no bearer tokens.
        public var tokens: JSONWebTokenVerifier?
        /// The role of each basic user whose role is not its name.
        public var roles: [String: String]
        /// The role of requests without credentials; `nil`: they get 401.
        public var anonymousRole: String?
        /// Paths that need no credentials, by prefix.
        public var publicPathPrefixes: [String]

        public init(
            realm: String, passwords: PasswordCheck? = nil, tokens: JSONWebTokenVerifier? = nil, roles: [String: String] = [:],
            anonymousRole: String? = nil, publicPathPrefixes: [String] = ["/health/"]
        ) {
            self.realm = realm
            self.passwords = passwords
            self.tokens = tokens
            self.roles = roles
            self.anonymousRole = anonymousRole
            self.publicPathPrefixes = publicPathPrefixes
        }
    }

    public let configuration: Configuration
    private let logger: Logger
    /// Basic credentials found right lately: role and expiry by keyed hash of the header's value.
    private let remembered = Locked<[[UInt8]: (role: String, expiry: ContinuousClock.Instant)]>([:])
    /// The key of those hashes, new for each process: the plain header is never kept.
    private let rememberingKey = LibCrypto.randomBytes(32)
    /// Checked for a user not in the password file, so that an unknown
    /// user takes as long as a wrong password (as many rounds as the file's first hash).
    private let unknownUserHash: PasswordHash
    static let rememberedFor = Duration.seconds(60)
    static let mostRemembered = 10_000

    /// An authenticator; `logger` logs the failures of a password check
    /// that could not tell (never a credential).
    public init(_ configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        var iterations = PasswordHash.defaultIterations
        if case .hashes(let hashes) = configuration.passwords, let first = hashes.values.first { iterations = first.iterations }
        unknownUserHash = .unmatchable(iterations: iterations)
    }

    /// `next`'s response for `request` once it is authenticated (its
    /// ``HTTPServer/HTTPRequest/role`` set), else a 401.
    ///
    /// ```swift
    /// authenticator.respond(to: request) { router.respond(to: $0) }
    /// ```
    public func respond(to request: HTTPRequest, next: @escaping @Sendable (HTTPRequest) -> HTTPResponse) -> HTTPResponse {
        var request = request
        if configuration.publicPathPrefixes.contains(where: { request.rawPath.hasPrefix($0) }) { return next(request) }
        // An anonymous role alone: every request takes it, credentials or not (as without authentication).
        let checksCredentials = configuration.passwords != nil || configuration.tokens != nil
        guard checksCredentials, let authorization = request.headers["Authorization"] else {
            guard let anonymousRole = configuration.anonymousRole else {
                return challenge("The request needs credentials: \(schemesText).")
            }
            request.role = anonymousRole
            return next(request)
        }
        let scheme = authorization.prefix { $0 != " " }
        let credentials = authorization.dropFirst(scheme.count).drop { $0 == " " }
        switch scheme.lowercased() {
        case "basic" where configuration.passwords != nil:
            return basic(credentials, request: request, next: next)
        case "bearer" where configuration.tokens != nil:
            return bearer(credentials, request: request, next: next)
        default:
            return challenge("The Authorization scheme is not accepted here: \(schemesText).")
        }
    }

    // MARK: - Basic

    private func basic(
        _ credentials: Substring, request: HTTPRequest, next: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) -> HTTPResponse {
        guard let decoded = Base64.decode(credentials.utf8, .standard), let colon = decoded.firstIndex(of: UInt8(ascii: ":")),
              let user = String(validating: decoded[..<colon], as: UTF8.self), !user.isEmpty,
              let password = String(validating: decoded[(colon + 1)...], as: UTF8.self)
        else {
            return challenge("The basic credentials are not base64 of user:password in UTF-8.")
        }
        let key = LibCrypto.hmacSHA256(key: rememberingKey, credentials.utf8)
        let now = ContinuousClock.now
        if let role = remembered.withLock({ remembered in remembered[key].flatMap { $0.expiry > now ? $0.role : nil } }) {
            var request = request
            request.role = role
            return next(request)
        }
        // The check is slow on purpose (PBKDF2, a database login): on a worker thread.
        return HTTPResponse.blocking { [self] in
            let isRight: Bool
            do {
                isRight = try check(user: user, password: password)
            } catch {
                logger.warning("A basic credential could not be checked", metadata: ["error": "\(error)"])
                return HTTPError.response(for: error, method: request.method, path: request.rawPath, logger: logger)
            }
            guard isRight else { return challenge("The user name or the password is wrong.") }
            let role = configuration.roles[user] ?? user
            remembered.withLock { remembered in
                if remembered.count >= Self.mostRemembered { remembered.removeAll() }
                remembered[key] = (role, .now + Self.rememberedFor)
            }
            var request = request
            request.role = role
            return next(request)
        }
    }

    private func check(user: String, password: String) throws -> Bool {
        switch configuration.passwords {
        case .hashes(let hashes):
            let hash = hashes[user]
            let isRight = (hash ?? unknownUserHash).verifies(password: password)
            return hash != nil && isRight
        case .check(let check):
            return try check(user, password)
        case nil:
            return false
        }
    }

    // MARK: - Bearer

    private func bearer(
        _ token: Substring, request: HTTPRequest, next: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) -> HTTPResponse {
        guard let tokens = configuration.tokens else { return challenge("Bearer tokens are not accepted here.") }
        var request = request
        do throws(JSONWebTokenVerifier.TokenError) {
            let claims = try tokens.claims(of: token)
            guard let role = try tokens.role(in: claims) ?? configuration.anonymousRole else {
                throw JSONWebTokenVerifier.TokenError(description: "the token has no \(tokens.roleClaim) claim")
            }
            request.role = role
        } catch {
            return challenge("The bearer token is not valid: \(error.description).", tokenError: error.description)
        }
        return next(request)
    }

    // MARK: - Challenges

    /// The schemes accepted, for a problem's detail.
    private var schemesText: String {
        switch (configuration.passwords != nil, configuration.tokens != nil) {
        case (true, true): "HTTP basic or a bearer token"
        case (true, false): "HTTP basic"
        case (false, true): "a bearer token"
        case (false, false): "none is accepted"
        }
    }

    /// 401 with `detail` and a challenge per scheme; a bad token's says why (RFC 6750).
    private func challenge(_ detail: String, tokenError: String? = nil) -> HTTPResponse {
        var headers = HTTPHeaders()
        let realm = configuration.realm.filter { $0 != "\"" && $0 != "\\" }
        if configuration.passwords != nil {
            headers.add("WWW-Authenticate", #"Basic realm="\#(realm)", charset="UTF-8""#)
        }
        if configuration.tokens != nil {
            var challenge = #"Bearer realm="\#(realm)""#
            if let tokenError {
                challenge += #", error="invalid_token", error_description="\#(tokenError.filter { $0 != "\"" && $0 != "\\" })""#
            }
            headers.add("WWW-Authenticate", challenge)
        }
        return HTTPError(.unauthorized, detail: detail, headers: headers).response
    }
}
