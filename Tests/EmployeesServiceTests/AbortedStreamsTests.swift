import Dispatch
import EmployeesService
import Foundation
import HTTPTestClient
import PostgreSQLWebService
import Testing

/// Clients that go away in the middle of a nested stream
/// (`GET /employees?details=salaries`), many at once: the server's memory
/// comes back down once they are gone. Each stream holds a block of rows
/// and the rows attached to it, on whichever worker thread pulls it; before
/// the heap was trimmed after the last stream, 1,000 such streams, 50 at a
/// time, left the release server at 57 MB instead of 23, for good.
@Suite("aborted nested streams")
struct AbortedStreamsTests {
    static let concurrent = 25

    /// This process's resident memory in bytes (VmRSS).
    static func residentMemory() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        return (line.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true)[1]) } ?? 0) << 10
    }

    /// `count` streams, `concurrent` at a time, each closed by its client
    /// after the head and 256 KB of the body (of 205 MB).
    static func abortStreams(_ count: Int, port: Int) {
        DispatchQueue.concurrentPerform(iterations: concurrent) { lane in
            for _ in stride(from: lane, to: count, by: concurrent) {
                guard let client = try? TestClient(port: port) else { continue }
                try? client.sendRequest("GET", "/employees?details=salaries")
                _ = try? client.readHeadAndFirstBytes(256 << 10)
            }
        }
    }

    @Test("200 aborted nested streams, 25 at a time, leave the memory where it was")
    func serverMemoryStaysFlatAfterAbortedNestedStreams() throws {
        let pool = try TestEnvironment.pool(size: Self.concurrent + 1)
        let server = TestServer.serve([EmployeesService()], runner: QueryRunner(pool: pool))
        try server.start()
        defer {
            server.stop()
            pool.close()
        }
        #expect(try TestClient.request("GET", "/employees/10001", port: server.port).status == 200)
        let before = Self.residentMemory()

        Self.abortStreams(200, port: server.port)
        // The server notices each client gone at its next write, then closes
        // the stream; the last one to close trims the heap.
        var after = Self.residentMemory()
        let deadline = ContinuousClock.now + .seconds(30)
        while after - before >= 12 << 20, ContinuousClock.now < deadline {
            usleep(250_000)
            after = Self.residentMemory()
        }
        #expect(after - before < 12 << 20, "RSS \(before >> 20) MiB before the streams, \(after >> 20) MiB after")
        #expect(try TestClient.request("GET", "/employees/10001", port: server.port).status == 200)
    }
}
