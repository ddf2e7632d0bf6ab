import Foundation
import Locking
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn` and reaped with `waitpid`
/// (Foundation's `Process.waitUntilExit` can wait forever on a run loop
/// when called from a test thread). Its standard input is the bytes given,
/// written by a thread of its own, else `/dev/null`; its standard output
/// and error are read to their end by threads of their own from the start,
/// so a chatty child never blocks on a full pipe, and everything it printed
/// can be read at any time.
///
/// ```swift
/// let child = try ChildProcess("/bin/echo", ["hello"])
/// #expect(child.wait() == 0 && child.output == "hello\n")
/// ```
public final class ChildProcess: Sendable {
    /// The child could not be started.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The process id.
    public let pid: pid_t
    private let streams: Streams
    private let exitStatus = Locked<Int32?>(nil)

    /// Starts `executable` (a path) with `arguments` and the environment of
    /// the tests changed by `environment` (a `nil` value removes the
    /// variable). With `separateErrors` false, standard error goes to
    /// `output` too, in the order written; otherwise to `errors`. `input`,
    /// if given, is its standard input.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String?] = [:], separateErrors: Bool = false,
        input: [UInt8]? = nil
    ) throws {
        _ = Self.ignoreBrokenPipes
        // Pipes are made close-on-exec and children spawned one at a time,
        // so that no child inherits another child's pipe (whose reader would
        // then wait for both to exit).
        Self.spawning.lock()
        defer { Self.spawning.unlock() }
        let outputPipe = try Self.pipe()
        let errorPipe = separateErrors ? try Self.pipe() : nil
        let inputPipe = input == nil ? nil : try Self.pipe()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let inputPipe {
            posix_spawn_file_actions_adddup2(&actions, inputPipe.read, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, outputPipe.write, 1)
        posix_spawn_file_actions_adddup2(&actions, errorPipe?.write ?? outputPipe.write, 2)

        var variables = ProcessInfo.processInfo.environment
        for (name, value) in environment { variables[name] = value }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        close(outputPipe.write)
        if let errorPipe { close(errorPipe.write) }
        if let inputPipe { close(inputPipe.read) }
        guard result == 0 else {
            close(outputPipe.read)
            if let errorPipe { close(errorPipe.read) }
            if let inputPipe { close(inputPipe.write) }
            throw Failure(description: "cannot run \(executable): error \(result)")
        }
        self.pid = pid
        let streams = Streams(openStreams: separateErrors ? 2 : 1)
        self.streams = streams
        Self.readToEnd(outputPipe.read, streams) { $0.output += $1 }
        if let errorPipe { Self.readToEnd(errorPipe.read, streams) { $0.errors += $1 } }
        if let inputPipe, let input { Self.write(input, to: inputPipe.write) }
    }

    deinit {
        if poll() == nil {
            kill(pid, SIGKILL)
            wait()
        }
    }

    /// Everything the child has written so far to its standard output (and
    /// error, unless separate).
    public var output: String { String(decoding: outputBytes, as: UTF8.self) }

    /// The bytes of `output`.
    public var outputBytes: [UInt8] { streams.state.withLock { $0.output } }

    /// Everything the child has written so far to its standard error, when
    /// started with `separateErrors`.
    public var errors: String { String(decoding: streams.state.withLock { $0.errors }, as: UTF8.self) }

    /// The exit status if the child has exited (a signal `n` reports `128 + n`), without blocking.
    public func poll() -> Int32? {
        exitStatus.withLock { status in
            if let status { return status }
            var raw: Int32 = 0
            guard waitpid(pid, &raw, WNOHANG) == pid else { return nil }
            let exited = raw & 0x7f == 0
            status = exited ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
            return status
        }
    }

    /// Whether the child has not exited yet.
    public var isRunning: Bool { poll() == nil }

    /// Waits up to `timeout` seconds for the child to exit and for its
    /// output to be read to the end (so that `output` and `errors` are
    /// complete); its exit status, or `nil` if it is still running.
    @discardableResult
    public func wait(timeout: Double = .infinity) -> Int32? {
        let deadline = Date(timeIntervalSinceNow: min(timeout, 1e9))
        while true {
            if let status = poll() {
                while streams.state.withLock({ $0.openStreams }) > 0, Date() < deadline { usleep(5_000) }
                return status
            }
            if Date() >= deadline { return nil }
            usleep(5_000)
        }
    }

    /// Sends `signal` to the child if it is still running.
    public func send(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// A pipe whose ends are not inherited by children started later.
    private static func pipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard Glibc.pipe(&ends) == 0 else { throw Failure(description: "pipe: errno \(errno)") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return (ends[0], ends[1])
    }

    /// What the child printed, shared with the threads that read it.
    private final class Streams: Sendable {
        struct State {
            var output: [UInt8] = []
            var errors: [UInt8] = []
            /// The pipes not read to their end yet.
            var openStreams: Int
        }

        let state: Locked<State>

        init(openStreams: Int) {
            state = Locked(State(openStreams: openStreams))
        }
    }

    /// The tests survive a child that exits before reading all its input
    /// (the write fails with `EPIPE` instead).
    private static let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

    private static let spawning = NSLock()

    /// Writes `bytes` to `descriptor` on a new thread, then closes it.
    private static func write(_ bytes: [UInt8], to descriptor: Int32) {
        Thread {
            var offset = 0
            while offset < bytes.count {
                let count = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                offset += count
            }
            close(descriptor)
        }.start()
    }

    /// Reads `descriptor` to its end on a new thread, appending what it
    /// reads with `append`, then closes it.
    private static func readToEnd(
        _ descriptor: Int32, _ streams: Streams, _ append: @escaping @Sendable (inout Streams.State, [UInt8]) -> Void
    ) {
        Thread {
            var chunk = [UInt8](repeating: 0, count: 16_384)
            while true {
                let count = read(descriptor, &chunk, chunk.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                let bytes = Array(chunk[0..<count])
                streams.state.withLock { append(&$0, bytes) }
            }
            close(descriptor)
            streams.state.withLock { $0.openStreams -= 1 }
        }.start()
    }
}
