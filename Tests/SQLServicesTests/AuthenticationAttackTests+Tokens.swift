import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPTestClient
import Testing

/// Bearer tokens under attack, against `sql-rest` with a JSON Web Key Set
/// made here: another key under the server's `kid`, an algorithm the key
/// is not pinned to, a wrong issuer or audience, an expired token, a key
/// removed by a reload; and variants of a valid token's base64url.
extension AuthenticationProcessTests.AuthenticationAttackTests {
    /// The notes, and `GET /whoami`: the role a request acts as.
    static let tokenServices = Auth.services.merging([
        "whoami/role.sql": """
        -- GET /whoami
        -- The role the request acts as.
        SELECT current_user AS role;
        """
    ]) { $1 }

    static func whoami(port: Int, token: String) throws -> (status: Int, role: String?) {
        let reply = try Auth.get("/whoami", port: port, authorization: "Bearer \(token)")
        return (reply.status, reply.objects.first?["role"] as? String)
    }

    @Test(
        "a JWKS server refuses another key under its kid, HS256 signed with its RSA public key, ES256 on an RSA kid, a wrong iss or aud, an expired token, and a key SIGHUP removed"
    )
    func keySetAttacks() throws {
        try Auth.makeDatabase()
        let folder = try Environment.folder(Self.tokenServices)
        let rsa = try TestSigningKey(.rs256)
        let ec = try TestSigningKey(.es256)
        let jwks = try Auth.temporaryFile(TestSigningKey.keySet([try rsa.jsonWebKey(kid: "rsa-1"), try ec.jsonWebKey(kid: "ec-1")]))
        let issuer = "https://auth.example.com/realms/notes"
        let run = try ProcessTests.start([
            "serve", "--services", folder, "--port", "0", "--jwt-jwks-file", jwks, "--jwt-issuer", issuer,
            "--jwt-audience", "notes",
        ])
        let port = try run.servingPort()
        let now = Int(Date().timeIntervalSince1970)
        let claims: [String: Any] = ["role": "auth_test_alice", "iss": issuer, "aud": "notes", "exp": now + 600]

        for (key, kid) in [(rsa, "rsa-1"), (ec, "ec-1")] {
            let valid = try Self.whoami(port: port, token: try key.token(header: ["kid": kid], claims: claims))
            #expect(valid.status == 200 && valid.role == "auth_test_alice", "\(kid): \(valid)")
        }
        let impostor = try TestSigningKey(.rs256)
        let macKey = try TestSigningKey(.hs256)
        try Data(contentsOf: URL(filePath: rsa.publicKeyFile)).write(to: URL(filePath: macKey.privateKeyFile))
        let payload = try rsa.token(claims: claims).split(separator: ".")[1]
        let attacks: [(String, String)] = [
            ("another key under the RSA kid", try impostor.token(header: ["kid": "rsa-1"], claims: claims)),
            ("HS256 with the RSA public key as its secret", try macKey.token(header: ["kid": "rsa-1"], claims: claims)),
            ("ES256 on the RSA kid", try ec.token(header: ["kid": "rsa-1"], claims: claims)),
            ("RS256 on the EC kid", try rsa.token(header: ["kid": "ec-1"], claims: claims)),
            ("no kid, two keys", try rsa.token(claims: claims)),
            ("an unknown kid", try rsa.token(header: ["kid": "rsa-2"], claims: claims)),
            ("alg none", TestSigningKey.base64URL(Data(#"{"alg":"none","kid":"rsa-1"}"#.utf8)) + "." + String(payload) + "."),
            (
                "a wrong iss",
                try rsa.token(header: ["kid": "rsa-1"], claims: claims.merging(["iss": "https://evil.example.com/realms/notes"]) { $1 })
            ),
            ("no iss", try rsa.token(header: ["kid": "rsa-1"], claims: claims.filter { $0.key != "iss" })),
            ("a wrong aud", try rsa.token(header: ["kid": "rsa-1"], claims: claims.merging(["aud": ["account", "billing"]]) { $1 })),
            ("expired", try rsa.token(header: ["kid": "rsa-1"], claims: claims.merging(["exp": now - 600]) { $1 })),
            (
                "the attacker's key in the header",
                try impostor.token(header: ["kid": "rsa-1", "jwk": try impostor.jsonWebKey(kid: "rsa-1")], claims: claims)
            ),
        ]
        for (attack, token) in attacks {
            let reply = try Self.whoami(port: port, token: token)
            #expect(reply.status == 401, "\(attack): \(reply)")
        }

        // The EC key leaves the set: its tokens are refused after SIGHUP, the RSA key's still pass.
        let ecToken = try ec.token(header: ["kid": "ec-1"], claims: claims)
        let rsaToken = try rsa.token(header: ["kid": "rsa-1"], claims: claims)
        try TestSigningKey.keySet([try rsa.jsonWebKey(kid: "rsa-1")]).write(toFile: jwks, atomically: true, encoding: .utf8)
        run.send(SIGHUP)
        #expect(run.waitUntilPrinted { $0.contains("Reloaded the authentication files") })
        #expect(try Self.whoami(port: port, token: ecToken).status == 401)
        #expect(try Self.whoami(port: port, token: rsaToken).status == 200)
        // A set that does not load is logged, and the keys in force stay.
        try #"{"keys": [{"kty": "RSA", "kid": "rsa-1", "n": "AQAB", "e": "AQAB"}]}"#.write(toFile: jwks, atomically: true, encoding: .utf8)
        run.send(SIGHUP)
        #expect(run.waitUntilPrinted { $0.contains("were not reloaded") && $0.contains("rsa-1") })
        #expect(try Self.whoami(port: port, token: rsaToken).status == 200)
    }

    @Test("one token, one spelling: its signature with other unused bits, or with padding, is refused; the canonical one passes")
    func tokenSpellings() throws {
        try Auth.makeDatabase()
        let folder = try Environment.folder(Self.tokenServices)
        let key = try TestSigningKey(.hs256)
        let run = try ProcessTests.start(["serve", "--services", folder, "--port", "0", "--jwt-secret-file", key.privateKeyFile])
        let port = try run.servingPort()
        let token = try key.token(claims: ["role": "auth_test_alice"])
        #expect(try Self.whoami(port: port, token: token).status == 200)
        let parts = token.split(separator: ".").map(String.init)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        /// `part` with its last character's unused low bits set to `bits` (the same bytes, spelt otherwise).
        func respelt(_ part: String, _ bits: Int) -> String {
            let unused = [0: 0, 2: 4, 3: 2][part.count % 4]!  // 2 characters carry 1 byte (4 bits spare), 3 carry 2 (2 spare)
            let value = alphabet.firstIndex(of: part.last!)!
            return String(part.dropLast()) + String(alphabet[(value & ~((1 << unused) - 1)) | (bits & ((1 << unused) - 1))])
        }
        let signature = parts[2]
        #expect(signature.count % 4 != 0, "an HS256 signature (32 bytes) has 43 characters, 2 bits unused")
        var variants: [String] = []
        for bits in 1...3 { variants.append(respelt(signature, bits)) }
        variants += [signature + "=", signature + "=="]
        for variant in variants {
            let spelt = [parts[0], parts[1], variant].joined(separator: ".")
            #expect(spelt != token)
            if let bytes = Data(
                base64Encoded: variant.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "=")
            {
                #expect(
                    bytes
                        == Data(
                            base64Encoded: signature.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "="
                        ))
            }
            let reply = try Self.whoami(port: port, token: spelt)
            #expect(reply.status == 401, "\(Array(variant.suffix(3))): \(reply)")
        }
        // The header and claims respelt change what was signed: refused as well.
        for index in 0..<2 where parts[index].count % 4 != 0 {
            var respeltParts = parts
            respeltParts[index] = respelt(parts[index], 1)
            #expect(try Self.whoami(port: port, token: respeltParts.joined(separator: ".")).status == 401)
            respeltParts[index] = parts[index] + "="
            #expect(try Self.whoami(port: port, token: respeltParts.joined(separator: ".")).status == 401)
        }
        #expect(try Self.whoami(port: port, token: token).status == 200)
    }
}
