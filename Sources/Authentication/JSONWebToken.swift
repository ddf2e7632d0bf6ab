#if canImport(Glibc)
import Glibc
#endif
import WebService

/// Checks bearer tokens: JSON Web Tokens (RFC 7519) in compact form,
/// signed with one of the server's keys: a shared secret (HS256), a public
/// key (RS256, ES256 or EdDSA), or the keys of a JSON Web Key Set (RFC
/// 7517) such as an identity provider publishes.
///
/// A token is accepted when:
/// - each of its three parts is base64url in its one canonical spelling
///   (no padding, no other character, the unused bits zero), so that a
///   token has one text and no variant of it passes;
/// - its header names a key by `kid` that the server has (without `kid`,
///   or whatever it names when the server's one key has no `kid` of its
///   own, the server's one key), and the `alg` that key is
///   pinned to (RFC 8725, section 3.1: no algorithm chosen by the token,
///   no `none`); a header with `crit` is refused, and keys a token carries
///   (`jwk`, `jku`, `x5u`, `x5c`) are never used;
/// - its signature is right under that key;
/// - `exp` (if present) is not past and `nbf` (if present) not ahead, both
///   with ``leeway``; `aud` names ``audience`` (a token with an `aud` is
///   refused when the server has none, as RFC 7519 asks; `aud` may be a
///   string or an array); `iss` is exactly ``issuer`` when the server has one.
///
/// The role claim (``roleClaim``, a path into the claims) then says which
/// database role the request acts as.
///
/// ```swift
/// let verifier = try JSONWebTokenVerifier(key: .secret(Array("a long shared secret".utf8)), audience: "employees")
/// let claims = try verifier.claims(of: token)   // throws TokenError
/// ```
public struct JSONWebTokenVerifier: Sendable {
    /// The keys tokens are signed with.
    ///
    /// ```swift
    /// JSONWebTokenVerifier.Key.keySet(try String(contentsOfFile: "jwks.json", encoding: .utf8))
    /// ```
    public enum Key: Sendable {
        /// HS256: HMAC-SHA-256 under a shared secret of 32 bytes or more.
        case secret([UInt8])
        /// The PEM text of a public key (`-----BEGIN PUBLIC KEY-----`):
        /// RSA (RS256), P-256 (ES256) or Ed25519 (EdDSA).
        case publicKeyPEM(String)
        /// The JSON text of a JSON Web Key Set, `{"keys": [...]}`: its keys
        /// for signatures, each pinned to its `alg`, else to the algorithm
        /// its `kty` and `crv` imply.
        case keySet(String)
    }

    /// Why a token is refused; the text is safe to send back (it never quotes the token).
    public struct TokenError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Why keys cannot check tokens: a short secret, a PEM text or key set
    /// that holds no usable key. The text names the key.
    public struct KeyError: Error, CustomStringConvertible {
        public let description: String
    }

    let keys: [VerificationKey]
    /// The `aud` a token must name; `nil`: tokens without `aud` only.
    public let audience: String?
    /// The `iss` a token must have, exactly; `nil`: any, or none.
    public let issuer: String?
    /// Where the claims name the role (`role`).
    public let roleClaim: ClaimPath
    /// Seconds of clock difference allowed for `exp` and `nbf`.
    public let leeway: Double

    /// A verifier for tokens signed with `key`.
    ///
    /// ```swift
    /// try JSONWebTokenVerifier(key: .keySet(jwks), audience: "authenticated", issuer: "https://auth.example.com",
    ///                          roleClaim: JSONWebTokenVerifier.ClaimPath(".app_metadata.role")!)
    /// ```
    public init(key: Key, audience: String? = nil, issuer: String? = nil, roleClaim: ClaimPath = .role, leeway: Double = 30)
        throws(KeyError)
    {
        switch key {
        case .secret(let secret):
            keys = [try VerificationKey(id: nil, secret: secret)]
        case .publicKeyPEM(let pem):
            do {
                keys = [VerificationKey(id: nil, publicKey: try PublicKey(pem: pem))]
            } catch {
                throw KeyError(description: error.description)
            }
        case .keySet(let json):
            keys = try JSONWebKeySet.keys(json: json)
        }
        self.audience = audience
        self.issuer = issuer
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
        // An extension the token says must be understood (`b64`, say) is one this server does not know.
        guard header["crit"] == nil else { throw TokenError(description: "the token's header has crit, which no key here takes") }
        let key = try key(for: header)
        guard case .string(let algorithm) = header["alg"], algorithm == key.algorithm.rawValue else {
            throw TokenError(description: "the token is not signed with \(key.algorithm.rawValue)")
        }
        guard let signature = Base64.decode(parts[2], .url, canonical: true) else {
            throw TokenError(description: "the token's signature is not base64url")
        }
        let signed = token.utf8.prefix(parts[0].count + 1 + parts[1].count)
        guard key.verifies(signature: signature, of: signed) else { throw TokenError(description: "the token's signature is wrong") }
        guard case .object(let claims) = try Self.json(parts[1], "claims") else {
            throw TokenError(description: "the token's claims are not a JSON object")
        }
        try checkTimes(claims, now: now)
        if let audiences = claims["aud"] {
            let named: [JSONValue] = if case .array(let values) = audiences { values } else { [audiences] }
            guard let audience, named.contains(.string(audience)) else {
                throw TokenError(description: "the token is meant for another audience")
            }
        } else if let audience {
            throw TokenError(description: "the token names no audience (aud), and must name \(audience)")
        }
        if let issuer {
            guard let claimed = claims["iss"] else {
                throw TokenError(description: "the token names no issuer (iss), and must name \(issuer)")
            }
            guard claimed == .string(issuer) else { throw TokenError(description: "the token comes from another issuer") }
        }
        return claims
    }

    /// The key the header names by `kid`; the server's one key when it
    /// names none, or when that key has no `kid` (a secret, a PEM key).
    private func key(for header: JSONValue.Members) throws(TokenError) -> VerificationKey {
        if keys.count == 1, header["kid"] == nil || keys[0].id == nil { return keys[0] }
        guard let named = header["kid"] else {
            throw TokenError(description: "the token names no key (kid), and the server has \(keys.count)")
        }
        guard case .string(let id) = named, let key = keys.first(where: { $0.id == id }) else {
            throw TokenError(description: "the token's key (kid) is not one of the server's")
        }
        return key
    }

    private func checkTimes(_ claims: JSONValue.Members, now: Double) throws(TokenError) {
        if let expiry = claims["exp"] {
            guard let expiry = Self.seconds(expiry) else { throw TokenError(description: "the token's exp is not a number") }
            guard now < expiry + leeway else { throw TokenError(description: "the token has expired") }
        }
        if let notBefore = claims["nbf"] {
            guard let notBefore = Self.seconds(notBefore) else { throw TokenError(description: "the token's nbf is not a number") }
            guard now + leeway >= notBefore else { throw TokenError(description: "the token is not valid yet") }
        }
    }

    /// The role the token's claims name at ``roleClaim``, `nil` when they name none.
    ///
    /// ```swift
    /// verifier.role(in: ["role": .string("payroll")])   // "payroll"
    /// ```
    public func role(in claims: JSONValue.Members) throws(TokenError) -> String? {
        guard let value = roleClaim.value(in: claims) else { return nil }
        guard case .string(let role) = value, !role.isEmpty else {
            throw TokenError(description: "the token's \(roleClaim) claim is not a role name")
        }
        return role
    }

    private static func json(_ part: some Collection<UInt8>, _ name: String) throws(TokenError) -> JSONValue {
        guard let bytes = Base64.decode(part, .url, canonical: true), let value = try? JSONValue.parse(bytes) else {
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
