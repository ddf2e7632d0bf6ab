import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPTestClient
import Locking
import PostgreSQL
import Testing

/// Authentication tried as an attacker would, against the real server:
/// each test breaks one rule on a server without it (the role dropped by
/// JSON-RPC, an empty password, a flood of password checks, bodies read
/// before the 401, a form posted from another site, a role named `none`,
/// a slow reader holding a database connection).
///
/// Nested in ``AuthenticationProcessTests``, whose serialization then
/// covers both: they make the same schema and roles again for each test.
extension AuthenticationProcessTests {
    @Suite("Authentication under attack", .serialized)
    struct AuthenticationAttackTests {
        typealias Auth = AuthenticationProcessTests

        /// The notes of ``AuthenticationProcessTests``, a write, and the session's settings.
        static let services = Auth.services.merging([
            "notes/add.sql": """
            -- POST /notes
            -- Adds a note of the caller's.
            -- @param id The note's number.
            -- @param body Its text.
            INSERT INTO auth_test.notes (id, owner, body) VALUES (:id, current_user, :body) RETURNING id, owner, body;
            """,
            "settings/idle.sql": """
            -- GET /settings/idle
            -- The session's idle_in_transaction_session_timeout.
            SELECT current_setting('idle_in_transaction_session_timeout') AS value;
            """,
        ]) { $1 }

        static func prepare() throws -> String {
            try Auth.makeDatabase()
            let connection = try Connection(try Environment.conninfo(user: "postgres"))
            try connection.execute("GRANT INSERT ON auth_test.notes TO auth_test_alice")
            return try Environment.folder(services)
        }

        static func post(_ target: String, port: Int, _ body: String, headers: [(String, String)] = []) throws -> TestClient.Response {
            try TestClient.request(
                "POST", target, port: port, headers: [("Content-Type", "application/json")] + headers, body: Array(body.utf8))
        }

        static func noteCount(id: Int) throws -> Int {
            let connection = try Connection(try Environment.conninfo(user: "postgres"))
            let rows = try connection.query("SELECT count(*) AS n FROM auth_test.notes WHERE id = \(id)")
            defer { rows.close() }
            return try rows.next()?["n"].flatMap { Int($0) } ?? -1
        }

        // MARK: - The role on every path

        @Test("every operation answers by JSON-RPC as by REST for a role without grants: single calls, batches, HEAD")
        func everyPathKeepsTheRole() throws {
            let folder = try Self.prepare()
            try Self.makeRole("auth_test_stranger2")
            let run = try ProcessTests.start(["serve", "--services", folder, "--port", "0", "--anonymous-role", "auth_test_stranger2"])
            let port = try run.servingPort()
            let document = try TestClient.request("GET", "/openapi.json", port: port).object
            let paths = try #require(document["paths"] as? [String: [String: Any]])
            var refused = 0
            for (path, operations) in paths {
                for (method, value) in operations {
                    guard let operation = value as? [String: Any], let id = operation["operationId"] as? String else { continue }
                    let parameters = (operation["parameters"] as? [[String: Any]]) ?? []
                    var params: [String: Any] = [:]
                    var target = path
                    for parameter in parameters where parameter["required"] as? Bool == true {
                        let name = parameter["name"] as! String
                        let value: Any = (parameter["schema"] as? [String: Any])?["type"] as? String == "integer" ? 1 : "1"
                        params[name] = value
                        target = target.replacingOccurrences(of: "{\(name)}", with: "\(value)")
                    }
                    if method == "post" { params["id"] = 99; params["body"] = "x" }
                    let rest =
                        method == "post"
                        ? try Self.post(target, port: port, #"{"id":99,"body":"x"}"#)
                        : try TestClient.request(method.uppercased(), target, port: port)
                    let call = try JSONSerialization.data(withJSONObject: ["jsonrpc": "2.0", "method": id, "params": params, "id": 1])
                    let single = try Self.post("/jsonrpc", port: port, String(decoding: call, as: UTF8.self))
                    let batch = try Self.post("/jsonrpc", port: port, "[" + String(decoding: call, as: UTF8.self) + "]")
                    let singleStatus = ((single.object["error"] as? [String: Any])?["data"] as? [String: Any])?["status"] as? Int ?? 200
                    let batchEntry = (try batch.json() as? [[String: Any]])?.first
                    let batchStatus = ((batchEntry?["error"] as? [String: Any])?["data"] as? [String: Any])?["status"] as? Int ?? 200
                    let restStatus = (200..<300).contains(rest.status) ? 200 : rest.status
                    #expect(singleStatus == restStatus, "\(id): JSON-RPC \(single), REST \(rest)")
                    #expect(batchStatus == restStatus, "\(id) in a batch: \(batch), REST \(rest)")
                    if method == "get" {
                        let head = try TestClient.request("HEAD", target, port: port)
                        #expect(head.status == rest.status, "HEAD \(target): \(head.status), GET \(rest.status)")
                    }
                    if restStatus == 403 { refused += 1 }
                }
            }
            #expect(refused >= 3, "the role's refusals show: \(refused)")
        }

        @Test("a JSON-RPC notification writes as the caller's role: refused for a role without the grant, as alice for alice")
        func notificationsKeepTheRole() throws {
            let folder = try Self.prepare()
            let secretFile = try Auth.temporaryFile(String(repeating: "k", count: 48))
            let run = try ProcessTests.start([
                "serve", "--services", folder, "--port", "0", "--jwt-secret-file", secretFile,
                "--anonymous-role", "auth_test_bob",
            ])
            let port = try run.servingPort()
            let notification = #"{"jsonrpc":"2.0","method":"notes.post","params":{"id":50,"body":"by bob"}}"#
            #expect(try Self.post("/jsonrpc", port: port, notification).status == 204)
            #expect(try Self.noteCount(id: 50) == 0, "bob has no INSERT grant: nothing written")
            let alice = try Auth.token(["role": "auth_test_alice"], hmacSecretFile: secretFile)
            let batch = #"[{"jsonrpc":"2.0","method":"notes.post","params":{"id":51,"body":"by alice"}}]"#
            #expect(try Self.post("/jsonrpc", port: port, batch, headers: [("Authorization", "Bearer \(alice)")]).status == 204)
            let connection = try Connection(try Environment.conninfo(user: "postgres"))
            let rows = try connection.query("SELECT owner FROM auth_test.notes WHERE id = 51")
            let owner = try rows.next()?["owner"]
            rows.close()
            #expect(owner == "auth_test_alice")
        }

        static func makeRole(_ role: String) throws {
            let connection = try Connection(try Environment.conninfo(user: "postgres"))
            try connection.execute(
                """
                DO $$ BEGIN
                    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '\(role)') THEN CREATE ROLE \(role); END IF;
                END $$
                """)
            try connection.execute("GRANT \(role) TO employees_reader")
        }

        // MARK: - Passwords

        @Test("--auth-basic-postgres: an empty password, or one cut by a NUL, never logs in with the server's own password")
        func emptyPasswords() throws {
            let folder = try Self.prepare()
            let conninfo = try Environment.conninfo(user: "auth_password_user") + " password=carol-secret"
            let run = try ProcessTests.start([
                "serve", "--services", folder, "--port", "0", "--auth-basic-postgres", "true",
                "--database-url", conninfo,
            ])
            let port = try run.servingPort()
            #expect(try Auth.get("/notes", port: port, authorization: Auth.basic("auth_password_user", "carol-secret")).status == 200)
            for password in ["", "\u{0}", "carol-secret\u{0}x", "\u{0}carol-secret"] {
                let reply = try Auth.get("/notes", port: port, authorization: Auth.basic("auth_password_user", password))
                #expect(reply.status == 401, "password \(Array(password.utf8)): \(reply)")
            }
            let nulUser = try Auth.get("/notes", port: port, authorization: Auth.basic("auth_password_user\u{0}x", "carol-secret"))
            #expect(nulUser.status == 401)
        }

        /// A server with a password file of alice's (600,000 rounds), her role, and HS256 tokens.
        struct PasswordServer {
            let run: ChildProcess
            let port: Int
            let secretFile: String
        }

        static func passwordServer() throws -> PasswordServer {
            let folder = try Self.prepare()
            let entry = String(
                decoding: try ToolProcess.run(
                    ProcessTests.executable, ["hash-password", "alice"],
                    input: Data("alice's password\n".utf8)), as: UTF8.self)
            let passwords = try Auth.temporaryFile(entry)
            let roles = try Auth.temporaryFile("alice:auth_test_alice\n")
            let secretFile = try Auth.temporaryFile(String(repeating: "s", count: 48))
            let run = try ProcessTests.start([
                "serve", "--services", folder, "--port", "0", "--auth-basic-file", passwords,
                "--role-map", roles, "--jwt-secret-file", secretFile,
            ])
            return PasswordServer(run: run, port: try run.servingPort(), secretFile: secretFile)
        }

        @Test(
            "wrong passwords from one address: 401 three times, then 429 with Retry-After, longer each time; the right one is still remembered"
        )
        func failuresSlowDown() throws {
            let server = try Self.passwordServer()
            let port = server.port
            let right = Auth.basic("alice", "alice's password")
            #expect(try Auth.get("/notes", port: port, authorization: right).status == 200)
            for attempt in 1...3 {
                #expect(try Auth.get("/notes", port: port, authorization: Auth.basic("alice", "guess \(attempt)")).status == 401)
            }
            #expect(try Auth.get("/notes", port: port, authorization: Auth.basic("alice", "guess 4")).status == 401)
            let slowed = try Auth.get("/notes", port: port, authorization: Auth.basic("alice", "guess 5"))
            #expect(slowed.status == 429, "\(slowed)")
            #expect(slowed.header("Retry-After") == "1")
            Thread.sleep(forTimeInterval: 1.1)
            #expect(try Auth.get("/notes", port: port, authorization: Auth.basic("alice", "guess 6")).status == 401)
            let longer = try Auth.get("/notes", port: port, authorization: Auth.basic("alice", "guess 7"))
            #expect(longer.status == 429 && longer.header("Retry-After") == "2", "\(longer)")
            // A credential found right before is remembered, and passes while the address waits.
            #expect(try Auth.get("/notes", port: port, authorization: right).status == 200)
            // A wrong one is remembered too: the same guess again is refused without a check.
            let repeated = try Auth.get("/notes", port: port, authorization: Auth.basic("alice", "guess 6"))
            #expect(repeated.status == 401)
        }

        @Test("200 wrong passwords at once: a request with a valid token stays fast, and few checks run")
        func floodOfWrongPasswords() throws {
            let server = try Self.passwordServer()
            let port = server.port
            let token = "Bearer " + (try Auth.token(["role": "auth_test_alice"], hmacSecretFile: server.secretFile))
            func timed() throws -> Double {
                let start = Date()
                let reply = try Auth.get("/notes/1", port: port, authorization: token)
                #expect(reply.status == 200)
                return Date().timeIntervalSince(start)
            }
            let alone = (0..<5).map { _ in (try? timed()) ?? 1 }.sorted()[2]
            let statuses = Locked<[Int: Int]>([:])
            let group = DispatchGroup()
            for index in 0..<200 {
                DispatchQueue.global().async(group: group) {
                    let status = (try? Auth.get("/notes", port: port, authorization: Auth.basic("alice", "wrong \(index)")).status) ?? 0
                    statuses.withLock { $0[status, default: 0] += 1 }
                }
            }
            Thread.sleep(forTimeInterval: 0.2)
            let flooded = (0..<5).map { _ in (try? timed()) ?? 1 }.sorted()[2]
            #expect(group.wait(timeout: .now() + 60) == .success)
            let counts = statuses.withLock { $0 }
            print("a token request: \(Int(alone * 1000)) ms alone, \(Int(flooded * 1000)) ms under 200 wrong passwords; answers \(counts)")
            #expect(flooded < 0.25, "a token request under the flood took \(flooded) s (\(alone) s alone)")
            #expect((counts[401] ?? 0) <= 10, "checks run: \(counts)")
            #expect((counts[429] ?? 0) + (counts[503] ?? 0) >= 190, "\(counts)")
        }

        @Test("SIGHUP reads the password file, role map and token key again; a file that does not load keeps the old ones")
        func rotation() throws {
            let folder = try Self.prepare()
            func entry(_ password: String) throws -> String {
                String(
                    decoding: try ToolProcess.run(
                        ProcessTests.executable, ["hash-password", "alice", "--iterations", "1000"],
                        input: Data("\(password)\n".utf8)), as: UTF8.self)
            }
            let passwords = try Auth.temporaryFile(try entry("first password"))
            let roles = try Auth.temporaryFile("alice:auth_test_alice\n")
            let secretFile = try Auth.temporaryFile(String(repeating: "1", count: 48))
            let run = try ProcessTests.start([
                "serve", "--services", folder, "--port", "0", "--auth-basic-file", passwords,
                "--role-map", roles, "--jwt-secret-file", secretFile,
            ])
            let port = try run.servingPort()
            let oldToken = "Bearer " + (try Auth.token(["role": "auth_test_alice"], hmacSecretFile: secretFile))
            #expect(try Auth.get("/notes", port: port, authorization: Auth.basic("alice", "first password")).status == 200)
            #expect(try Auth.get("/notes", port: port, authorization: oldToken).status == 200)

            try (try entry("second password")).write(toFile: passwords, atomically: true, encoding: .utf8)
            try "alice:auth_test_bob\n".write(toFile: roles, atomically: true, encoding: .utf8)
            try String(repeating: "2", count: 48).write(toFile: secretFile, atomically: true, encoding: .utf8)
            run.send(SIGHUP)
            #expect(run.waitUntilPrinted { $0.contains("Reloaded the authentication files") })
            // The old password, though remembered before, and the old key no longer pass.
            #expect(try Auth.get("/notes", port: port, authorization: Auth.basic("alice", "first password")).status == 401)
            #expect(try Auth.get("/notes", port: port, authorization: oldToken).status == 401)
            let bob = try Auth.get("/notes", port: port, authorization: Auth.basic("alice", "second password"))
            #expect(Auth.owners(bob) == ["auth_test_bob"], "the new role map: \(bob)")
            let newToken = "Bearer " + (try Auth.token(["role": "auth_test_alice"], hmacSecretFile: secretFile))
            #expect(try Auth.get("/notes", port: port, authorization: newToken).status == 200)

            try "alice:not a hash\n".write(toFile: passwords, atomically: true, encoding: .utf8)
            run.send(SIGHUP)
            #expect(run.waitUntilPrinted { $0.contains("were not reloaded") })
            #expect(try Auth.get("/notes", port: port, authorization: Auth.basic("alice", "second password")).status == 200)
        }

        // MARK: - Bodies

        @Test("a request that will get 401 is answered before its body is sent")
        func refusedBeforeTheBody() throws {
            let server = try Self.passwordServer()
            let port = server.port
            let client = try TestClient(port: port, timeoutSeconds: 5)
            try client.send(
                "POST /notes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n")
            let reply = try TestClient.Response(parsing: try client.readToEnd())
            #expect(reply.status == 401)
        }

        @Test("40 unauthenticated clients each sending 10 MB: answered 401 at once, the server's peak memory stays low")
        func unauthenticatedBodiesCostNoMemory() throws {
            let server = try Self.passwordServer()
            let port = server.port
            let pid = server.run.pid
            func peakKB() -> Int {
                let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
                return status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
                    .flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
            }
            _ = try Auth.get("/notes", port: port)
            let before = peakKB()
            let body = [UInt8](repeating: UInt8(ascii: "a"), count: 10 << 20)
            let statuses = Locked<[Int]>([])
            DispatchQueue.concurrentPerform(iterations: 40) { _ in
                let reply = try? TestClient.request(
                    "POST", "/notes", port: port, headers: [("Content-Type", "application/json")], body: body)
                statuses.withLock { $0.append(reply?.status ?? 0) }
            }
            let after = peakKB()
            print("peak RSS: \(before / 1024) MB before, \(after / 1024) MB after 40 unauthenticated 10 MB bodies")
            #expect(statuses.withLock { $0 }.filter { $0 == 401 }.count >= 30, "\(statuses.withLock { $0 })")
            #expect(after - before < 40 << 10, "peak RSS grew from \(before) kB to \(after) kB")
        }

        @Test("a body sent slowly is cut off at the body deadline; bodies over the total in flight get 503")
        func bodyLimits() throws {
            let folder = try Self.prepare()
            let run = try ProcessTests.start([
                "serve", "--services", folder, "--port", "0", "--anonymous-role", "auth_test_alice",
                "--body-timeout", "1", "--body-bytes-in-flight", "1000000",
            ])
            let port = try run.servingPort()
            let slow = try TestClient(port: port, timeoutSeconds: 10)
            try slow.send("POST /notes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")
            let start = Date()
            let sent = slow.sendSlowly(Array(repeating: UInt8(ascii: " "), count: 100), interval: 0.2)
            #expect(sent < 30, "the server took \(sent) bytes over \(Date().timeIntervalSince(start)) s")

            let holder = try TestClient(port: port)
            try holder.send("POST /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 900000\r\n\r\n")
            try holder.send([UInt8](repeating: UInt8(ascii: " "), count: 700_000))
            Thread.sleep(forTimeInterval: 0.2)
            let second = try TestClient.request(
                "POST", "/jsonrpc", port: port, headers: [("Content-Type", "application/json")],
                body: [UInt8](repeating: UInt8(ascii: " "), count: 700_000))
            #expect(second.status == 503 && second.header("Retry-After") == "1", "\(second)")
            try holder.send([UInt8](repeating: UInt8(ascii: " "), count: 200_000))
            let first = try holder.readResponse()
            #expect(first.status == 200, "the first body was kept: \(first)")
        }

        // MARK: - Cross-site requests

        @Test("writes from a page of another site are 403 before the body; /jsonrpc takes application/json only")
        func crossSite() throws {
            let folder = try Self.prepare()
            let run = try ProcessTests.start([
                "serve", "--services", folder, "--port", "0", "--anonymous-role", "auth_test_alice",
                "--cors-origin", "https://app.example",
            ])
            let port = try run.servingPort()
            let call = #"{"jsonrpc":"2.0","method":"notes.get","id":1}"#
            for headers in [
                [("Origin", "https://evil.example")], [("Origin", "null")], [("Sec-Fetch-Site", "cross-site")],
                [("Origin", "http://127.0.0.1.evil.example")],
            ] {
                #expect(try Self.post("/jsonrpc", port: port, call, headers: headers).status == 403, "\(headers)")
                let form = try TestClient.request(
                    "POST", "/notes", port: port, headers: [("Content-Type", "application/x-www-form-urlencoded")] + headers,
                    body: Array("id=60&body=forged".utf8))
                #expect(form.status == 403, "\(headers): \(form)")
            }
            #expect(try Self.noteCount(id: 60) == 0)
            for headers in [[("Origin", "http://127.0.0.1")], [("Origin", "https://app.example")], [("Sec-Fetch-Site", "same-origin")], []]
            {
                #expect(try Self.post("/jsonrpc", port: port, call, headers: headers).status == 200, "\(headers)")
            }
            #expect(try TestClient.request("GET", "/notes", port: port, headers: [("Origin", "https://evil.example")]).status == 200)
            // `*` lets any page read; it lets none write.
            let anyOrigin = try ProcessTests.start([
                "serve", "--services", folder, "--port", "0", "--anonymous-role", "auth_test_alice",
                "--cors-origin", "*",
            ])
            let anyPort = try anyOrigin.servingPort()
            #expect(try Self.post("/jsonrpc", port: anyPort, call, headers: [("Origin", "https://evil.example")]).status == 403)
            #expect(try TestClient.request("GET", "/notes", port: anyPort, headers: [("Origin", "https://evil.example")]).status == 200)
            let form = "--xyzzy\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--xyzzy--\r\n"
            for (contentType, body) in [
                ("text/plain", call), ("application/x-www-form-urlencoded", "method=notes.get"),
                ("multipart/form-data; boundary=xyzzy", form),
            ] {
                let reply = try TestClient.request(
                    "POST", "/jsonrpc", port: port, headers: [("Content-Type", contentType)], body: Array(body.utf8))
                #expect(reply.status == 415, "\(contentType): \(reply)")
            }
        }

        // MARK: - Roles PostgreSQL reads otherwise

        @Test("a token's role none, PUBLIC or pg_*: 403, never the login role; a role map or anonymous role naming one stops the start")
        func keywordRoles() throws {
            let folder = try Self.prepare()
            let secretFile = try Auth.temporaryFile(String(repeating: "n", count: 48))
            let run = try ProcessTests.start(["serve", "--services", folder, "--port", "0", "--jwt-secret-file", secretFile])
            let port = try run.servingPort()
            for role in ["none", "NONE", "public", "current_user", "pg_read_all_data", ""] {
                let token = try Auth.token(["role": role], hmacSecretFile: secretFile)
                let reply = try Auth.get("/notes", port: port, authorization: "Bearer \(token)")
                #expect(reply.status == 403 || (role.isEmpty && reply.status == 401), "\(role): \(reply)")
                #expect(Auth.owners(reply).isEmpty)
            }
            let entry = String(
                decoding: try ToolProcess.run(
                    ProcessTests.executable, ["hash-password", "mallory", "--iterations", "1000"],
                    input: Data("mallory's password\n".utf8)), as: UTF8.self)
            let passwords = try Auth.temporaryFile(entry)
            let roles = try Auth.temporaryFile("mallory:none\n")
            let mapped = try ProcessTests.start([
                "serve", "--services", folder, "--port", "0", "--auth-basic-file", passwords, "--role-map", roles,
            ])
            #expect(mapped.wait(timeout: 30) == 1)
            #expect(mapped.errors.contains("mallory"), "\(mapped.errors)")
            let anonymous = try ProcessTests.start(["serve", "--services", folder, "--port", "0", "--anonymous-role", "none"])
            #expect(anonymous.wait(timeout: 30) == 1)
            #expect(anonymous.errors.contains("none"), "\(anonymous.errors)")
        }

        // MARK: - Slow readers

        @Test("a client that stops reading a streamed list loses it at the response deadline, and its database connection is free again")
        func slowReaders() throws {
            let run = try ProcessTests.start([
                "serve", "--services", Environment.servicesFolder, "--port", "0", "--pool-size", "1",
                "--acquire-timeout", "1", "--response-timeout", "2",
            ])
            let port = try run.servingPort()
            let reader = try TestClient(port: port, receiveBufferSize: 16 << 10)
            try reader.sendRequest("GET", "/employees")
            #expect(try reader.readHeadAndFirstBytes(1024) == 200)
            // The list holds the pool's one connection while the client does not read (a list with
            // details needs one; a short list is read on the event loop's batcher).
            #expect(try TestClient.request("GET", "/employees?limit=1&details=titles", port: port).status == 503)
            Thread.sleep(forTimeInterval: 2.5)
            let next = try TestClient.request("GET", "/employees?limit=1&details=titles", port: port)
            #expect(next.status == 200, "\(next)")
            #expect(throws: (any Error).self) { _ = try reader.readResponse() }
        }

        @Test("pooled connections end a transaction left idle (idle_in_transaction_session_timeout)")
        func idleInTransaction() throws {
            let folder = try Self.prepare()
            let run = try ProcessTests.start(["serve", "--services", folder, "--port", "0", "--idle-in-transaction-timeout", "7"])
            let port = try run.servingPort()
            let reply = try TestClient.request("GET", "/settings/idle", port: port)
            #expect(reply.objects.first?["value"] as? String == "7s", "\(reply)")
        }
    }
}
