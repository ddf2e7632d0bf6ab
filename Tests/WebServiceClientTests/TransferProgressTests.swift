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
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        let output = try FileHandle(forWritingTo: file)
        var checksum = 0
        for blockStart in stride(from: 0, to: size, by: 1 << 20) {
            let block = (blockStart..<blockStart + (1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 3) }
            checksum = block.reduce(checksum) { $0 &+ Int($1) }
            try output.write(contentsOf: block)
        }
        try output.close()
        let reports = Reports()
        let request = WebServiceRequest(
            .post, "/echo/upload", arguments: ["label": "large", "file": file], progress: reports.append)
        let upload = try await client.send(request).decode(EchoService.Upload.self)
        #expect(upload.size == size)
        #expect(upload.checksum == checksum)

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
        struct Numbered: Decodable { var employeeNumber: Int }
        let client = try ClientTestEnvironment.sharedClient()
        let reports = Reports()
        let start = Date()
        var count = 0
        // Streamed, so that the list is never whole in memory here either.
        for try await _ in client.stream(WebServiceRequest(.get, "/employees", progress: reports.append), of: Numbered.self) {
            count += 1
        }
        let seconds = Date().timeIntervalSince(start)
        #expect(count == 300_024)
        let received = reports.all.filter { $0.direction == .download }
        let size = try #require(received.last?.completedBytes)
        #expect(received.count > 10)
        // Sent without a Content-Length: no total until the end, then the bytes received.
        #expect(received.dropLast().allSatisfy { $0.totalBytes == nil && $0.fractionCompleted == nil })
        #expect(received.last?.totalBytes == size)
        #expect(size > 10_000_000)
        #expect(zip(received, received.dropFirst()).allSatisfy { $0.completedBytes < $1.completedBytes || $1 == received.last })
        let quarter = received.first { $0.completedBytes >= size / 4 }!
        print(
            "download of /employees:", received.count, "reports;", quarter, "...", received.last!,
            ";", count, "employees in", (seconds * 10).rounded() / 10, "s")
    }

    @Test func aStreamReportsProgressAsElementsArrive() async throws {
        let client = try ClientTestEnvironment.sharedClient()
        let reports = Reports()
        let request = WebServiceRequest(.get, "/employees", arguments: ["name": "a*"], progress: reports.append)
        var count = 0
        var reportedBeforeTheEnd = false
        for try await _ in client.stream(request, of: EmployeeSummary.self) {
            if count == 0 { reportedBeforeTheEnd = !reports.all.isEmpty }
            count += 1
        }
        let expected = try ClientTestEnvironment.integer(
            "SELECT count(*)::int FROM employees WHERE lower(first_name) LIKE 'a%' OR lower(last_name) LIKE 'a%'")
        #expect(count == expected)
        let last = try #require(reports.all.last)
        #expect(last.totalBytes == last.completedBytes)
        #expect(reportedBeforeTheEnd)  // the first element came after at least one report
    }
}
