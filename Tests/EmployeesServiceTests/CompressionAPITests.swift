import EmployeesService
import Foundation
import HTTPTestClient
import Testing

/// gzip on `Accept-Encoding`, over a real socket; bodies are decompressed
/// with the system's `gzip`.
@Suite("gzip responses")
struct CompressionAPITests {
    let server: TestServer

    init() throws {
        server = try TestServer.shared()
    }

    static func gunzip(_ bytes: [UInt8]) throws -> [UInt8] {
        let gzip = try ToolProcess.outcome("/bin/gzip", ["-dc"], input: Data(bytes))
        #expect(gzip.status == 0, "gzip -d failed: not a complete gzip stream")
        return gzip.output
    }

    @Test("a streamed list is compressed as it streams and decompresses to the same JSON")
    func streamedList() throws {
        let plain = try server.get("/employees?limit=5000&details=titles")
        let compressed = try server.get("/employees?limit=5000&details=titles", headers: [("Accept-Encoding", "gzip, deflate")])
        #expect(compressed.status == 200)
        #expect(compressed.header("Content-Encoding") == "gzip")
        #expect(compressed.header("Vary") == "Accept-Encoding")
        #expect(compressed.header("Transfer-Encoding")?.lowercased() == "chunked")
        #expect(compressed.body.count * 4 < plain.body.count, "\(compressed.body.count) of \(plain.body.count) bytes")
        #expect(try Self.gunzip(compressed.body) == plain.body)
        #expect(plain.header("Content-Encoding") == nil)
        #expect(plain.header("Vary") == "Accept-Encoding")
    }

    @Test("an object over the threshold is compressed with its length; a small one is not")
    func objects() throws {
        let large = try server.get("/employees/10004?details=titles,salaries", headers: [("Accept-Encoding", "gzip")])
        #expect(large.header("Content-Encoding") == "gzip")
        #expect(large.header("Content-Length") == String(large.body.count))
        #expect(try Self.gunzip(large.body) == server.get("/employees/10004?details=titles,salaries").body)
        #expect(large.header("Vary") == "Accept-Encoding")
        let small = try server.get("/employees/10004", headers: [("Accept-Encoding", "gzip")])
        #expect(small.header("Content-Encoding") == nil)
        #expect(small.header("Vary") == nil, "never compressed, so it does not vary with Accept-Encoding")
    }

    @Test("no gzip when the client refuses it, for CSV as for JSON")
    func refusals() throws {
        #expect(try server.get("/employees?limit=500", headers: [("Accept-Encoding", "gzip;q=0")]).header("Content-Encoding") == nil)
        #expect(try server.get("/employees?limit=500", headers: [("Accept-Encoding", "identity")]).header("Content-Encoding") == nil)
        let csv = try server.get("/employees?limit=500", headers: [("Accept", "text/csv"), ("Accept-Encoding", "*")])
        #expect(csv.header("Content-Encoding") == "gzip")
        #expect(String(decoding: try Self.gunzip(csv.body), as: UTF8.self).hasPrefix("employeeNumber,firstName,lastName\r\n"))
    }
}
