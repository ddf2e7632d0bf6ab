import Foundation
import HTTPTestClient
import Locking
import Testing

/// Clients that send JSON-RPC batches and stop reading cost the server the
/// memory of their bodies and of one call each, whatever the batch holds:
/// its calls are parsed, run and answered one after the other as the
/// client reads (and a stalled client reads nothing), and a body over
/// `--max-jsonrpc-bytes` is refused before it is read. The batches are of
/// small numbers, which a parsed document holds at many times their size.
@Suite("Stalled JSON-RPC batches", .serialized)
struct StalledBatchTests {
    static let clients = 40

    /// A field of `/proc/PID/status`, in bytes.
    static func status(_ field: String, of pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") }
        return (line.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true)[1]) } ?? 0) << 10
    }

    /// A batch of `calls` calls of `rpc.discover` (whose answer is long), each
    /// with `numbers` small numbers as a param it ignores, up to about `bytes`.
    static func batch(calls: Int, bytes: Int) -> [UInt8] {
        let numbers = max(1, (bytes / calls - 80) / 2)
        var call = Array(#"{"jsonrpc":"2.0","method":"rpc.discover","params":{"pad":["#.utf8)
        for index in 0..<numbers { call += index == 0 ? [UInt8(ascii: "1")] : [UInt8(ascii: ","), UInt8(ascii: "1")] }
        call += Array(#"]},"id":1}"#.utf8)
        var batch: [UInt8] = [UInt8(ascii: "[")]
        batch.reserveCapacity(calls * (call.count + 1) + 1)
        for index in 0..<calls {
            if index > 0 { batch.append(UInt8(ascii: ",")) }
            batch += call
        }
        batch.append(UInt8(ascii: "]"))
        return batch
    }

    /// Sends `body` to `/jsonrpc` on a connection with a small receive
    /// buffer, reads nothing, and returns the connection (open) and whether it could send it all.
    static func stall(port: Int, body: [UInt8]) -> (TestClient?, Bool) {
        guard let client = try? TestClient(port: port, receiveBufferSize: 4 << 10, timeoutSeconds: 5) else { return (nil, false) }
        let head = "POST /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n"
        do {
            try client.send(Array(head.utf8) + body)
            return (client, true)
        } catch {
            return (client, false)
        }
    }

    @Test("40 clients send batches at the limit and 40 send 10 MB ones, then stop reading: the server's peak memory stays under 100 MB")
    func stalledBatchesPeakMemoryStaysBounded() throws {
        let server = try TestEnvironment.startEmployeesServer([
            "--host", "127.0.0.1", "--port", "0", "--drain-seconds", "0", "--shutdown-timeout", "2",
        ])
        defer { server.stop() }
        let port = try server.servingPort()
        let pid = server.pid
        let discover = try TestClient.request(
            "POST", "/jsonrpc", port: port, headers: [("Content-Type", "application/json")],
            body: Array(#"{"jsonrpc":"2.0","method":"rpc.discover","id":1}"#.utf8))
        #expect(discover.status == 200 && discover.body.count > 5_000)
        let before = Self.status("VmRSS", of: pid)

        let atLimit = Self.batch(calls: 1_000, bytes: (1 << 20) - 1_000)
        #expect(atLimit.count <= 1 << 20 && atLimit.count > 1_000_000)
        let large = Self.batch(calls: 1_000, bytes: 10_000_000)
        let connections = Locked<[TestClient]>([])
        let sent = Locked<[Bool]>([])
        let finished = DispatchGroup()
        for index in 0..<(2 * Self.clients) {
            finished.enter()
            Thread.detachNewThread {
                let (client, whole) = Self.stall(port: port, body: index % 2 == 0 ? atLimit : large)
                if let client { connections.withLock { $0.append(client) } }
                if index % 2 == 0 { sent.withLock { $0.append(whole) } }
                finished.leave()
            }
        }
        #expect(finished.wait(timeout: .now() + 60) == .success)
        // The server reads the bodies, runs calls until the sockets are full, and waits: until its memory holds still.
        var last = 0
        var still = 0
        for _ in 0..<30 where still < 3 {
            Thread.sleep(forTimeInterval: 0.5)
            let now = Self.status("VmRSS", of: pid)
            still = abs(now - last) < 1 << 20 ? still + 1 : 0
            last = now
        }
        let peak = Self.status("VmHWM", of: pid)
        print(
            "peak RSS \(peak >> 20) MiB (\(before >> 20) MiB before) with \(Self.clients) stalled batches at the limit and \(Self.clients) of 10 MB"
        )
        #expect(sent.withLock { $0 }.allSatisfy { $0 }, "a batch at the limit was not read whole")
        #expect(peak < 100 << 20, "peak RSS \(peak >> 20) MiB, \(before >> 20) MiB before")
        #expect(try TestClient.request("GET", "/health/live", port: port).status == 204)
        connections.withLock { $0.removeAll() }
    }
}
