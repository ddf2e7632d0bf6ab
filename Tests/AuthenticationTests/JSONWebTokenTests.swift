@testable import Authentication
import Testing
import WebService

@Suite("JSON Web Tokens, HS256")
struct JSONWebTokenTests {
    static let secret = Array("a shared secret of thirty-two bytes or more".utf8)

    static func base64URL(_ text: String) -> String {
        Base64.encode(Array(text.utf8), .url)
    }

    /// A token of `claims` (JSON text) signed with `secret` (HS256 unless `algorithm` says otherwise).
    static func token(_ claims: String, algorithm: String = "HS256", secret: [UInt8] = secret) -> String {
        let signed = base64URL(#"{"alg":"\#(algorithm)","typ":"JWT"}"#) + "." + base64URL(claims)
        return signed + "." + Base64.encode(LibCrypto.hmacSHA256(key: secret, Array(signed.utf8)), .url)
    }

    let verifier: JSONWebTokenVerifier
    let now = 1_800_000_000.0

    init() throws {
        verifier = try JSONWebTokenVerifier(key: .secret(Self.secret), audience: "employees", leeway: 30)
    }

    @Test("a valid token's claims and role")
    func valid() throws {
        let claims = try verifier.claims(
            of: Self.token(#"{"role":"payroll","aud":"employees","exp":1800000060,"nbf":1799999990}"#), now: now)
        #expect(try verifier.role(in: claims) == "payroll")
        let listed = try verifier.claims(of: Self.token(#"{"aud":["a","employees"]}"#), now: now)
        #expect(try verifier.role(in: listed) == nil)
    }

    @Test(arguments: [
        (#"{"role":"r","aud":"employees","exp":1799999960}"#, "HS256", "the token has expired"),
        (#"{"role":"r","aud":"employees","exp":"soon"}"#, "HS256", "the token's exp is not a number"),
        (#"{"role":"r","aud":"employees","nbf":1800000031}"#, "HS256", "the token is not valid yet"),
        (#"{"role":"r","aud":"others"}"#, "HS256", "the token is meant for another audience"),
        (#"{"role":"r"}"#, "HS256", "the token names no audience (aud), and must name employees"),
        (#"{"role":"r","aud":"employees"}"#, "none", "the token is not signed with HS256"),
        (#"{"role":"r","aud":"employees"}"#, "RS256", "the token is not signed with HS256"),
        (#"["role"]"#, "HS256", "the token's claims are not a JSON object"),
    ])
    func refused(claims: String, algorithm: String, reason: String) {
        #expect(throws: JSONWebTokenVerifier.TokenError(description: reason)) {
            try verifier.claims(of: Self.token(claims, algorithm: algorithm), now: now)
        }
    }

    @Test("a token signed with another secret, or changed, is refused")
    func forged() {
        let other = Self.token(#"{"role":"r","aud":"employees"}"#, secret: Array("another secret of thirty-two bytes or more".utf8))
        #expect(throws: JSONWebTokenVerifier.TokenError(description: "the token's signature is wrong")) {
            try verifier.claims(of: other, now: now)
        }
        let token = Self.token(#"{"role":"r","aud":"employees"}"#)
        let parts = token.split(separator: ".")
        let changed = parts[0] + "." + Self.base64URL(#"{"role":"admin","aud":"employees"}"#) + "." + parts[2]
        #expect(throws: JSONWebTokenVerifier.TokenError.self) { try verifier.claims(of: changed, now: now) }
        #expect(throws: JSONWebTokenVerifier.TokenError.self) { try verifier.claims(of: "a.b", now: now) }
    }

    @Test("a short secret is refused; a role claim must be a name")
    func configuration() throws {
        #expect(throws: JSONWebTokenVerifier.KeyError.self) { try JSONWebTokenVerifier(key: .secret(Array("short".utf8))) }
        #expect(throws: JSONWebTokenVerifier.KeyError.self) { try JSONWebTokenVerifier(key: .publicKeyPEM("not a key")) }
        #expect(throws: JSONWebTokenVerifier.TokenError.self) { try verifier.role(in: ["role": .integer(1)]) }
        #expect(throws: JSONWebTokenVerifier.TokenError.self) { try verifier.role(in: ["role": .string("")]) }
    }
}

extension JSONWebTokenVerifier.TokenError: Equatable {
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.description == rhs.description }
}
