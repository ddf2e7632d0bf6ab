import Dispatch
import EmployeesService
import Foundation
import HTTPTestClient
import PostgreSQLWebService
import Testing

/// Clients that go away in the middle of a nested stream
/// (`GET /employees?details=salaries`), many at once: once the server has
/// served a first round of them, more do not add to its memory. Each stream
/// holds a block of rows and the rows attached to it, its buffers and a
/// worker thread while it runs; what it leaves behind (1,000 such streams,
/// 50 at a time, took the release server from 23 MB to 57 MB, for good)
/// is measured in BENCHMARKS.md, scenario 8.
@Suite("aborted nested streams")
struct AbortedStreamsTests {
    static let concurrent = 50

    /// This process's resident memory in bytes (VmRSS).
    static func residentMemory() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        return (line.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true)[1]) } ?? 0) << 10
    }

    /// `count` streams, `concurrent` at a time, each closed by its client
    /// after the head and 1 MB of the body (of 205 MB).
    static func abortStreams(_ count: Int, port: Int) {
        DispatchQueue.concurrentPerform(iterations: concurrent) { lane in
            for _ in stride(from: lane, to: count, by: concurrent) {
                guard let client = try? TestClient(port: port) else { continue }
                try? client.sendRequest("GET", "/employees?details=salaries")
                _ = try? client.readHeadAndFirstBytes(1 << 20)
            }
        }
    }

    @Test("aborted nested streams, 50 at a time, do not keep the memory growing")
    func serverMemoryStaysFlatAfterAbortedNestedStreams() throws {
        let pool = try TestEnvironment.pool(size: Self.concurrent + 1)
        let server = try TestServer.serve([EmployeesService()], runner: QueryRunner(pool: pool))
        try server.start()
        defer {
            server.stop()
            pool.close()
        }
        #expect(try TestClient.request("GET", "/employees/10001", port: server.port).status == 200)
        let start = Self.residentMemory()
        // The first round brings the pool's connections, the worker threads
        // and their malloc arenas into use (10 MB in this test process); the
        // second, three times as long, must not add to that (it added 1 MB):
        // a leak of 32 KB per stream would add 5 MB.
        Self.abortStreams(50, port: server.port)
        let afterFirst = Self.residentMemory()
        Self.abortStreams(150, port: server.port)
        let afterSecond = Self.residentMemory()
        #expect(afterFirst - start < 32 << 20, "RSS \(start >> 20) MiB at first, \(afterFirst >> 20) MiB after 50 streams")
        #expect(
            afterSecond - afterFirst < 4 << 20,
            "RSS \(afterFirst >> 20) MiB after 50 aborted streams, \(afterSecond >> 20) MiB after 150 more")
        #expect(try TestClient.request("GET", "/employees/10001", port: server.port).status == 200)
    }
}
