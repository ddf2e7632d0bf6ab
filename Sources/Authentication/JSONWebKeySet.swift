import WebService

extension JSONWebTokenVerifier {
    /// The signature algorithms a key may be pinned to (RFC 7518, RFC 8037).
    enum Algorithm: String, Sendable {
        case hs256 = "HS256"
        case rs256 = "RS256"
        case es256 = "ES256"
        case edDSA = "EdDSA"

        /// The algorithm a public key of `kind` checks.
        init(_ kind: PublicKey.Kind) {
            switch kind {
            case .rsa: self = .rs256
            case .p256: self = .es256
            case .ed25519: self = .edDSA
            }
        }
    }

    /// One key of a verifier: its `kid` (`nil`: none), the one algorithm it
    /// checks, and the secret or public key that checks it.
    struct VerificationKey: Sendable {
        enum Checker: Sendable {
            case hmac([UInt8])
            case publicKey(PublicKey)
        }

        let id: String?
        let algorithm: Algorithm
        let checker: Checker

        /// The fewest bytes of an HS256 secret (RFC 7518, section 3.2).
        static let leastSecretBytes = 32

        init(id: String?, secret: [UInt8]) throws(KeyError) {
            guard secret.count >= Self.leastSecretBytes else {
                throw KeyError(description: "an HS256 secret must have at least \(Self.leastSecretBytes) bytes (RFC 7518, section 3.2)")
            }
            self.id = id
            algorithm = .hs256
            checker = .hmac(secret)
        }

        init(id: String?, publicKey: PublicKey) {
            self.id = id
            algorithm = Algorithm(publicKey.kind)
            checker = .publicKey(publicKey)
        }

        /// Whether `signature` is this key's of `message`.
        func verifies(signature: [UInt8], of message: some Collection<UInt8>) -> Bool {
            switch checker {
            case .hmac(let secret): LibCrypto.constantTimeEqual(LibCrypto.hmacSHA256(key: secret, message), signature)
            case .publicKey(let key): key.verifies(signature: signature, of: message)
            }
        }
    }
}

/// The keys of a JSON Web Key Set (RFC 7517, section 5),
/// `{"keys": [{"kty": …, "kid": …, "alg": …, "use": …}, …]}`, that check
/// token signatures:
/// - a key whose `use` is not `sig`, whose `key_ops` lack `verify`, or whose
///   algorithm is none of HS256, RS256, ES256 and EdDSA is left out (an
///   identity provider's set also holds encryption keys);
/// - each key is pinned to its `alg`, else to the one its type implies:
///   `oct` HS256 (`k`, 32 bytes or more), `RSA` RS256 (`n`, `e`; 2048 bits
///   or more), `EC` with `crv: P-256` ES256 (`x`, `y`), `OKP` with
///   `crv: Ed25519` EdDSA (`x`); an `alg` its type cannot check is an error;
/// - a public key with private members (`d`, `p`, …) is an error: the
///   server is given public keys only;
/// - two keys with one `kid`, a set of several keys one of which has no
///   `kid` (no token could name it), or a set with no usable key, is an error.
///
/// ```swift
/// let keys = try JSONWebKeySet.keys(json: #"{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"a","x":"11qYAYKx…"}]}"#)
/// ```
enum JSONWebKeySet {
    typealias KeyError = JSONWebTokenVerifier.KeyError

    /// The members of a JSON Web Key that only a private key has.
    static let privateMembers = ["d", "p", "q", "dp", "dq", "qi", "oth"]

    static func keys(json: String) throws(KeyError) -> [JSONWebTokenVerifier.VerificationKey] {
        guard case .object(let set)? = try? JSONValue.parse(Array(json.utf8)), case .array(let entries)? = set["keys"] else {
            throw KeyError(description: #"not a JSON Web Key Set: a JSON object with an array "keys""#)
        }
        var keys: [JSONWebTokenVerifier.VerificationKey] = []
        for (index, entry) in entries.enumerated() {
            guard case .object(let members) = entry else { throw KeyError(description: "key \(index + 1) is not a JSON object") }
            let name: String = if case .string(let kid)? = members["kid"] { "key \(index + 1) (kid \(kid))" } else { "key \(index + 1)" }
            do throws(KeyError) {
                guard let key = try self.key(members) else { continue }
                if let id = key.id, keys.contains(where: { $0.id == id }) { throw KeyError(description: "its kid is another key's too") }
                keys.append(key)
            } catch {
                throw KeyError(description: "\(name): \(error.description)")
            }
        }
        guard !keys.isEmpty else {
            throw KeyError(description: "no key for signatures with HS256, RS256, ES256 or EdDSA (the others are left out)")
        }
        if keys.count > 1, keys.contains(where: { $0.id == nil }) {
            throw KeyError(description: "a set of several keys needs a kid on each, so that a token can name its key")
        }
        return keys
    }

    /// The key `members` describe; `nil` for one that is not for checking
    /// signatures with an algorithm the server knows.
    private static func key(_ members: JSONValue.Members) throws(KeyError) -> JSONWebTokenVerifier.VerificationKey? {
        guard case .string(let type)? = members["kty"] else { throw KeyError(description: "kty is missing") }
        if let use = members["use"], use != .string("sig") { return nil }
        if let operations = members["key_ops"] {
            guard case .array(let names) = operations else { throw KeyError(description: "key_ops is not an array") }
            if !names.contains(.string("verify")) { return nil }
        }
        var id: String?
        if let kid = members["kid"] {
            guard case .string(let text) = kid else { throw KeyError(description: "kid is not a string") }
            id = text
        }
        let curve: String? = if case .string(let name)? = members["crv"] { name } else { nil }
        let implied: JSONWebTokenVerifier.Algorithm? =
            switch (type, curve) {
            case ("oct", _): .hs256
            case ("RSA", _): .rs256
            case ("EC", "P-256"): .es256
            case ("OKP", "Ed25519"): .edDSA
            default: nil
            }
        let algorithm: JSONWebTokenVerifier.Algorithm
        if let alg = members["alg"] {
            guard case .string(let text) = alg else { throw KeyError(description: "alg is not a string") }
            guard let named = JSONWebTokenVerifier.Algorithm(rawValue: text) else { return nil }
            guard named == implied else {
                throw KeyError(description: "alg \(text) cannot be checked with a key of kty \(type)\(curve.map { ", crv \($0)" } ?? "")")
            }
            algorithm = named
        } else {
            guard let implied else { return nil }
            algorithm = implied
        }
        if algorithm != .hs256, let found = privateMembers.first(where: { members[$0] != nil }) {
            throw KeyError(description: "it holds the private member \(found): give the server public keys only")
        }
        do {
            switch algorithm {
            case .hs256: return try .init(id: id, secret: try bytes("k", members))
            case .rs256:
                return .init(id: id, publicKey: try PublicKey(rsaModulus: try bytes("n", members), exponent: try bytes("e", members)))
            case .es256: return .init(id: id, publicKey: try PublicKey(p256X: try bytes("x", members), y: try bytes("y", members)))
            case .edDSA: return .init(id: id, publicKey: try PublicKey(ed25519: try bytes("x", members)))
            }
        } catch let error as KeyError {
            throw error
        } catch {
            throw KeyError(description: "\(error)")
        }
    }

    /// The bytes of the base64url member `name`.
    private static func bytes(_ name: String, _ members: JSONValue.Members) throws(KeyError) -> [UInt8] {
        guard case .string(let text)? = members[name], let bytes = Base64.decode(Array(text.utf8), .url), !bytes.isEmpty else {
            throw KeyError(description: "\(name) is missing, or not base64url")
        }
        return bytes
    }
}
