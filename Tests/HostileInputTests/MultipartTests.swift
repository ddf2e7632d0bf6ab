import Foundation
import HTTPTestClient
import Testing

/// Multipart bodies cut short or malformed: a 4xx problem, never a 5xx,
/// and no temporary file left behind.
@Suite("Hostile multipart bodies", .serialized)
struct MultipartTests {
    let server = HostileServer.shared
    static let boundary = "XyZzY"

    static var valid: String {
        """
        --XyZzY\r
        Content-Disposition: form-data; name="title"\r
        \r
        Report\r
        --XyZzY\r
        Content-Disposition: form-data; name="file"; filename="r.txt"\r
        Content-Type: text/plain\r
        \r
        hello\r
        --XyZzY--\r

        """
    }

    func upload(_ body: [UInt8], contentType: String = "multipart/form-data; boundary=XyZzY") throws -> TestClient.Response {
        try server.send("/probe/upload", method: "POST", headers: [("Content-Type", contentType)], body: body)
    }

    static func uploadFiles() -> Set<String> {
        let directory = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return Set(names.filter { $0.hasPrefix("http-upload-") })
    }

    @Test("the valid body is accepted")
    func valid() throws {
        let response = try upload(Array(Self.valid.utf8))
        #expect(response.status == 200 && response.text == #""Report: 5""#, "\(response)")
    }

    @Test("every truncation of the body is a 4xx problem or a success, never a 5xx")
    func truncated() throws {
        let before = Self.uploadFiles()
        let body = Array(Self.valid.utf8)
        for length in stride(from: 1, to: body.count, by: 3) {
            let response = try upload(Array(body[..<length]))
            if response.status != 200 { expectProblem(response, 400...400, "first \(length) bytes") }
        }
        // A request completes after its response is sent; give the last one a moment.
        Thread.sleep(forTimeInterval: 0.2)
        #expect(Self.uploadFiles().subtracting(before).isEmpty, "temporary files left behind")
    }

    @Test(
        "malformed bodies",
        arguments: [
            "no boundary at all",
            "--XyZzY\r\nContent-Disposition: form-data\r\n\r\nx\r\n--XyZzY--\r\n",
            "--XyZzY\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nx\r\n--Other--\r\n",
            "--XyZzY\r\n\r\n\r\n--XyZzY--\r\n",
            "--XyZzY\r\nContent-Disposition: form-data; name=\"title\"\r\nx\r\n--XyZzY--\r\n",
            "--XyZzY\r\nContent-Disposition: form-data; name=\"\u{FF}\"\r\n\r\nx\r\n--XyZzY--\r\n",
            "--XyZzY--\r\n",
            "\r\n\r\n\r\n",
            String(repeating: "--XyZzY\r\n", count: 2_000),
            "--XyZzY\r\nContent-Disposition: form-data; name=\"file\"; filename=\"../../etc/passwd\"\r\n\r\nroot\r\n--XyZzY--\r\n",
        ])
    func malformed(body: String) throws {
        let response = try upload(Array(body.utf8))
        expectProblem(response, 400...400, body.debugDescription)
    }

    @Test("invalid UTF-8 in a text part, a field name and NUL in a name")
    func invalidBytes() throws {
        let text =
            Array("--XyZzY\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\n".utf8) + [0xC3, 0x28]
            + Array("\r\n--XyZzY\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\nx\r\n--XyZzY--\r\n".utf8)
        expectProblem(try upload(text), 400...400, "text part")
        let name =
            Array("--XyZzY\r\nContent-Disposition: form-data; name=\"".utf8) + [0xFF, 0xFE]
            + Array("\"\r\n\r\nx\r\n--XyZzY--\r\n".utf8)
        expectProblem(try upload(name), 400...400, "name")
        let nul =
            Array("--XyZzY\r\nContent-Disposition: form-data; name=\"ti".utf8) + [0]
            + Array("tle\"\r\n\r\nx\r\n--XyZzY--\r\n".utf8)
        expectProblem(try upload(nul), 400...400, "NUL")
    }

    @Test(
        "content types without a usable boundary",
        arguments: [
            "multipart/form-data", "multipart/form-data; boundary=", "multipart/form-data; boundary=\"\"",
            "multipart/form-data; boundary=" + String(repeating: "b", count: 5_000),
        ])
    func badBoundary(contentType: String) throws {
        let response = try upload(Array(Self.valid.utf8), contentType: contentType)
        expectProblem(response, 400...431, contentType)
    }
}
