import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
import HTTPTestClient
#endif

/// The built `employees-server`, run as a child process on an ephemeral port
/// (`--port 0`; the port is read from its "Serving http://HOST:PORT/" line).
///
/// Its output is read continuously (the access log would otherwise fill the
/// pipe); the last lines are kept for failure messages.
///
/// ```swift
/// let server = try ServerProcess(arguments: ["--database-url", cluster.conninfo(application: "x")])
/// defer { server.terminate() }
/// let response = try TestClient(port: server.port).request("GET", "/health/live")
/// ```
final class ServerProcess: Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let port: Int
    private let child: ChildProcess
    private let log: Shared<[String]>

    /// Starts the server and waits (up to 20 s) until it serves.
    init(arguments: [String]) throws {
        // No drain: these tests measure the stop itself (`--drain-seconds` has its own test).
        let child = try ChildProcess(Paths.employeesServer, ["--host", "127.0.0.1", "--port", "0", "--drain-seconds", "0"] + arguments)
        let log = Shared<[String]>([])
        let portFound = Shared<Int?>(nil)
        self.child = child
        self.log = log

        let thread = Thread {
            var pending = [UInt8]()
            var chunk = [UInt8](repeating: 0, count: 16_384)
            while true {
                let count = read(child.output, &chunk, chunk.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                pending.append(contentsOf: chunk[0..<count])
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeSubrange(...newline)
                    if let range = line.range(of: "Serving http://") {
                        let address = line[range.upperBound...].prefix { $0 != "/" }
                        if let port = address.split(separator: ":").last.flatMap({ Int($0) }) {
                            portFound.value = port
                        }
                    }
                    log.mutate { lines in
                        lines.append(line)
                        if lines.count > 400 { lines.removeFirst(100) }
                    }
                }
            }
        }
        thread.start()

        let deadline = now() + 20
        while portFound.value == nil, child.isRunning, now() < deadline {
            usleep(20_000)
        }
        guard let port = portFound.value else {
            child.send(SIGKILL)
            child.wait(timeout: 5)
            throw Failure(description: "employees-server did not start: \(log.value.joined(separator: "\n"))")
        }
        self.port = port
    }

    var pid: Int32 { child.pid }
    var isRunning: Bool { child.isRunning }

    /// The last lines the server wrote.
    var recentLog: String { log.value.suffix(40).joined(separator: "\n") }

    /// Lines of the kept log containing `text`.
    func logLines(containing text: String) -> [String] {
        log.value.filter { $0.contains(text) }
    }

    /// Resident set size in kilobytes (`VmRSS` in `/proc/PID/status`).
    var residentKilobytes: Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        }
        return 0
    }

    /// The number of threads of the server process.
    var threadCount: Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        for line in status.split(separator: "\n") where line.hasPrefix("Threads:") {
            return Int(line.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0
        }
        return 0
    }

    /// Sends `signal` to the server.
    func send(_ signal: Int32) {
        child.send(signal)
    }

    /// Waits up to `timeout` seconds for the server to exit; its exit status, or `nil` if still running.
    func waitForExit(timeout: Double) -> Int32? {
        child.wait(timeout: timeout)
    }

    /// Stops the server (SIGKILL if SIGTERM does not end it within 5 s).
    func terminate() {
        guard child.isRunning else { return }
        send(SIGTERM)
        if waitForExit(timeout: 5) == nil {
            send(SIGKILL)
            _ = waitForExit(timeout: 5)
        }
    }
}
