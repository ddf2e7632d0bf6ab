import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A server of the package (`employees-server`, `sql-rest`) run by a test
/// as a `ChildProcess`: found beside the test bundle, started, its port read
/// from the "Serving http://HOST:PORT/" line it logs, its log read while it
/// runs, stopped.
///
/// ```swift
/// let server = try ChildProcess(try ChildProcess.packageExecutable("employees-server"), ["--port", "0"])
/// defer { server.stop() }
/// let reply = try TestClient.request("GET", "/health/live", port: try server.servingPort())
/// ```
extension ChildProcess {
    /// The executable product `name` of the package: beside the test bundle
    /// (`swift test` builds every product), else in `.build/debug`. Throws
    /// if it is in neither place.
    public static func packageExecutable(_ name: String) throws -> String {
        let besideTests = Bundle.main.executableURL?.deletingLastPathComponent().appending(path: name).path
        if let besideTests, FileManager.default.isExecutableFile(atPath: besideTests) { return besideTests }
        let repository = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let built = repository.appending(path: ".build/debug/\(name)").path
        guard FileManager.default.isExecutableFile(atPath: built) else {
            throw Failure(description: "\(built) is missing: build it with `swift build` (swift test does)")
        }
        return built
    }

    /// Everything printed so far, standard output then standard error.
    public var printed: String { output + errors }

    /// Waits up to `timeout` seconds until `condition` holds of `printed`;
    /// whether it did. Stops waiting early when the process has exited and
    /// its output is read to the end.
    public func waitUntilPrinted(timeout: Double = 20, _ condition: (String) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            if condition(printed) { return true }
            if !isRunning {
                wait(timeout: 5)
                return condition(printed)
            }
            usleep(20_000)
        }
        return condition(printed)
    }

    /// The port of the first "Serving http://HOST:PORT/" (or https) line,
    /// waiting up to `timeout` seconds for it; throws, with everything
    /// printed, if the process exits or the time runs out first.
    public func servingPort(timeout: Double = 20) throws -> Int {
        var port: Int?
        _ = waitUntilPrinted(timeout: timeout) { text in
            port = text.firstMatch(of: /Serving https?:\/\/[^\/\s]+:(\d+)\//).flatMap { Int($0.1) }
            return port != nil
        }
        guard let port else { throw Failure(description: "no \"Serving\" line; printed so far:\n\(printed)") }
        return port
    }

    /// Stops the process: SIGTERM, then SIGKILL if it has not exited
    /// within `timeout` seconds. Returns once it has exited.
    public func stop(timeout: Double = 15) {
        guard isRunning else { return }
        send(SIGTERM)
        if wait(timeout: timeout) == nil {
            send(SIGKILL)
            wait()
        }
    }

    /// Resident set size in kilobytes (`VmRSS` in `/proc/PID/status`); 0 once exited.
    public var residentKilobytes: Int {
        Int(statusField("VmRSS:").split(separator: " ").first ?? "") ?? 0
    }

    /// The number of threads of the process (`Threads` in `/proc/PID/status`); 0 once exited.
    public var threadCount: Int {
        Int(statusField("Threads:")) ?? 0
    }

    /// The value of a line of `/proc/PID/status`, its spaces trimmed.
    private func statusField(_ name: String) -> String {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix(name) } ?? ""
        return line.dropFirst(name.count).trimmingCharacters(in: .whitespaces)
    }
}
