import Foundation
import Testing
import WebServiceClient

/// Upload and download progress against the real server: a large multipart
/// upload, and the whole employee list, streamed without a `Content-Length`.
@Suite("WebServiceClient transfer progress")
struct TransferProgressTests {
    /// The reports a call received, in order.
    final class Reports: @unchecked Sendable {
        // `@unchecked Sendable`: `all` is touched only with `lock` held.
        private let lock = NSLock()
        private var reports: [TransferProgress] = []
        func append(_ progress: TransferProgress) { lock.withLock { reports.append(progress) } }
        var all: [TransferProgress] { lock.withLock { reports } }
    }

    @Test func aLargeMultipartUploadReportsItsBytesSent() async throws {
        let client = try ClientTestEnvironment.sharedClient()
        let folder = try ClientTestEnvironment.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appending(path: "large.bin")
        let size = 9 << 20  // under the server's body limit (10 MiB)
        var bytes = [UInt8](repeating: 0, count: size)
        for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 131 &+ 3) }
        try Data(bytes).write(to: file)
        let reports = Reports()
        let request = WebServiceRequest(
            .post, "/echo/upload", arguments: ["label": "large", "file": file], progress: reports.append)
        let upload = try await client.send(request).decode(EchoService.Upload.self)
        #expect(upload.size == size)
        #expect(upload.checksum == bytes.reduce(0) { $0 &+ Int($1) })

        let sent = reports.all.filter { $0.direction == .upload }
        let total = try #require(sent.last?.totalBytes)
        #expect(total > Int64(size))  // the file and the form around it
        #expect(sent.count > 4, "\(sent.count) reports")
        #expect(sent.last?.completedBytes == total)
        #expect(sent.allSatisfy { $0.totalBytes == total })
        #expect(zip(sent, sent.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
        print("upload:", sent.count, "reports, last", sent.last!, "; first", sent.first!)
        // The answer, small, is a download of its own.
        #expect(reports.all.last?.direction == .download)
    }

    @Test func theWholeEmployeeListReportsItsBytesReceived() async throws {
        let client = try ClientTestEnvironment.sharedClient()
        let reports = Reports()
        let start = Date()
        let response = try await client.send(WebServiceRequest(.get, "/employees", progress: reports.append))
        let seconds = Date().timeIntervalSince(start)
        #expect(response.header("Content-Length") == nil)
        let received = reports.all.filter { $0.direction == .download }
        #expect(received.count > 10)
        // Streamed without a length: no total until the end, then the bytes received.
        #expect(received.dropLast().allSatisfy { $0.totalBytes == nil && $0.fractionCompleted == nil })
        #expect(received.last?.totalBytes == Int64(response.data.count))
        #expect(received.last?.completedBytes == Int64(response.data.count))
        #expect(zip(received, received.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
        let employees = try #require(try JSONSerialization.jsonObject(with: response.data) as? [Any])
        #expect(employees.count == 300_024)
        let quarter = received.first { $0.completedBytes >= Int64(response.data.count) / 4 }!
        print("download of /employees:", received.count, "reports;", quarter, "...", received.last!,
              ";", employees.count, "employees in", (seconds * 10).rounded() / 10, "s")
    }

    @Test func aStreamReportsProgressAsElementsArrive() async throws {
        let client = try ClientTestEnvironment.sharedClient()
        let reports = Reports()
        let request = WebServiceRequest(.get, "/employees", arguments: ["name": "a*"], progress: reports.append)
        var count = 0
        var bytesAtFirstElement: Int64?
        for try await _ in client.stream(request, of: EmployeeSummary.self) {
            if count == 0 { bytesAtFirstElement = reports.all.last?.completedBytes }
            count += 1
        }
        let expected = try ClientTestEnvironment.integer(
            "SELECT count(*)::int FROM employees WHERE lower(first_name) LIKE 'a%' OR lower(last_name) LIKE 'a%'")
        #expect(count == expected)
        let last = try #require(reports.all.last)
        #expect(last.totalBytes == last.completedBytes)
        #expect(try #require(bytesAtFirstElement) < last.completedBytes)
    }
}
