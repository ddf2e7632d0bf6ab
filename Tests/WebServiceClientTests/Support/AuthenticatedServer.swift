import Foundation
import HTTPTestClient
import HTTPServer

/// The built `employees-server` run as a process with authentication on:
/// a password file with alice's entry (her role `employees_reader`), and
/// HS256 tokens signed with a secret of the test's. Stopped when released.
final class AuthenticatedServer: @unchecked Sendable {
    // `@unchecked Sendable`: every field is set in `init` and never changed.
    let server: ChildProcess
    let port: Int
    let folder: URL
    let secretFile: URL

    static let password = "alice's password"

    init() throws {
        let executable = try ChildProcess.packageExecutable("employees-server")
        folder = try ClientTestEnvironment.temporaryFolder()
        let entry = try ToolProcess.run(executable, ["hash-password", "alice"], input: Data((Self.password + "\n").utf8))
        let passwords = folder.appending(path: "passwords")
        let roles = folder.appending(path: "roles")
        secretFile = folder.appending(path: "secret")
        try entry.write(to: passwords)
        try Data("alice:employees_reader\n".utf8).write(to: roles)
        try Data(String(repeating: "k", count: 48).utf8).write(to: secretFile)
        for file in [passwords, roles, secretFile] {
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        }
        server = try ChildProcess(
            executable,
            [
                "--port", "0", "--database-url", try ClientTestEnvironment.conninfo(), "--auth-basic-file", passwords.path,
                "--role-map", roles.path, "--jwt-secret-file", secretFile.path,
            ])
        port = try server.servingPort(timeout: 30)
    }

    deinit {
        // At once: a SIGTERM would drain for seconds, and nothing here needs the drain.
        server.send(SIGKILL)
        server.wait()
        try? FileManager.default.removeItem(at: folder)
    }

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// A JSON Web Token for the role `employees_reader`, expiring `expiresIn`
    /// seconds from now (a negative number: that long ago), signed HS256
    /// with the server's secret by `openssl`.
    func token(expiresIn: TimeInterval) throws -> String {
        func base64URL(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let now = Date().timeIntervalSince1970
        let header = base64URL(try JSONSerialization.data(withJSONObject: ["alg": "HS256", "typ": "JWT"]))
        let claims: [String: Any] = ["role": "employees_reader", "iat": Int(now), "exp": Int(now + expiresIn)]
        let payload = base64URL(try JSONSerialization.data(withJSONObject: claims))
        let secret = try String(contentsOf: secretFile, encoding: .utf8)
        let signature = try ToolProcess.run(
            "/usr/bin/openssl", ["dgst", "-sha256", "-binary", "-hmac", secret], input: Data("\(header).\(payload)".utf8))
        return "\(header).\(payload).\(base64URL(signature))"
    }

}

/// Lines written by a hook, kept in order for the test to read.
final class LogLines: @unchecked Sendable {
    // `@unchecked Sendable`: `lines` is touched only with `lock` held.
    private let lock = NSLock()
    private var lines: [String] = []

    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}

/// A server of the test's own on 127.0.0.1 that answers each request with
/// the next of `answers` (the last one again once they run out), counting
/// the requests: for statuses and header fields the example services
/// never send. Stop it with `stop()`.
final class ScriptedServer: Sendable {
    private let counter: RequestCounter
    private let server: HTTPServer

    init(_ answers: [@Sendable () -> HTTPResponse]) throws {
        // The handler holds the counter, not `self`: a server released
        // without `stop()` is freed with its listener, not kept by a cycle.
        let counter = RequestCounter()
        self.counter = counter
        server = HTTPServer(configuration: .init(port: 0)) { _ in
            answers[min(counter.take(), answers.count - 1)]()
        }
        try server.start()
    }

    var requests: Int { counter.count }
    var baseURL: URL { URL(string: "http://127.0.0.1:\(server.port)")! }

    func stop() { server.stop() }
}

/// The number of requests a `ScriptedServer` has answered.
private final class RequestCounter: @unchecked Sendable {
    // `@unchecked Sendable`: `value` is touched only with `lock` held.
    private let lock = NSLock()
    private var value = 0

    /// The count before this request, then one more.
    func take() -> Int {
        lock.withLock {
            defer { value += 1 }
            return value
        }
    }

    var count: Int { lock.withLock { value } }
}
