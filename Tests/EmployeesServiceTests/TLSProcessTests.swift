import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPTestClient
import Testing

/// `employees-server` serving HTTPS, as a separate process, with
/// certificates made here by `openssl`: the protocol versions it agrees
/// to, its warning about a private key open to others, the certificate
/// read again on SIGHUP, and what `/openapi.json` says of authentication.
@Suite("employees-server TLS and security", .serialized)
struct TLSProcessTests {
    static let openssl = "/usr/bin/openssl"

    /// A new folder for a test's files.
    static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appending(path: "tls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A self-signed certificate for 127.0.0.1 and its key, as `<name>.crt` and `<name>.key` (mode 0600) in `folder`.
    static func makeCertificate(_ name: String, in folder: String) throws -> (certificate: String, key: String) {
        let certificate = "\(folder)/\(name).crt"
        let key = "\(folder)/\(name).key"
        let made = try ToolProcess.outcome(
            openssl,
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "1",
                "-subj", "/CN=\(name)", "-addext", "subjectAltName=IP:127.0.0.1",
            ])
        try #require(made.status == 0, "\(made.errors)")
        chmod(key, 0o600)
        return (certificate, key)
    }

    /// The SHA-256 fingerprint of a certificate file.
    static func fingerprint(ofFile path: String) throws -> String {
        try ToolProcess.outcome(openssl, ["x509", "-in", path, "-noout", "-fingerprint", "-sha256"]).text
    }

    /// The SHA-256 fingerprint of the certificate a new connection to `port` is shown.
    static func fingerprint(port: Int) throws -> String {
        let handshake = try ToolProcess.outcome(openssl, ["s_client", "-connect", "127.0.0.1:\(port)"])
        let pem = try #require(
            handshake.text.firstMatch(of: /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/),
            "\(handshake.text)\(handshake.errors)")
        return try ToolProcess.outcome(openssl, ["x509", "-noout", "-fingerprint", "-sha256"], input: Data(pem.0.utf8)).text
    }

    /// Whether a handshake with `option` (`-tls1_1`) succeeds; the client
    /// allows every cipher, so that only the server can refuse.
    static func handshakes(port: Int, _ option: String) throws -> Bool {
        try ToolProcess.outcome(openssl, ["s_client", "-connect", "127.0.0.1:\(port)", option, "-cipher", "DEFAULT@SECLEVEL=0"]).status == 0
    }

    /// Waits until the server has printed `text` `times` times.
    static func waitFor(_ text: String, times: Int = 1, in server: ChildProcess, timeout: Double = 10) -> Bool {
        server.waitUntilPrinted(timeout: timeout) { $0.components(separatedBy: text).count > times }
    }

    // MARK: - Protocol versions

    @Test(
        "by default TLS 1.0 and 1.1 handshakes are refused, 1.2 and 1.3 accepted; --tls-priorities changes that; a bad one stops the start")
    func versions() throws {
        let folder = try Self.folder()
        let (certificate, key) = try Self.makeCertificate("versions", in: folder)
        let server = try TestEnvironment.startEmployeesServer([
            "--port", "0", "--drain-seconds", "0", "--tls-cert", certificate, "--tls-key", key,
        ])
        defer { server.stop() }
        let port = try server.servingPort()
        #expect(try !Self.handshakes(port: port, "-tls1"))
        #expect(try !Self.handshakes(port: port, "-tls1_1"))
        #expect(try Self.handshakes(port: port, "-tls1_2"))
        #expect(try Self.handshakes(port: port, "-tls1_3"))

        // The same client is accepted when the server's string allows TLS 1.1.
        let legacy = try TestEnvironment.startEmployeesServer([
            "--port", "0", "--drain-seconds", "0", "--tls-cert", certificate, "--tls-key", key,
            "--tls-priorities", "NORMAL:+VERS-TLS1.1",
        ])
        defer { legacy.stop() }
        #expect(try Self.handshakes(port: try legacy.servingPort(), "-tls1_1"))

        let bad = try TestEnvironment.startEmployeesServer([
            "--port", "0", "--tls-cert", certificate, "--tls-key", key,
            "--tls-priorities", "NORMAL:+VERS-TLS9.9",
        ])
        #expect(bad.wait(timeout: 20) == 1)
        #expect(bad.printed.contains("'NORMAL:+VERS-TLS9.9' is not a usable GnuTLS priority string (at '+VERS-TLS9.9')"), "\(bad.printed)")
        #expect(!bad.printed.contains("Serving"))
    }

    // MARK: - Key file permissions

    @Test("a private key open to its group or others is warned about at start, naming the file and chmod 600; one of mode 0600 is not")
    func keyPermissions() throws {
        let folder = try Self.folder()
        let (certificate, key) = try Self.makeCertificate("permissions", in: folder)
        for (mode, warns) in [(0o644, true), (0o640, true), (0o600, false)] as [(mode_t, Bool)] {
            chmod(key, mode)
            let server = try TestEnvironment.startEmployeesServer([
                "--port", "0", "--drain-seconds", "0", "--tls-cert", certificate, "--tls-key", key,
            ])
            defer { server.stop() }
            _ = try server.servingPort()
            let warning = server.printed.split(separator: "\n").first { $0.contains("chmod 600") }
            #expect((warning != nil) == warns, "mode \(String(mode, radix: 8)): \(server.printed)")
            if let warning {
                #expect(warning.contains("warning"))
                #expect(warning.contains(key))
            }
        }
    }

    // MARK: - Rotation

    @Test(
        "SIGHUP: new connections get the new certificate; a garbage file or a key of another certificate keeps the old one, logged as an error"
    )
    func rotation() throws {
        let folder = try Self.folder()
        let first = try Self.makeCertificate("first", in: folder)
        let second = try Self.makeCertificate("second", in: folder)
        let certificate = "\(folder)/served.crt"
        let key = "\(folder)/served.key"
        func serve(_ pair: (certificate: String, key: String)) throws {
            try? FileManager.default.removeItem(atPath: certificate)
            try? FileManager.default.removeItem(atPath: key)
            try FileManager.default.copyItem(atPath: pair.certificate, toPath: certificate)
            try FileManager.default.copyItem(atPath: pair.key, toPath: key)
            chmod(key, 0o600)
        }
        try serve(first)
        let server = try TestEnvironment.startEmployeesServer([
            "--port", "0", "--drain-seconds", "0", "--tls-cert", certificate, "--tls-key", key,
        ])
        defer { server.stop() }
        let port = try server.servingPort()
        let firstFingerprint = try Self.fingerprint(ofFile: first.certificate)
        let secondFingerprint = try Self.fingerprint(ofFile: second.certificate)
        #expect(firstFingerprint != secondFingerprint)
        #expect(try Self.fingerprint(port: port) == firstFingerprint)

        try serve(second)
        server.send(SIGHUP)
        #expect(Self.waitFor("Reloaded the TLS certificate", in: server), "\(server.printed)")
        #expect(try Self.fingerprint(port: port) == secondFingerprint)

        try "garbage\n".write(toFile: certificate, atomically: true, encoding: .utf8)
        server.send(SIGHUP)
        #expect(Self.waitFor("was not reloaded", times: 1, in: server), "\(server.printed)")
        #expect(try Self.fingerprint(port: port) == secondFingerprint)

        try serve((first.certificate, second.key))
        server.send(SIGHUP)
        #expect(Self.waitFor("the private key does not match the certificate", in: server), "\(server.printed)")
        #expect(try Self.fingerprint(port: port) == secondFingerprint)

        try FileManager.default.removeItem(atPath: key)
        server.send(SIGHUP)
        #expect(Self.waitFor("cannot read \(key)", in: server), "\(server.printed)")
        #expect(try Self.fingerprint(port: port) == secondFingerprint)

        let errors = server.printed.split(separator: "\n").filter { $0.contains(" error employees-server:") }
        #expect(errors.count == 3, "\(server.printed)")
        #expect(errors.allSatisfy { $0.contains("The TLS certificate was not reloaded") && $0.contains(certificate) })
        #expect(server.isRunning)
        server.send(SIGTERM)
        #expect(server.wait(timeout: 20) == 0)
    }

    // MARK: - OpenAPI security

    @Test("/openapi.json with authentication declares basic and bearer, anonymous access, public health paths; without it, nothing")
    func openAPISecurity() throws {
        let folder = try Self.folder()
        let passwords = "\(folder)/passwords"
        let hashed = try Self.hashPassword()
        try "alice:\(hashed)\n".write(toFile: passwords, atomically: true, encoding: .utf8)
        let secret = "\(folder)/secret"
        try String(repeating: "s", count: 40).write(toFile: secret, atomically: true, encoding: .utf8)

        func document(_ arguments: [String], authorization: String? = nil) throws -> [String: Any] {
            let server = try TestEnvironment.startEmployeesServer(["--port", "0", "--drain-seconds", "0"] + arguments)
            defer { server.stop() }
            let response = try TestClient.request(
                "GET", "/openapi.json", port: try server.servingPort(), headers: authorization.map { [("Authorization", $0)] } ?? [])
            #expect(response.status == 200, "\(response)")
            return response.object
        }
        func healthSecurity(_ document: [String: Any]) -> [Any]? {
            let live = (document["paths"] as? [String: Any])?["/health/live"] as? [String: Any]
            return (live?["get"] as? [String: Any])?["security"] as? [Any]
        }

        let open = try document(["--auth-basic-file", passwords, "--jwt-secret-file", secret, "--anonymous-role", "employees_reader"])
        let schemes = (open["components"] as? [String: Any])?["securitySchemes"] as? [String: [String: String]]
        #expect(
            schemes == [
                "basic": ["type": "http", "scheme": "basic"], "bearer": ["type": "http", "scheme": "bearer", "bearerFormat": "JWT"],
            ])
        #expect(open["security"] as? [[String: [String]]] == [["basic": []], ["bearer": []], [:]])
        #expect(healthSecurity(open)?.isEmpty == true)
        let employees = (open["paths"] as? [String: Any])?["/employees"] as? [String: Any]
        #expect(employees != nil)
        #expect((employees?["get"] as? [String: Any])?["security"] == nil)

        let basicOnly = try document(
            ["--auth-basic-file", passwords], authorization: "Basic " + Data("alice:wonderland".utf8).base64EncodedString())
        #expect(basicOnly["security"] as? [[String: [String]]] == [["basic": []]])
        #expect(((basicOnly["components"] as? [String: Any])?["securitySchemes"] as? [String: Any])?.keys.sorted() == ["basic"])

        for arguments in [[], ["--anonymous-role", "employees_reader"]] {
            let plain = try document(arguments)
            #expect(plain["security"] == nil, "\(arguments)")
            #expect((plain["components"] as? [String: Any])?["securitySchemes"] == nil, "\(arguments)")
            #expect(healthSecurity(plain) == nil, "\(arguments)")
        }
    }

    /// A password file entry's hash of `wonderland`, from the server's own `hash-password`.
    static func hashPassword() throws -> String {
        let hashed = try ToolProcess.outcome(
            try ChildProcess.packageExecutable("employees-server"), ["hash-password", "--iterations", "1000"],
            input: Data("wonderland\n".utf8))
        try #require(hashed.status == 0, "\(hashed.errors)")
        return hashed.text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
