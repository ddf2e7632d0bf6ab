import Foundation
import HTTPTestClient
import PostgreSQL
import Testing

/// Tokens shaped as Supabase Auth, Keycloak and Auth0 issue them, signed
/// with keys made here and published in a JSON Web Key Set as those
/// providers publish theirs.
extension AuthenticationProcessTests {
    /// A role of the cluster that the server's login role may take on.
    static func makeGrantedRole(_ role: String) throws {
        let connection = try Connection(try Environment.conninfo(user: "postgres"))
        try connection.execute(
            """
            DO $$ BEGIN
                IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '\(role)') THEN CREATE ROLE \(role); END IF;
            END $$
            """)
        try connection.execute("GRANT \(role) TO employees_reader")
    }

    static func role(port: Int, token: String) throws -> String? {
        let reply = try Self.get("/whoami", port: port, authorization: "Bearer \(token)")
        #expect(reply.status == 200, "\(reply)")
        return reply.objects.first?["role"] as? String
    }

    static func startWithTokens(_ options: [String]) throws -> (run: ChildProcess, port: Int) {
        try makeDatabase()
        let folder = try Environment.folder(AuthenticationAttackTests.tokenServices)
        let run = try ProcessTests.start(["serve", "--services", folder, "--port", "0"] + options)
        return (run, try run.servingPort())
    }

    @Test("Supabase Auth: ES256 from its JWKS and HS256 from its legacy secret, role authenticated, aud authenticated")
    func supabaseTokens() throws {
        try Self.makeGrantedRole("authenticated")
        let now = Int(Date().timeIntervalSince1970)
        let issuer = "https://abcdefghijklmnop.supabase.co/auth/v1"
        let claims: [String: Any] = [
            "iss": issuer, "sub": "8ccaa7f4-2d53-4b4e-9c5b-1f0d2c6b7a11", "aud": "authenticated", "exp": now + 3600, "iat": now,
            "email": "alice@example.com", "phone": "", "app_metadata": ["provider": "email", "providers": ["email"]],
            "user_metadata": ["email_verified": true], "role": "authenticated", "aal": "aal1",
            "amr": [["method": "password", "timestamp": now]], "session_id": "0d9f4c1e-6a7b-4c3d-8e2f-1a2b3c4d5e6f", "is_anonymous": false,
        ]
        let ec = try TestSigningKey(.es256)
        var published = try ec.jsonWebKey(kid: "5f2f8b3e-6c1d-4a5b-9e7f-0a1b2c3d4e5f", alg: "ES256")
        published["key_ops"] = ["verify"]
        published["ext"] = true
        let jwks = try Self.temporaryFile(TestSigningKey.keySet([published]))
        let asymmetric = try Self.startWithTokens(["--jwt-jwks-file", jwks, "--jwt-audience", "authenticated", "--jwt-issuer", issuer])
        let token = try ec.token(header: ["kid": "5f2f8b3e-6c1d-4a5b-9e7f-0a1b2c3d4e5f"], claims: claims)
        #expect(try Self.role(port: asymmetric.port, token: token) == "authenticated")

        let secret = try TestSigningKey(.hs256)
        let legacy = try Self.startWithTokens(["--jwt-secret-file", secret.privateKeyFile, "--jwt-audience", "authenticated"])
        #expect(try Self.role(port: legacy.port, token: try secret.token(claims: claims)) == "authenticated")
    }

    @Test("Keycloak: RS256 with kid beside an encryption key, iss of the realm, the role in realm_access.roles[0] or a custom claim")
    func keycloakTokens() throws {
        let now = Int(Date().timeIntervalSince1970)
        let issuer = "http://127.0.0.1:8180/realms/notes"
        let signing = try TestSigningKey(.rs256)
        let encryption = try TestSigningKey(.rs256)
        var encryptionKey = try encryption.jsonWebKey(kid: "Xc9dQ7s0", alg: "RSA-OAEP")
        encryptionKey["use"] = "enc"
        var signingKey = try signing.jsonWebKey(kid: "lWb3nq2R", alg: "RS256")
        signingKey["x5c"] = ["MIIC…"]
        let jwks = try Self.temporaryFile(TestSigningKey.keySet([encryptionKey, signingKey]))
        let claims: [String: Any] = [
            "exp": now + 300, "iat": now, "jti": "onrtac:3f1e", "iss": issuer, "aud": "account", "sub": "f7c2a1d4",
            "typ": "Bearer", "azp": "notes-app", "sid": "b1c2", "acr": "1", "allowed-origins": ["http://127.0.0.1:3000"],
            "realm_access": ["roles": ["auth_test_alice", "offline_access", "uma_authorization"]],
            "resource_access": ["account": ["roles": ["manage-account"]]], "scope": "openid email profile",
            "email_verified": true, "preferred_username": "alice", "db_role": "auth_test_bob",
        ]
        let token = try signing.token(header: ["kid": "lWb3nq2R"], claims: claims)
        let realmRoles = try Self.startWithTokens([
            "--jwt-jwks-file", jwks, "--jwt-issuer", issuer, "--jwt-audience", "account", "--jwt-role-claim", ".realm_access.roles[0]",
        ])
        #expect(try Self.role(port: realmRoles.port, token: token) == "auth_test_alice")
        let custom = try Self.startWithTokens([
            "--jwt-jwks-file", jwks, "--jwt-issuer", issuer, "--jwt-audience", "account", "--jwt-role-claim", ".db_role",
        ])
        #expect(try Self.role(port: custom.port, token: token) == "auth_test_bob")
    }

    @Test("Auth0: RS256 with kid among two published keys, an array aud, the role in a namespaced claim")
    func auth0Tokens() throws {
        let now = Int(Date().timeIntervalSince1970)
        let current = try TestSigningKey(.rs256)
        let next = try TestSigningKey(.rs256)
        let jwks = try Self.temporaryFile(
            TestSigningKey.keySet([
                try current.jsonWebKey(kid: "NjVBRjY5MDlCMUIwNzU4RTA2QzZFMDQ4QzQ2MDAyQjVDNjk1RTM2Qg", alg: "RS256"),
                try next.jsonWebKey(kid: "b2Fy", alg: "RS256"),
            ]))
        let claims: [String: Any] = [
            "https://example.com/role": "auth_test_bob", "iss": "https://example.eu.auth0.com/", "sub": "auth0|5f7c8ec7c33c6c004bbafe82",
            "aud": ["https://notes.example.com/api", "https://example.eu.auth0.com/userinfo"], "iat": now, "exp": now + 86400,
            "azp": "4DnGrBdQ0jYbxF9T", "scope": "openid profile email",
        ]
        let server = try Self.startWithTokens([
            "--jwt-jwks-file", jwks, "--jwt-issuer", "https://example.eu.auth0.com/", "--jwt-audience", "https://notes.example.com/api",
            "--jwt-role-claim", #"."https://example.com/role""#,
        ])
        let token = try current.token(header: ["kid": "NjVBRjY5MDlCMUIwNzU4RTA2QzZFMDQ4QzQ2MDAyQjVDNjk1RTM2Qg"], claims: claims)
        #expect(try Self.role(port: server.port, token: token) == "auth_test_bob")
        #expect(try Self.role(port: server.port, token: try next.token(header: ["kid": "b2Fy"], claims: claims)) == "auth_test_bob")
    }

    @Test("a role claim path that spells no path, and two token key files at once, stop the start with a usage error")
    func tokenOptionErrors() throws {
        let key = try TestSigningKey(.edDSA)
        for options in [
            ["--jwt-public-key-file", key.publicKeyFile, "--jwt-role-claim", ".realm_access.roles["],
            ["--jwt-public-key-file", key.publicKeyFile, "--jwt-jwks-file", key.publicKeyFile],
        ] {
            let run = try ProcessTests.start(["serve", "--services", Environment.servicesFolder, "--port", "0"] + options)
            #expect(run.wait(timeout: 30) == 64, "\(options): \(run.errors)")
        }
        let notASet = try ProcessTests.start([
            "serve", "--services", Environment.servicesFolder, "--port", "0", "--jwt-jwks-file", key.publicKeyFile,
        ])
        #expect(notASet.wait(timeout: 30) == 1)
        #expect(notASet.errors.contains("not a JSON Web Key Set"), "\(notASet.errors)")
    }
}
