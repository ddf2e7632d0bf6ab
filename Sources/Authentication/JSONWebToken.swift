#if canImport(Glibc)
import Glibc
#endif
import WebService

/// Checks bearer tokens: JSON Web Tokens (RFC 7519) in compact form,
/// signed with HS256 (a shared secret) or RS256 (an RSA key pair, the
/// public key here). A token is accepted when its header names that one
/// algorithm, its signature is right, `exp` (if present) is not past,
/// `nbf` (if present) is not ahead, both with ``leeway``, and `aud` names
/// ``audience`` (a token with an `aud` is refused when the server has
/// none, as RFC 7519 asks). The role claim then says which database role
/// the request acts as.
///
/// ```swift
/// let verifier = try JSONWebTokenVerifier(key: .secret(Array("a long shared secret".utf8)), audience: "employees")
/// let claims = try verifier.claims(of: token)   // throws TokenError
/// ```
public struct JSONWebTokenVerifier: Sendable {
    /// The key tokens are signed with.
    public enum Key: Sendable {
        /// HS256: HMAC-SHA-256 under a shared secret.
        case secret([UInt8])
        /// RS256: the PEM text of the RSA public key (`-----BEGIN PUBLIC KEY-----`).
        case rsaPublicKey(String)
    }

    /// Why a token is refused; the text is safe to send back (it never quotes the token).
    public struct TokenError: Error, CustomStringConvertible {
        public let description: String
    }

    private enum Checker: Sendable {
        case hmac([UInt8])
        case rsa(RSAPublicKey)

        var algorithm: String {
            switch self {
            case .hmac: "HS256"
            case .rsa: "RS256"
            }
        }
    }

    private let checker: Checker
    /// The `aud` a token must name; `nil`: tokens without `aud` only.
    public let audience: String?
    /// The claim that names the role (`role`).
    public let roleClaim: String
    /// Seconds of clock difference allowed for `exp` and `nbf`.
    public let leeway: Double

    /// A verifier for tokens signed with `key`.
    ///
    /// ```swift
    /// try JSONWebTokenVerifier(key: .rsaPublicKey(pem), audience: nil, roleClaim: "db_role")
    /// ```
    public init(key: Key, audience: String? = nil, roleClaim: String = "role", leeway: Double = 30) throws {
        switch key {
        case .secret(let secret):
            guard secret.count >= 32 else {
                throw TokenError(description: "an HS256 secret must have at least 32 bytes (RFC 7518, section 3.2)")
            }
            checker = .hmac(secret)
        case .rsaPublicKey(let pem):
            checker = .rsa(try RSAPublicKey(pem: pem))
        }
        self.audience = audience
        self.roleClaim = roleClaim
        self.leeway = leeway
    }

    /// The claims of `token` once it is found valid at `now` (seconds since 1970).
    ///
    /// ```swift
    /// let role = try verifier.claims(of: token)["role"]
    /// ```
    public func claims(of token: some StringProtocol, now: Double = currentTime()) throws(TokenError) -> JSONValue.Members {
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw TokenError(description: "the token is not a signed JSON Web Token (three parts)") }
        guard case .object(let header) = try Self.json(parts[0], "header") else {
            throw TokenError(description: "the token's header is not a JSON object")
        }
        guard case .string(let algorithm) = header["alg"], algorithm == checker.algorithm else {
            throw TokenError(description: "the token is not signed with \(checker.algorithm)")
        }
        guard let signature = Base64.decode(parts[2], .url) else { throw TokenError(description: "the token's signature is not base64url") }
        let signed = token.utf8.prefix(parts[0].count + 1 + parts[1].count)
        let valid =
            switch checker {
            case .hmac(let secret): LibCrypto.constantTimeEqual(LibCrypto.hmacSHA256(key: secret, signed), signature)
            case .rsa(let key): key.verifiesSHA256(signature: signature, of: signed)
            }
        guard valid else { throw TokenError(description: "the token's signature is wrong") }
        guard case .object(let claims) = try Self.json(parts[1], "claims") else {
            throw TokenError(description: "the token's claims are not a JSON object")
        }
        if let expiry = claims["exp"] {
            guard let expiry = Self.seconds(expiry) else { throw TokenError(description: "the token's exp is not a number") }
            guard now < expiry + leeway else { throw TokenError(description: "the token has expired") }
        }
        if let notBefore = claims["nbf"] {
            guard let notBefore = Self.seconds(notBefore) else { throw TokenError(description: "the token's nbf is not a number") }
            guard now + leeway >= notBefore else { throw TokenError(description: "the token is not valid yet") }
        }
        if let audiences = claims["aud"] {
            let named: [JSONValue] = if case .array(let values) = audiences { values } else { [audiences] }
            guard let audience, named.contains(.string(audience)) else {
                throw TokenError(description: "the token is meant for another audience")
            }
        } else if let audience {
            throw TokenError(description: "the token names no audience (aud), and must name \(audience)")
        }
        return claims
    }

    /// The role the token's claims name, `nil` when they name none.
    ///
    /// ```swift
    /// verifier.role(in: ["role": .string("payroll")])   // "payroll"
    /// ```
    public func role(in claims: JSONValue.Members) throws(TokenError) -> String? {
        guard let value = claims[roleClaim] else { return nil }
        guard case .string(let role) = value, !role.isEmpty else {
            throw TokenError(description: "the token's \(roleClaim) claim is not a role name")
        }
        return role
    }

    private static func json(_ part: some Collection<UInt8>, _ name: String) throws(TokenError) -> JSONValue {
        guard let bytes = Base64.decode(part, .url), let value = try? JSONValue.parse(bytes) else {
            throw TokenError(description: "the token's \(name) is not base64url JSON")
        }
        return value
    }

    private static func seconds(_ value: JSONValue) -> Double? {
        switch value {
        case .integer(let seconds): Double(seconds)
        case .number(let seconds): seconds
        default: nil
        }
    }

    /// Seconds since 1970, from the system clock.
    ///
    /// ```swift
    /// try verifier.claims(of: token, now: JSONWebTokenVerifier.currentTime() + 3600)   // in an hour
    /// ```
    public static func currentTime() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
