import Foundation
import HTTPTestClient
import PostgreSQL
import Testing

/// `sql-rest` run with each authentication scheme over a table of its
/// own, `auth_test.notes`, whose row-level security shows each role its
/// own notes: 401 without or with a bad credential, 403 for a role without
/// the grant (or one the server may not take on), 200 with the role's rows.
/// Then HTTPS with a self-signed certificate made here, and `sslmode`.
///
/// The server logs in as `employees_reader`, a member of the roles it
/// switches to, with no grant on the table itself.
@Suite("sql-rest authentication, roles and TLS", .serialized)
struct AuthenticationProcessTests {
    static let services = [
        "notes/list.sql": """
        -- GET /notes
        -- Lists the notes the caller may read.
        -- @service Notes, each readable by its owner only.
        SELECT id, owner, body FROM auth_test.notes ORDER BY id;
        """,
        "notes/note.sql": """
        -- GET /notes/{id}
        -- Returns one note.
        -- @param id The note's number.
        -- @notfound There is no note {id}.
        SELECT id, owner, body FROM auth_test.notes WHERE id = :id;
        """,
    ]

    /// The roles, the table and its policy; made again by each test (roles are the cluster's, kept).
    static func makeDatabase() throws {
        let connection = try Connection(try Environment.conninfo(user: "postgres"))
        for role in ["auth_test_alice", "auth_test_bob", "auth_test_denied", "auth_test_stranger", "auth_password_user"] {
            try connection.execute(
                """
                DO $$ BEGIN
                    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '\(role)') THEN CREATE ROLE \(role); END IF;
                END $$
                """)
        }
        for statement in [
            "ALTER ROLE auth_password_user LOGIN PASSWORD 'carol-secret'",
            "ALTER ROLE auth_test_bob LOGIN",  // trusted by pg_hba.conf: no password proves it
            // The server's login role may take on every role but the stranger.
            "GRANT auth_test_alice, auth_test_bob, auth_test_denied, auth_password_user TO employees_reader",
            "DROP SCHEMA IF EXISTS auth_test CASCADE",
            "CREATE SCHEMA auth_test",
            "GRANT USAGE ON SCHEMA auth_test TO PUBLIC",
            "CREATE TABLE auth_test.notes (id int PRIMARY KEY, owner text NOT NULL, body text NOT NULL)",
            """
            INSERT INTO auth_test.notes VALUES (1, 'auth_test_alice', 'first'), (2, 'auth_test_alice', 'second'),
                (3, 'auth_test_bob', 'third'), (4, 'auth_password_user', 'fourth')
            """,
            "ALTER TABLE auth_test.notes ENABLE ROW LEVEL SECURITY",
            "CREATE POLICY own_notes ON auth_test.notes USING (owner = current_user)",
            "GRANT SELECT ON auth_test.notes TO auth_test_alice, auth_test_bob, auth_password_user",
        ] {
            try connection.execute(statement)
        }
    }

    /// A folder with the service files, the database made.
    static func prepare() throws -> String {
        try makeDatabase()
        return try Environment.folder(services)
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// A JSON Web Token of `claims`, signed by `openssl` (HS256 with the
    /// secret's file, or RS256 with the private key's).
    static func token(_ claims: [String: Any], hmacSecretFile: String? = nil, rsaKeyFile: String? = nil) throws -> String {
        let header = base64URL(try JSONSerialization.data(withJSONObject: ["alg": rsaKeyFile == nil ? "HS256" : "RS256", "typ": "JWT"]))
        let payload = base64URL(try JSONSerialization.data(withJSONObject: claims))
        let signed = Data("\(header).\(payload)".utf8)
        let signature: Data
        if let rsaKeyFile {
            signature = try ToolProcess.run("/usr/bin/openssl", ["dgst", "-sha256", "-binary", "-sign", rsaKeyFile], input: signed)
        } else {
            let secret = try String(contentsOfFile: hmacSecretFile!, encoding: .utf8)
            signature = try ToolProcess.run("/usr/bin/openssl", ["dgst", "-sha256", "-binary", "-hmac", secret], input: signed)
        }
        return "\(header).\(payload).\(base64URL(signature))"
    }

    static func get(_ target: String, port: Int, authorization: String? = nil) throws -> TestClient.Response {
        try TestClient.request("GET", target, port: port, headers: authorization.map { [("Authorization", $0)] } ?? [])
    }

    static func basic(_ user: String, _ password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    static func owners(_ response: TestClient.Response) -> [String] {
        response.objects.compactMap { $0["owner"] as? String }
    }

    static func temporaryFile(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appending(path: "auth-\(UUID().uuidString)").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    // MARK: - Bearer tokens

    @Test(
        "HS256 tokens: 401 without, expired, forged, for another audience; 403 without grant or for a role the server cannot take; RLS rows"
    )
    func hs256() throws {
        let folder = try Self.prepare()
        let secretFile = try Self.temporaryFile(Data((0..<48).map { _ in UInt8.random(in: 0...255) }).base64EncodedString())
        let run = try ProcessTests.start([
            "serve", "--services", folder, "--port", "0", "--jwt-secret-file", secretFile, "--jwt-audience", "notes",
        ])
        let port = try run.servingPort()
        func token(_ claims: [String: Any]) throws -> String { try Self.token(claims, hmacSecretFile: secretFile) }
        let now = Int(Date().timeIntervalSince1970)

        let missing = try Self.get("/notes", port: port)
        #expect(missing.status == 401)
        #expect(missing.header("Content-Type") == "application/problem+json")
        #expect(missing.header("WWW-Authenticate") == #"Bearer realm="sql-rest""#)
        #expect(try Self.get("/health/live", port: port).status == 204)

        let alice = try token(["role": "auth_test_alice", "aud": "notes", "exp": now + 600])
        for bad in [
            try token(["role": "auth_test_alice", "aud": "notes", "exp": now - 600]),
            try token(["role": "auth_test_alice", "aud": "notes", "nbf": now + 600]),
            try token(["role": "auth_test_alice", "aud": "elsewhere"]),
            try token(["role": "auth_test_alice"]),
            alice.dropLast(2) + "AA",
            "not.a.token",
        ] {
            let reply = try Self.get("/notes", port: port, authorization: "Bearer \(bad)")
            #expect(reply.status == 401, "\(reply)")
            #expect(reply.header("WWW-Authenticate")?.contains(#"error="invalid_token""#) == true)
        }

        let list = try Self.get("/notes", port: port, authorization: "Bearer \(alice)")
        #expect(list.status == 200)
        #expect(Self.owners(list) == ["auth_test_alice", "auth_test_alice"])
        #expect(try Self.get("/notes/1", port: port, authorization: "Bearer \(alice)").object["body"] as? String == "first")
        #expect(try Self.get("/notes/3", port: port, authorization: "Bearer \(alice)").status == 404)  // bob's row

        let bob = try token(["role": "auth_test_bob", "aud": ["other", "notes"]])
        #expect(Self.owners(try Self.get("/notes", port: port, authorization: "Bearer \(bob)")) == ["auth_test_bob"])
        #expect(try Self.get("/notes/3", port: port, authorization: "Bearer \(bob)").status == 200)

        for role in ["auth_test_denied", "auth_test_stranger", "no_such_role"] {
            let roleToken = try token(["role": role, "aud": "notes"])
            for target in ["/notes", "/notes/1"] {
                let reply = try Self.get(target, port: port, authorization: "Bearer \(roleToken)")
                #expect(reply.status == 403, "\(role) \(target): \(reply)")
            }
        }
        // The pipeline's connections are clean after the refusals.
        #expect(try Self.get("/notes/2", port: port, authorization: "Bearer \(alice)").status == 200)
        #expect(!run.errors.contains(alice), "no token in the log")
    }

    @Test("RS256 tokens from a key pair made here; an HS256 token signed with the public key is refused")
    func rs256() throws {
        let folder = try Self.prepare()
        let directory = FileManager.default.temporaryDirectory.appending(path: "auth-rsa-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let privateKey = directory + "/private.pem"
        let publicKey = directory + "/public.pem"
        _ = try ToolProcess.run(
            "/usr/bin/openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", privateKey])
        _ = try ToolProcess.run("/usr/bin/openssl", ["pkey", "-in", privateKey, "-pubout", "-out", publicKey])
        let run = try ProcessTests.start([
            "serve", "--services", folder, "--port", "0", "--jwt-public-key-file", publicKey,
            "--jwt-role-claim", "db_role",
        ])
        let port = try run.servingPort()

        let alice = try Self.token(["db_role": "auth_test_alice"], rsaKeyFile: privateKey)
        let list = try Self.get("/notes", port: port, authorization: "Bearer \(alice)")
        #expect(list.status == 200)
        #expect(Self.owners(list) == ["auth_test_alice", "auth_test_alice"])
        #expect(
            try Self.get(
                "/notes", port: port, authorization: "Bearer \(try Self.token(["db_role": "auth_test_denied"], rsaKeyFile: privateKey))"
            ).status == 403)
        // The classic confusion: the public key used as an HMAC secret.
        let confused = try Self.token(["db_role": "auth_test_alice"], hmacSecretFile: publicKey)
        #expect(try Self.get("/notes", port: port, authorization: "Bearer \(confused)").status == 401)
        // A token without the role claim, and no anonymous role: 401.
        #expect(
            try Self.get("/notes", port: port, authorization: "Bearer \(try Self.token(["sub": "x"], rsaKeyFile: privateKey))").status
                == 401)
    }

    // MARK: - Basic

    @Test("basic against a password file from hash-password, users mapped to roles; anonymous requests take the anonymous role")
    func basicFile() throws {
        let folder = try Self.prepare()
        let bobEntry = String(
            decoding: try ToolProcess.run(
                ProcessTests.executable, ["hash-password", "bob", "--iterations", "1000"],
                input: Data("bob's password\n".utf8)), as: UTF8.self)
        #expect(bobEntry.hasPrefix("bob:$pbkdf2-sha256$1000$"))
        let deniedEntry = String(
            decoding: try ToolProcess.run(
                ProcessTests.executable, ["hash-password", "dan", "--iterations", "1000"],
                input: Data("dan's password\n".utf8)), as: UTF8.self)
        let passwords = try Self.temporaryFile("# users\n" + bobEntry + deniedEntry)
        let roles = try Self.temporaryFile("bob:auth_test_bob\ndan:auth_test_denied\n")
        let run = try ProcessTests.start([
            "serve", "--services", folder, "--port", "0", "--auth-basic-file", passwords,
            "--role-map", roles, "--anonymous-role", "auth_test_alice",
        ])
        let port = try run.servingPort()

        let bob = try Self.get("/notes", port: port, authorization: Self.basic("bob", "bob's password"))
        #expect(bob.status == 200)
        #expect(Self.owners(bob) == ["auth_test_bob"])
        // Remembered: the second is served without checking the hash again.
        #expect(try Self.get("/notes/3", port: port, authorization: Self.basic("bob", "bob's password")).status == 200)
        for (user, password) in [("bob", "wrong"), ("nobody", "bob's password"), ("bob", "")] {
            let reply = try Self.get("/notes", port: port, authorization: Self.basic(user, password))
            #expect(reply.status == 401)
            #expect(reply.header("WWW-Authenticate") == #"Basic realm="sql-rest", charset="UTF-8""#)
        }
        #expect(try Self.get("/notes", port: port, authorization: "Basic !!!").status == 401)
        #expect(try Self.get("/notes", port: port, authorization: "Bearer abc").status == 401)  // not a scheme here
        #expect(try Self.get("/notes", port: port, authorization: Self.basic("dan", "dan's password")).status == 403)
        // No credentials: the anonymous role's rows.
        #expect(Self.owners(try Self.get("/notes", port: port)) == ["auth_test_alice", "auth_test_alice"])
        #expect(!run.errors.contains("bob's password"))
    }

    @Test("basic against PostgreSQL: the role's own login; a role that logs in without a password is refused")
    func basicPostgres() throws {
        let folder = try Self.prepare()
        let run = try ProcessTests.start(["serve", "--services", folder, "--port", "0", "--auth-basic-postgres", "true"])
        let port = try run.servingPort()
        let carol = try Self.get("/notes", port: port, authorization: Self.basic("auth_password_user", "carol-secret"))
        // 401 here: the cluster lacks pg_hba.conf's password rule for auth_password_user, which `scripts/pg-cluster start` adds.
        #expect(carol.status == 200, "\(carol) (scripts/pg-cluster start adds the pg_hba.conf rule this test needs)")
        #expect(Self.owners(carol) == ["auth_password_user"])
        #expect(try Self.get("/notes", port: port, authorization: Self.basic("auth_password_user", "wrong")).status == 401)
        #expect(try Self.get("/notes", port: port, authorization: Self.basic("auth_test_bob", "anything")).status == 401)
        #expect(try Self.get("/notes", port: port, authorization: Self.basic("no_such_role", "x")).status == 401)
        #expect(try Self.get("/notes", port: port).status == 401)
    }

    // MARK: - Discovery

    @Test("rpc.discover declares the credentials as /openapi.json does: x-securitySchemes and x-security, {} with an anonymous role")
    func openRPCSecurity() throws {
        let folder = try Self.prepare()
        let entry = String(
            decoding: try ToolProcess.run(
                ProcessTests.executable, ["hash-password", "alice", "--iterations", "1000"], input: Data("alice's password\n".utf8)),
            as: UTF8.self)
        let passwords = try Self.temporaryFile(entry)
        let secret = try TestSigningKey(.hs256)
        for anonymous in [[], ["--anonymous-role", "auth_test_bob"]] {
            let run = try ProcessTests.start(
                ["serve", "--services", folder, "--port", "0", "--auth-basic-file", passwords, "--jwt-secret-file", secret.privateKeyFile]
                    + anonymous)
            let port = try run.servingPort()
            let token = "Bearer " + (try secret.token(claims: ["role": "auth_test_alice"]))
            let openAPI = try TestClient.request("GET", "/openapi.json", port: port, headers: [("Authorization", token)]).object
            let discover = try TestClient.request(
                "POST", "/jsonrpc", port: port, headers: [("Content-Type", "application/json"), ("Authorization", token)],
                body: Array(#"{"jsonrpc":"2.0","method":"rpc.discover","id":1}"#.utf8))
            let openRPC = try #require(discover.object["result"] as? [String: Any], "\(discover)")
            let schemes = try #require(openRPC["x-securitySchemes"] as? NSDictionary, "\(openRPC.keys)")
            let openAPISchemes = try #require((openAPI["components"] as? [String: Any])?["securitySchemes"] as? NSDictionary)
            #expect(schemes == openAPISchemes)
            #expect(schemes["basic"] as? NSDictionary == ["type": "http", "scheme": "basic"])
            #expect(schemes["bearer"] as? NSDictionary == ["type": "http", "scheme": "bearer", "bearerFormat": "JWT"])
            let security = try #require(openRPC["x-security"] as? NSArray)
            #expect(security == openAPI["security"] as? NSArray)
            let expected: NSArray = anonymous.isEmpty ? [["basic": []], ["bearer": []]] : [["basic": []], ["bearer": []], [:]]
            #expect(security == expected)
            // What it declares holds: without credentials, 401 unless anonymous requests are served.
            let bare = try TestClient.request(
                "POST", "/jsonrpc", port: port, headers: [("Content-Type", "application/json")],
                body: Array(#"{"jsonrpc":"2.0","method":"rpc.discover","id":1}"#.utf8))
            #expect(bare.status == (anonymous.isEmpty ? 401 : 200), "\(bare)")
        }
    }

    // MARK: - TLS and sslmode

    @Test("HTTPS with a self-signed certificate made here: curl's handshake and request, trusting only that certificate")
    func tls() throws {
        let folder = try Self.prepare()
        let directory = FileManager.default.temporaryDirectory.appending(path: "auth-tls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let certificate = directory + "/cert.pem"
        let key = directory + "/key.pem"
        _ = try ToolProcess.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "1",
                "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            ])
        let run = try ProcessTests.start([
            "serve", "--services", folder, "--port", "0", "--tls-cert", certificate, "--tls-key", key,
            "--anonymous-role", "auth_test_bob",
        ])
        var port: Int?
        _ = run.waitUntilPrinted { text in
            port = text.firstMatch(of: /Serving https:\/\/127\.0\.0\.1:(\d+)\//).flatMap { Int($0.1) }
            return port != nil
        }
        let tlsPort = try #require(port, "\(run.errors)")
        let body = try ToolProcess.run(
            "/usr/bin/curl",
            [
                "--silent", "--show-error", "--fail", "--cacert", certificate,
                "https://127.0.0.1:\(tlsPort)/notes",
            ])
        let notes = try JSONReader.value(body) as? [[String: Any]]
        #expect(notes?.compactMap { $0["owner"] as? String } == ["auth_test_bob"])
        // An anonymous role alone: credentials are ignored, as without authentication.
        let withCredentials = try ToolProcess.run(
            "/usr/bin/curl",
            [
                "--silent", "--show-error", "--fail", "--cacert", certificate,
                "--user", "anyone:anything", "https://127.0.0.1:\(tlsPort)/notes",
            ])
        #expect(withCredentials == body)
        // Plain HTTP gets no answer, and an untrusted certificate fails the handshake.
        #expect(throws: (any Error).self) {
            try ToolProcess.run("/usr/bin/curl", ["--silent", "--fail", "http://127.0.0.1:\(tlsPort)/notes"])
        }
        #expect(throws: (any Error).self) {
            try ToolProcess.run("/usr/bin/curl", ["--silent", "--fail", "https://127.0.0.1:\(tlsPort)/notes"])
        }
    }

    @Test("--database-sslmode reaches libpq: require fails against the test cluster (no SSL), disable works")
    func sslMode() throws {
        // Over TCP: libpq uses no SSL on a Unix socket, whatever sslmode says.
        let url =
            "postgresql://employees_reader@127.0.0.1:\(try Environment.variable("PGPORT"))/\(try Environment.variable("EMPLOYEES_DATABASE"))"
        let required = try ProcessTests.start([
            "serve", "--services", Environment.servicesFolder, "--port", "0",
            "--database-url", url, "--database-sslmode", "require",
        ])
        // Loading the services needs the database: with sslmode=require the server cannot start.
        #expect(required.wait(timeout: 30) == 1)
        #expect(required.errors.contains("SSL"), "\(required.errors)")
        let disabled = try ProcessTests.start([
            "serve", "--services", Environment.servicesFolder, "--port", "0",
            "--database-url", url + "?connect_timeout=10", "--database-sslmode", "disable",
        ])
        let port = try disabled.servingPort()
        #expect(try Self.get("/health/ready", port: port).status == 204)
    }
}
