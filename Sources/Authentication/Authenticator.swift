import HTTPServer
import Logging
import Locking
import WebService

/// Authenticates requests from their header fields, before the server
/// reads their bodies, and sets the role each acts as
/// (`HTTPServer/HTTPRequest/role`), which the database layer applies to
/// the request's queries (`SET LOCAL ROLE` in their transaction). It is the
/// server's `HTTPServer/RequestAdmission`: every request, whatever path
/// serves it (REST, JSON-RPC, HEAD), carries the role decided here.
///
/// - HTTP basic (`Authorization: Basic …`), when ``Configuration/passwords``
///   says how to check a password: against a password file of salted
///   hashes, or by a check of the server's (logging in to PostgreSQL as the
///   user). The role is the user's entry in ``Configuration/roles``, else
///   the user name. An empty password, or a NUL in the user or the password,
///   is refused before any check.
/// - Bearer tokens (`Authorization: Bearer …`), when
///   ``Configuration/tokens`` checks them: the role is the token's role
///   claim, else the anonymous role.
/// - A request without `Authorization` acts as
///   ``Configuration/anonymousRole``, or gets 401 when there is none.
///   With an anonymous role and no scheme, every request acts as it, and
///   `Authorization` is ignored as it is without authentication.
///
/// Password checks are slow on purpose (PBKDF2, a database login), so they
/// cost the server as little as an attacker can make them:
/// - they run on ``Configuration/passwordChecks`` threads of low priority,
///   with a queue of bounded length (503 with `Retry-After` past it);
/// - a result, right or wrong, is remembered for a while under a keyed hash
///   of the header (never the header itself), so the same credential is
///   checked once;
/// - an address whose checks keep failing waits longer each time
///   (`FailureBackoff`; an IPv6 address counts by its /64), answered 429
///   with `Retry-After` meanwhile; a later success does not clear that (a
///   valid account of the guesser's own must not reset its count), quiet
///   time does.
///
/// A missing or bad credential gets `401 Unauthorized` as a problem
/// document, with a `WWW-Authenticate` challenge for each scheme; a role
/// that cannot be taken (``DatabaseRoleName``) gets 403. No credential is
/// logged or echoed. The paths of ``Configuration/publicPathPrefixes`` (the
/// health probes) need none. ``reload(_:)`` replaces the configuration (new
/// password files, keys, role maps) while the server runs.
///
/// ```swift
/// let authenticator = try Authenticator(Authenticator.Configuration(
///     realm: "employees", tokens: try JSONWebTokenVerifier(key: .secret(secret))), logger: logger)
/// var configuration = HTTPServer.Configuration(port: 8080)
/// configuration.admission = authenticator
/// ```
public final class Authenticator: RequestAdmission {
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
        /// Password checks run at once (threads); fixed when the authenticator is made.
        public var passwordChecks: Int

        public init(
            realm: String, passwords: PasswordCheck? = nil, tokens: JSONWebTokenVerifier? = nil, roles: [String: String] = [:],
            anonymousRole: String? = nil, publicPathPrefixes: [String] = ["/health/"], passwordChecks: Int = 1
        ) {
            self.realm = realm
            self.passwords = passwords
            self.tokens = tokens
            self.roles = roles
            self.anonymousRole = anonymousRole
            self.publicPathPrefixes = publicPathPrefixes
            self.passwordChecks = passwordChecks
        }

        /// Throws when a role it names cannot be a request's role (``DatabaseRoleName``).
        func validate() throws(ConfigurationError) {
            if let anonymousRole, let problem = DatabaseRoleName.problem(with: anonymousRole) {
                throw ConfigurationError(description: "The anonymous role \(anonymousRole) \(problem).")
            }
            for (user, role) in roles.sorted(by: { $0.key < $1.key }) {
                if let problem = DatabaseRoleName.problem(with: role) {
                    throw ConfigurationError(description: "The role of \(user), \(role), \(problem).")
                }
            }
        }
    }

    /// A configuration that names a role no request may act as.
    public struct ConfigurationError: Error, CustomStringConvertible {
        public let description: String
    }

    /// The configuration and what is derived from it, replaced whole by ``reload(_:)``.
    private final class Settings: Sendable {
        let configuration: Configuration
        /// Checked for a user not in the password file, so that an unknown
        /// user takes as long as a wrong password (as many rounds as the file's first hash).
        let unknownUserHash: PasswordHash

        init(_ configuration: Configuration) {
            self.configuration = configuration
            var iterations = PasswordHash.defaultIterations
            if case .hashes(let hashes) = configuration.passwords, let first = hashes.values.first { iterations = first.iterations }
            unknownUserHash = .unmatchable(iterations: iterations)
        }
    }

    private let settings: Locked<Settings>
    private let logger: Logger
    /// Basic credentials checked lately, by keyed hash of the header's
    /// value: the role when right, `nil` when wrong, and until when.
    private let remembered = Locked<[[UInt8]: (role: String?, expiry: ContinuousClock.Instant)]>([:])
    /// The key of those hashes, new for each process: the plain header is never kept.
    private let rememberingKey = LibCrypto.randomBytes(32)
    private let checks: PasswordCheckQueue
    private let backoff = FailureBackoff()
    static let rememberedFor = Duration.seconds(60)
    static let failureRememberedFor = Duration.seconds(30)
    static let mostRemembered = 10_000
    /// Checks that may wait for a thread; more are answered 503.
    static let waitingChecks = 32

    /// An authenticator; `logger` logs the failures of a password check
    /// that could not tell (never a credential). Throws when the
    /// configuration names a role no request may act as.
    public init(_ configuration: Configuration, logger: Logger) throws {
        try configuration.validate()
        settings = Locked(Settings(configuration))
        self.logger = logger
        checks = PasswordCheckQueue(threads: configuration.passwordChecks, capacity: Self.waitingChecks)
    }

    /// The configuration in force.
    public var configuration: Configuration { settings.withLock { $0 }.configuration }

    /// Replaces the configuration (password file, keys, roles) from the
    /// next request on, and forgets the credentials checked under the old
    /// one. Throws, keeping the old one, when the new one names a role no
    /// request may act as. ``Configuration/passwordChecks`` stays as made.
    ///
    /// ```swift
    /// try authenticator.reload(try options.authenticatorConfiguration(realm: name))   // on SIGHUP
    /// ```
    public func reload(_ configuration: Configuration) throws {
        try configuration.validate()
        let new = Settings(configuration)
        settings.withLock { $0 = new }
        remembered.withLock { $0.removeAll() }
    }

    /// Whether `request` goes on, and as which role; a 401, 403, 429 or
    /// 503 when it does not. A basic credential not checked lately is
    /// decided later, on a password-check thread.
    public func admit(_ request: HTTPRequest) -> Admission {
        let settings = settings.withLock { $0 }
        let configuration = settings.configuration
        if configuration.publicPathPrefixes.contains(where: { request.rawPath.hasPrefix($0) }) { return .admitted(role: nil) }
        // An anonymous role alone: every request takes it, credentials or not (as without authentication).
        let checksCredentials = configuration.passwords != nil || configuration.tokens != nil
        guard checksCredentials, let authorization = request.headers["Authorization"] else {
            guard let anonymousRole = configuration.anonymousRole else {
                return .refused(challenge("The request needs credentials: \(schemesText(configuration)).", configuration))
            }
            return .admitted(role: anonymousRole)
        }
        let scheme = authorization.prefix { $0 != " " }
        let credentials = authorization.dropFirst(scheme.count).drop { $0 == " " }
        switch scheme.lowercased() {
        case "basic" where configuration.passwords != nil:
            return basic(credentials, request: request, settings: settings)
        case "bearer" where configuration.tokens != nil:
            return bearer(credentials, configuration)
        default:
            return .refused(challenge("The Authorization scheme is not accepted here: \(schemesText(configuration)).", configuration))
        }
    }

    // MARK: - Basic

    private func basic(_ credentials: Substring, request: HTTPRequest, settings: Settings) -> Admission {
        let configuration = settings.configuration
        let address = FailureBackoff.client(of: request.remoteAddress)
        guard let decoded = Base64.decode(credentials.utf8, .standard), let colon = decoded.firstIndex(of: UInt8(ascii: ":")),
            let user = String(validating: decoded[..<colon], as: UTF8.self), !user.isEmpty,
            let password = String(validating: decoded[(colon + 1)...], as: UTF8.self)
        else {
            return .refused(challenge("The basic credentials are not base64 of user:password in UTF-8.", configuration))
        }
        // A password check would take an empty password, or one cut at a NUL,
        // for "no password given", and a database login would then use the server's own.
        guard !password.isEmpty, !decoded.contains(0) else {
            backoff.failed(address)
            return .refused(challenge("The password is empty, or the user name or the password contains NUL.", configuration))
        }
        // Keyed by the decoded user and password: each of the several base64
        // spellings of one credential finds the same entry.
        let key = LibCrypto.hmacSHA256(key: rememberingKey, decoded)
        if let known = rememberedResult(key) {
            guard let role = known else {
                backoff.failed(address)
                return .refused(challenge("The user name or the password is wrong.", configuration))
            }
            return .admitted(role: role)
        }
        if let wait = backoff.wait(for: address) { return .refused(tooManyFailures(wait)) }
        return .pending { [self] decide in
            let queued = checks.submit { [self] in
                decide(check(user: user, password: password, key: key, request: request, settings: settings))
            }
            if !queued {
                decide(
                    .refused(
                        HTTPError(
                            .serviceUnavailable, detail: "Too many password checks are waiting; send again shortly.",
                            headers: ["Retry-After": "1"])))
            }
        }
    }

    /// On a password-check thread: the decision for a basic credential.
    private func check(user: String, password: String, key: [UInt8], request: HTTPRequest, settings: Settings) -> Admission {
        let configuration = settings.configuration
        let address = FailureBackoff.client(of: request.remoteAddress)
        // The same credential may have been checked, or the address
        // slowed down, while this one waited.
        if let known = rememberedResult(key) {
            return known.map { .admitted(role: $0) }
                ?? .refused(challenge("The user name or the password is wrong.", configuration))
        }
        if let wait = backoff.wait(for: address) { return .refused(tooManyFailures(wait)) }
        let isRight: Bool
        do {
            switch configuration.passwords {
            case .hashes(let hashes):
                let hash = hashes[user]
                isRight = (hash ?? settings.unknownUserHash).verifies(password: password) && hash != nil
            case .check(let check):
                isRight = try check(user, password)
            case nil:
                isRight = false
            }
        } catch {
            // Counted as a failure: a check that cannot tell (a database whose
            // messages are in another language, say) must not let guesses go unslowed.
            backoff.failed(address)
            logger.warning("A basic credential could not be checked", metadata: ["error": "\(error)"])
            let problem =
                (error as? any HTTPErrorConvertible)?.httpError
                ?? HTTPError(
                    .serviceUnavailable, detail: "The credentials cannot be checked now; send again shortly.", headers: ["Retry-After": "1"]
                )
            return .refused(problem)
        }
        guard isRight else {
            remember(key, role: nil, for: Self.failureRememberedFor, under: settings)
            backoff.failed(address)
            return .refused(challenge("The user name or the password is wrong.", configuration))
        }
        let role = configuration.roles[user] ?? user
        if let problem = DatabaseRoleName.problem(with: role) { return .refused(forbiddenRole(role, problem)) }
        remember(key, role: role, for: Self.rememberedFor, under: settings)
        return .admitted(role: role)
    }

    /// The remembered result of a credential: `.some(role)` when right,
    /// `.some(nil)` when wrong, `nil` when not checked lately.
    private func rememberedResult(_ key: [UInt8]) -> String?? {
        let now = ContinuousClock.now
        return remembered.withLock { remembered in
            guard let entry = remembered[key], entry.expiry > now else { return nil }
            return .some(entry.role)
        }
    }

    /// Remembers a result found under `settings`, unless a reload replaced
    /// them meanwhile (the result may not hold under the new files).
    private func remember(_ key: [UInt8], role: String?, for duration: Duration, under settings: Settings) {
        guard self.settings.withLock({ $0 === settings }) else { return }
        remembered.withLock { remembered in
            if remembered.count >= Self.mostRemembered { remembered.removeAll() }
            remembered[key] = (role, .now + duration)
        }
    }

    // MARK: - Bearer

    private func bearer(_ token: Substring, _ configuration: Configuration) -> Admission {
        guard let tokens = configuration.tokens else {
            return .refused(challenge("Bearer tokens are not accepted here.", configuration))
        }
        let role: String
        do throws(JSONWebTokenVerifier.TokenError) {
            let claims = try tokens.claims(of: token)
            guard let claimed = try tokens.role(in: claims) ?? configuration.anonymousRole else {
                throw JSONWebTokenVerifier.TokenError(description: "the token has no \(tokens.roleClaim) claim")
            }
            role = claimed
        } catch {
            return .refused(
                challenge(
                    "The bearer token is not valid: \(error.description).", configuration, tokenError: error.description))
        }
        if let problem = DatabaseRoleName.problem(with: role) { return .refused(forbiddenRole(role, problem)) }
        return .admitted(role: role)
    }

    // MARK: - Refusals

    /// The schemes accepted, for a problem's detail.
    private func schemesText(_ configuration: Configuration) -> String {
        switch (configuration.passwords != nil, configuration.tokens != nil) {
        case (true, true): "HTTP basic or a bearer token"
        case (true, false): "HTTP basic"
        case (false, true): "a bearer token"
        case (false, false): "none is accepted"
        }
    }

    /// 401 with `detail` and a challenge per scheme; a bad token's says why (RFC 6750).
    private func challenge(_ detail: String, _ configuration: Configuration, tokenError: String? = nil) -> HTTPError {
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
        return HTTPError(.unauthorized, detail: detail, headers: headers)
    }

    /// 403: the credential is right, but its role is not one a request may act as.
    private func forbiddenRole(_ role: String, _ problem: String) -> HTTPError {
        let name = role.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F } ? role : "given"
        return HTTPError(.forbidden, detail: "The role \(name) \(problem): no request acts as it.")
    }

    /// 429: the address failed too many checks lately.
    private func tooManyFailures(_ wait: Duration) -> HTTPError {
        let seconds = max(1, Int((Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18).rounded(.up)))
        return HTTPError(
            .tooManyRequests, detail: "Too many wrong credentials from this address lately; wait \(seconds) s before the next.",
            headers: ["Retry-After": String(seconds)])
    }
}
