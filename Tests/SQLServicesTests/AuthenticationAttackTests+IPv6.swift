import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPTestClient
import Testing

/// A password guesser that rotates through the IPv6 addresses of its /64,
/// against `sql-rest` in a network namespace made here, whose loopback
/// holds addresses of two /64 prefixes (the server's and the guesser's
/// first, and another); curl, run in the namespace, sends from each.
extension AuthenticationProcessTests.AuthenticationAttackTests {
    /// A network namespace of the test's own, removed when it goes.
    final class NetworkNamespace {
        static let ip = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first { FileManager.default.isExecutableFile(atPath: $0) }

        /// Whether namespaces can be made here (root, and iproute2's `ip`).
        static let available: Bool = {
            guard let namespace = try? NetworkNamespace(addresses: []) else { return false }
            _ = namespace
            return true
        }()

        /// No `ip` command (iproute2) here.
        struct MissingCommand: Error {}

        let name = "sqlrest-auth-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"

        /// A namespace whose loopback is up with `addresses` (IPv6, with their prefix length).
        init(addresses: [String]) throws {
            guard let ip = Self.ip else { throw MissingCommand() }
            _ = try ToolProcess.run(ip, ["netns", "add", name])
            do {
                _ = try ToolProcess.run(ip, ["-n", name, "link", "set", "lo", "up"])
                for address in addresses {
                    _ = try ToolProcess.run(ip, ["-n", name, "-6", "addr", "add", address, "dev", "lo", "nodad"])
                }
            } catch {
                _ = try? ToolProcess.run(ip, ["netns", "delete", name])
                throw error
            }
        }

        deinit {
            if let ip = Self.ip { _ = try? ToolProcess.run(ip, ["netns", "delete", name]) }
        }

        /// The command that runs another inside the namespace.
        var launcher: [String] { [Self.ip ?? "ip", "netns", "exec", name] }
    }

    @Test(
        "wrong passwords from one IPv6 address slow down the other addresses of its /64, not those of another /64",
        .enabled(if: NetworkNamespace.available, "needs root and iproute2's ip to give the server IPv6 addresses in a network namespace")
    )
    func backoffCountsIPv6By64() throws {
        let folder = try Self.prepare()
        let namespace = try NetworkNamespace(addresses: [
            "fd00:5eed:0:1::1/64", "fd00:5eed:0:1::a/64", "fd00:5eed:0:1::b/64", "fd00:5eed:0:2::c/64",
        ])
        let entry = String(
            decoding: try ToolProcess.run(
                ProcessTests.executable, ["hash-password", "alice", "--iterations", "1000"],
                input: Data("alice's password\n".utf8)), as: UTF8.self)
        let passwords = try Auth.temporaryFile(entry)
        let roles = try Auth.temporaryFile("alice:auth_test_alice\n")
        let run = try ProcessTests.start(
            [
                "serve", "--services", folder, "--host", "fd00:5eed:0:1::1", "--port", "0", "--auth-basic-file", passwords,
                "--role-map", roles,
            ],
            launcher: namespace.launcher)
        let port = try run.servingPort()
        /// The status of a GET /notes with `password`, sent by curl from
        /// `source` (curl fails, and so the test, when it cannot bind there).
        func status(from source: String, password: String) throws -> Int {
            let output = try ToolProcess.run(
                namespace.launcher[0],
                Array(namespace.launcher.dropFirst()) + [
                    "/usr/bin/curl", "--silent", "--globoff", "--max-time", "10", "--output", "/dev/null",
                    "--write-out", "%{http_code}", "--interface", source, "--user", "alice:\(password)",
                    "http://[fd00:5eed:0:1::1]:\(port)/notes",
                ])
            return Int(String(decoding: output, as: UTF8.self)) ?? 0
        }
        #expect(try status(from: "fd00:5eed:0:1::a", password: "alice's password") == 200)
        for guess in 1...4 {
            #expect(try status(from: "fd00:5eed:0:1::a", password: "guess \(guess)") == 401)
        }
        // Another address of the same /64 waits as the first does.
        #expect(try status(from: "fd00:5eed:0:1::b", password: "guess 5") == 429)
        // An address of another /64 does not.
        #expect(try status(from: "fd00:5eed:0:2::c", password: "guess 6") == 401)
    }
}
