import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPTestClient
import Testing

extension TLSProcessTests {
    // MARK: - Priorities read again

    @Test(
        "SIGHUP reads --tls-priorities-file again: new handshakes follow the new string; one GnuTLS rejects is logged and the old one stays"
    )
    func prioritiesRotation() throws {
        let folder = try Self.folder()
        let (certificate, key) = try Self.makeCertificate("priorities", in: folder)
        let priorities = "\(folder)/priorities"
        try "# TLS 1.2 and 1.3\nNORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2\n".write(toFile: priorities, atomically: true, encoding: .utf8)
        let server = try TestEnvironment.startEmployeesServer([
            "--port", "0", "--drain-seconds", "0", "--tls-cert", certificate, "--tls-key", key, "--tls-priorities-file", priorities,
        ])
        defer { server.stop() }
        let port = try server.servingPort()
        #expect(try Self.handshakes(port: port, "-tls1_2"))
        #expect(try Self.handshakes(port: port, "-tls1_3"))

        try "NORMAL:-VERS-ALL:+VERS-TLS1.3\n".write(toFile: priorities, atomically: true, encoding: .utf8)
        server.send(SIGHUP)
        #expect(Self.waitFor("Reloaded the TLS priorities from \(priorities)", in: server), "\(server.printed)")
        #expect(try !Self.handshakes(port: port, "-tls1_2"), "TLS 1.2 is refused once the file drops it")
        #expect(try Self.handshakes(port: port, "-tls1_3"))

        try "NORMAL:+VERS-TLS9.9\n".write(toFile: priorities, atomically: true, encoding: .utf8)
        server.send(SIGHUP)
        #expect(Self.waitFor("The TLS priorities were not reloaded", in: server), "\(server.printed)")
        #expect(server.printed.contains("(at '+VERS-TLS9.9')"), "\(server.printed)")
        #expect(try !Self.handshakes(port: port, "-tls1_2"), "the previous string still applies")
        #expect(try Self.handshakes(port: port, "-tls1_3"))
        #expect(server.isRunning)

        let both = try TestEnvironment.startEmployeesServer([
            "--port", "0", "--tls-cert", certificate, "--tls-key", key, "--tls-priorities-file", priorities,
            "--tls-priorities", "NORMAL",
        ])
        #expect(both.wait(timeout: 20) == 64, "the file and the string exclude each other: \(both.printed)")
    }
}
