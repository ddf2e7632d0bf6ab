@testable import Authentication
import Foundation
import HTTPTestClient
import Testing
import WebService

/// Tokens checked against JSON Web Key Sets and public keys of each
/// algorithm, with keys `openssl` makes here; the key set's rules, and the
/// attacks on key choice (another key under a known `kid`, an algorithm
/// the key is not pinned to, a key the token carries).
@Suite("JSON Web Key Sets: RS256, ES256, EdDSA, HS256")
struct JSONWebKeySetTests {
    static var claims: [String: Any] { ["role": "payroll", "aud": "employees"] }

    static func verifier(_ keys: [[String: Any]], issuer: String? = nil) throws -> JSONWebTokenVerifier {
        try JSONWebTokenVerifier(key: .keySet(TestSigningKey.keySet(keys)), audience: "employees", issuer: issuer)
    }

    @Test(
        "a token of each algorithm is checked by the key its kid names, pinned to its alg or its type's",
        arguments: [TestSigningKey.Algorithm.rs256, .es256, .edDSA, .hs256])
    func eachAlgorithm(algorithm: TestSigningKey.Algorithm) throws {
        let key = try TestSigningKey(algorithm)
        let other = try TestSigningKey(.es256)
        let verifier = try Self.verifier([try key.jsonWebKey(kid: "mine"), try other.jsonWebKey(kid: "other")])
        let token = try key.token(header: ["kid": "mine"], claims: Self.claims)
        #expect(try verifier.role(in: verifier.claims(of: token)) == "payroll")
        // With "alg" in the key too.
        let pinned = try Self.verifier([try key.jsonWebKey(kid: "mine", alg: algorithm.rawValue)])
        #expect(try pinned.role(in: pinned.claims(of: token)) == "payroll")
        // Refused: the other key's kid, no kid among two keys, a kid the set lacks.
        for header in [["kid": "other"], [:], ["kid": "absent"], ["kid": 1]] as [[String: Any]] {
            #expect(throws: JSONWebTokenVerifier.TokenError.self, "\(header)") {
                try verifier.claims(of: try key.token(header: header, claims: Self.claims))
            }
        }
        // A set of one key takes a token without kid: the key, and so its algorithm, is still the server's.
        let single = try Self.verifier([try key.jsonWebKey(kid: "mine")])
        #expect(try single.role(in: single.claims(of: try key.token(claims: Self.claims))) == "payroll")
        if algorithm != .hs256 {
            let pem = try JSONWebTokenVerifier(
                key: .publicKeyPEM(String(contentsOfFile: key.publicKeyFile, encoding: .utf8)), audience: "employees")
            #expect(try pem.role(in: pem.claims(of: token)) == "payroll")
        }
    }

    @Test("another key under the server's kid, an algorithm its key is not pinned to, alg none, crit, or a key in the header: refused")
    func keyConfusion() throws {
        let rsa = try TestSigningKey(.rs256)
        let ec = try TestSigningKey(.es256)
        let verifier = try Self.verifier([try rsa.jsonWebKey(kid: "rsa"), try ec.jsonWebKey(kid: "ec")])
        let impostor = try TestSigningKey(.rs256)
        let forged = try impostor.token(header: ["kid": "rsa"], claims: Self.claims)
        #expect(throws: JSONWebTokenVerifier.TokenError(description: "the token's signature is wrong")) {
            try verifier.claims(of: forged)
        }
        // HS256 signed with the RSA public key's PEM, and an ES256 token on the RSA kid.
        let publicPEM = try Data(contentsOf: URL(filePath: rsa.publicKeyFile))
        let hmacHeader = TestSigningKey.base64URL(Data(#"{"alg":"HS256","kid":"rsa"}"#.utf8))
        let payload = TestSigningKey.base64URL(try JSONSerialization.data(withJSONObject: Self.claims))
        let macKey = try TestSigningKey(.hs256)
        try publicPEM.write(to: URL(filePath: macKey.privateKeyFile))
        let confused =
            "\(hmacHeader).\(payload)." + TestSigningKey.base64URL(try macKey.signature(of: Data("\(hmacHeader).\(payload)".utf8)))
        let crossed = try ec.token(header: ["kid": "rsa"], claims: Self.claims)
        for token in [confused, crossed] {
            #expect(throws: JSONWebTokenVerifier.TokenError(description: "the token is not signed with RS256")) {
                try verifier.claims(of: token)
            }
        }
        let unsigned = TestSigningKey.base64URL(Data(#"{"alg":"none","kid":"rsa"}"#.utf8)) + ".\(payload)."
        #expect(throws: JSONWebTokenVerifier.TokenError.self) { try verifier.claims(of: unsigned) }
        let critical = try rsa.token(header: ["kid": "rsa", "crit": ["exp"]], claims: Self.claims)
        #expect(throws: JSONWebTokenVerifier.TokenError.self) { try verifier.claims(of: critical) }
        // The attacker's own key in the header (jwk), and a URL to fetch one (jku): never used.
        let carried = try impostor.token(
            header: ["kid": "rsa", "jwk": try impostor.jsonWebKey(kid: "rsa"), "jku": "http://127.0.0.1:1/jwks.json"], claims: Self.claims)
        #expect(throws: JSONWebTokenVerifier.TokenError(description: "the token's signature is wrong")) {
            try verifier.claims(of: carried)
        }
    }

    @Test("iss must be the issuer's exactly when the server has one; aud a string or one of an array")
    func issuerAndAudience() throws {
        let key = try TestSigningKey(.edDSA)
        let verifier = try Self.verifier([try key.jsonWebKey(kid: "k")], issuer: "https://auth.example.com/")
        let good = try key.token(header: ["kid": "k"], claims: ["aud": ["account", "employees"], "iss": "https://auth.example.com/"])
        #expect(throws: Never.self) { try verifier.claims(of: good) }
        for claims in [
            ["aud": "employees"], ["aud": "employees", "iss": "https://auth.example.com"],
            ["aud": "employees", "iss": "https://evil.example.com/"], ["aud": "account", "iss": "https://auth.example.com/"],
        ] as [[String: Any]] {
            #expect(throws: JSONWebTokenVerifier.TokenError.self, "\(claims)") {
                try verifier.claims(of: try key.token(header: ["kid": "k"], claims: claims))
            }
        }
    }

    @Test("keys for encryption or of other algorithms are left out; a set that cannot be used says which key and why")
    func keySetRules() throws {
        let rsa = try TestSigningKey(.rs256)
        let ec = try TestSigningKey(.es256)
        var encryption = try rsa.jsonWebKey(kid: "enc", alg: "RSA-OAEP")
        encryption["use"] = "enc"
        var ps256 = try rsa.jsonWebKey(kid: "ps", alg: "PS256")
        ps256["use"] = "sig"
        var keys = try JSONWebKeySet.keys(json: TestSigningKey.keySet([encryption, ps256, try ec.jsonWebKey(kid: "ec")]))
        #expect(keys.map(\.id) == ["ec"])
        #expect(keys.map(\.algorithm) == [.es256])
        var verifyOnly = try ec.jsonWebKey(kid: "ops")
        verifyOnly["key_ops"] = ["verify"]
        keys = try JSONWebKeySet.keys(json: TestSigningKey.keySet([verifyOnly]))
        #expect(keys.count == 1)

        var withPrivate = try ec.jsonWebKey(kid: "leak")
        withPrivate["d"] = "AAAA"
        var notOnCurve = try ec.jsonWebKey(kid: "bent")
        notOnCurve["y"] = notOnCurve["x"]
        let short = try ToolProcess.run("/usr/bin/openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"])
        let shortFile = FileManager.default.temporaryDirectory.appending(path: "short-\(UUID().uuidString).pem").path
        try short.write(to: URL(filePath: shortFile))
        let shortPublic = String(decoding: try ToolProcess.run("/usr/bin/openssl", ["pkey", "-in", shortFile, "-pubout"]), as: UTF8.self)
        let cases: [(String, String)] = [
            ("{}", "not a JSON Web Key Set"),
            (TestSigningKey.keySet([encryption]), "no key for signatures"),
            (
                TestSigningKey.keySet([try ec.jsonWebKey(kid: "a", alg: "RS256")]),
                "key 1 (kid a): alg RS256 cannot be checked with a key of kty EC"
            ),
            (TestSigningKey.keySet([withPrivate]), "key 1 (kid leak): it holds the private member d"),
            (TestSigningKey.keySet([notOnCurve]), "key 1 (kid bent): x and y are not a point of P-256"),
            (
                TestSigningKey.keySet([try ec.jsonWebKey(kid: "a"), try rsa.jsonWebKey(kid: "a")]),
                "key 2 (kid a): its kid is another key's too"
            ),
            (TestSigningKey.keySet([try ec.jsonWebKey(kid: "a"), try rsa.jsonWebKey(kid: nil)]), "needs a kid on each"),
            (TestSigningKey.keySet([["kty": "oct", "k": "c2hvcnQ"]]), "at least 32 bytes"),
        ]
        for (json, reason) in cases {
            let error = #expect(throws: JSONWebTokenVerifier.KeyError.self) { try JSONWebKeySet.keys(json: json) }
            #expect(error?.description.contains(reason) == true, "\(error?.description ?? "accepted"), not \(reason)")
        }
        let error = #expect(throws: JSONWebTokenVerifier.KeyError.self) { try JSONWebTokenVerifier(key: .publicKeyPEM(shortPublic)) }
        #expect(error?.description.contains("1024 bits") == true, "\(error?.description ?? "accepted")")
    }

    @Test("role claim paths in PostgREST's syntax: nested members, quoted names, array elements; a bad path is none")
    func claimPaths() throws {
        let claims: JSONValue.Members = [
            "role": "plain", "app_metadata": ["role": "payroll"], "realm_access": ["roles": ["reader", "writer"]],
            "https://example.com/role": "namespaced", "a.b": "dotted",
        ]
        let paths: [(String, JSONValue?)] = [
            ("role", "plain"), (".role", "plain"), (".app_metadata.role", "payroll"), (".realm_access.roles[1]", "writer"),
            (".realm_access.roles[2]", nil), (#"."https://example.com/role""#, "namespaced"), ("https://example.com/role", "namespaced"),
            (#"."a.b""#, "dotted"), (".app_metadata[0]", nil), (".missing.role", nil),
        ]
        for (text, value) in paths {
            let path = try #require(JSONWebTokenVerifier.ClaimPath(text), "\(text)")
            #expect(path.value(in: claims) == value, "\(text)")
        }
        for text in ["", ".", "..a", ".a[", ".a[x]", ".a[]", #"."unclosed"#, #".a"b""#, "[0]", ".a]", ".a[1234567890]"] {
            #expect(JSONWebTokenVerifier.ClaimPath(text) == nil, "\(text)")
        }
    }

    @Test("base64url in JSON Web Tokens has one spelling: no padding, no other character, the unused bits zero")
    func canonicalBase64() {
        #expect(Base64.decode(Array("YQ".utf8), .url, canonical: true) == [0x61])
        #expect(Base64.decode(Array("YWI".utf8), .url, canonical: true) == [0x61, 0x62])
        for variant in ["YR", "YQ==", "YQ=", "YWJ", "Y Q", "YQ\n", "Y+", "Y"] {
            #expect(Base64.decode(Array(variant.utf8), .url, canonical: true) == nil, "\(variant)")
        }
        // The lenient reading (basic credentials, password hashes) keeps taking them.
        #expect(Base64.decode(Array("YR".utf8), .url) == [0x61])
        #expect(Base64.decode(Array("YQ==".utf8), .standard) == [0x61])
    }
}
