import Foundation
import Locking
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, its standard output and
/// error going to one pipe. (Foundation's `Process.waitUntilExit` can wait
/// forever on a run loop when called from a test thread, so the tests spawn
/// and reap their children themselves.)
///
/// ```swift
/// let child = try ChildProcess("/bin/echo", ["hello"])
/// let output = child.readAll()
/// let status = child.wait()
/// ```
final class ChildProcess: Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let pid: pid_t
    /// The read end of the output pipe.
    let output: Int32
    private let exitStatus = Locked<Int32?>(nil)

    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { throw Failure(description: "pipe: errno \(errno)") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 2)
        posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
        posix_spawn_file_actions_addclose(&actions, pipeEnds[1])

        let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        close(pipeEnds[1])
        guard result == 0 else {
            close(pipeEnds[0])
            throw Failure(description: "cannot run \(executable): error \(result)")
        }
        // Later children must not inherit the read end.
        _ = fcntl(pipeEnds[0], F_SETFD, FD_CLOEXEC)
        self.pid = pid
        self.output = pipeEnds[0]
    }

    deinit {
        close(output)
    }

    /// Reads the output until the child closes it.
    func readAll() -> String {
        var data = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(output, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            data.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The exit status if the child has exited (a signal `n` reports `128 + n`), without blocking.
    func poll() -> Int32? {
        exitStatus.withLock { status in
            if let status { return status }
            var raw: Int32 = 0
            guard waitpid(pid, &raw, WNOHANG) == pid else { return nil }
            let exited = raw & 0x7f == 0
            status = exited ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
            return status
        }
    }

    var isRunning: Bool { poll() == nil }

    /// Waits up to `timeout` seconds for the child to exit; its status, or `nil` if still running.
    @discardableResult
    func wait(timeout: Double = .infinity) -> Int32? {
        let deadline = now() + timeout
        while true {
            if let status = poll() { return status }
            if now() >= deadline { return nil }
            usleep(5_000)
        }
    }

    func send(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }
}
