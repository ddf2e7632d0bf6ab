import Foundation
import HTTPTestClient
import Testing

extension AuthenticationProcessTests.AuthenticationAttackTests {
    // MARK: - DNS rebinding

    @Test(
        "a page that rebinds its own name to the server's address cannot write: 421 for its Host; Origin is compared with the server's names, not with Host"
    )
    func dnsRebinding() throws {
        let folder = try Self.prepare()
        let run = try ProcessTests.start(["serve", "--services", folder, "--port", "0", "--anonymous-role", "auth_test_alice"])
        let port = try run.servingPort()
        // The page at http://evil.example:PORT, its name now resolving to
        // 127.0.0.1: the browser sends its own name as Host and as Origin.
        let rebound = [("Host", "evil.example:\(port)"), ("Origin", "http://evil.example:\(port)")]
        let write = try Self.post("/notes", port: port, #"{"id":70,"body":"rebound"}"#, headers: rebound)
        #expect(write.status == 421, "\(write)")
        #expect(try Self.noteCount(id: 70) == 0)
        let read = try TestClient.request("GET", "/notes", port: port, headers: rebound)
        #expect(read.status == 421)
        #expect(read.objects.isEmpty)

        // A page of the server's own, under another of its names, on its port, may write.
        let ownName = try Self.post(
            "/notes", port: port, #"{"id":71,"body":"own"}"#,
            headers: [("Host", "127.0.0.1:\(port)"), ("Origin", "http://localhost:\(port)")])
        #expect(ownName.status == 201, "\(ownName)")
        // The server's name on another port is another site's page.
        let otherPort = try Self.post(
            "/notes", port: port, #"{"id":72,"body":"other"}"#, headers: [("Host", "127.0.0.1:\(port)"), ("Origin", "http://localhost:1")])
        #expect(otherPort.status == 403, "\(otherPort)")
        #expect(try Self.noteCount(id: 72) == 0)
    }
}
