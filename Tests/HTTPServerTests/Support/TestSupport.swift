#if canImport(Glibc)
import Glibc
#endif
import HTTPServer
import HTTPTestClient
import JSONStreaming
import Logging
import Locking
import Synchronization
import Testing

/// Every test of the server runs one at a time: several measure the process
/// (memory, signals) and must not see another test's traffic.
@Suite(.serialized) struct HTTPServerTests {}

/// A started server on an ephemeral port, stopped by `stop()`, with the
/// libmicrohttpd patches of `MHD_PATCHES` (``TestPatches``).
func startServer(
    _ configuration: HTTPServer.Configuration = .init(),
    handler: @escaping HTTPServer.Handler
) throws -> HTTPServer {
    var configuration = configuration
    configuration.port = 0
    configuration.libraryPatches = TestPatches.policy
    var logger = Logger(label: "http-test")
    logger.logLevel = .info
    let server = HTTPServer(configuration: configuration, logger: logger, handler: handler)
    try server.start()
    #expect(server.port > 0)
    return server
}

/// Polls `condition` every 10 ms for up to `seconds`; returns its last value.
func eventually(within seconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

/// Runs `body` on a new thread (not the cooperative pool: it blocks).
func onNewThread(_ body: @escaping @Sendable () -> Void) {
    final class Box: @unchecked Sendable {  // handed to exactly one new thread, which consumes it
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    var thread = pthread_t()
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    let result = pthread_create(
        &thread, nil,
        { argument in
            Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue().body()
            return nil
        }, box)
    precondition(result == 0, "pthread_create failed")
    pthread_detach(thread)
}

/// A field of /proc/self/status in bytes (`VmRSS`, `VmHWM`).
func processMemory(_ field: String) -> Int {
    guard let file = fopen("/proc/self/status", "r") else { return 0 }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 512)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.hasPrefix(field + ":") {
            let kilobytes = text.split(separator: " ").compactMap { Int($0) }.first ?? 0
            return kilobytes * 1024
        }
    }
    return 0
}

/// A streaming body of `total` bytes in 64 KiB pieces that records how
/// much was pulled and how often it was closed; it can fail after `failAfter` pieces.
final class CountingBody: StreamingBody, @unchecked Sendable {
    // @unchecked: the server uses it from one connection thread at a time;
    // the test reads only the atomics.
    struct Failure: Error {}

    let produced = Atomic<Int>(0)
    let closeCount = Atomic<Int>(0)
    let writeCalls = Atomic<Int>(0)
    private let total: Int
    private let pieceSize: Int
    private let failAfter: Int?
    private let piece: [UInt8]

    init(total: Int, pieceSize: Int = 64 << 10, failAfter: Int? = nil) {
        self.total = total
        self.pieceSize = pieceSize
        self.failAfter = failAfter
        piece = (0..<pieceSize).map { UInt8(truncatingIfNeeded: $0 % 251) }
    }

    func write(into output: inout [UInt8]) throws -> Bool {
        let calls = writeCalls.add(1, ordering: .relaxed).newValue
        if let failAfter, calls > failAfter { throw Failure() }
        let done = produced.load(ordering: .relaxed)
        let count = min(pieceSize, total - done)
        output.append(contentsOf: piece[0..<count])
        produced.add(count, ordering: .relaxed)
        return done + count < total
    }

    func close() {
        closeCount.add(1, ordering: .relaxed)
    }
}

/// A body whose first write waits `delay` microseconds, as a query does
/// before its first row, then writes `total` bytes.
final class SlowStartBody: StreamingBody, @unchecked Sendable {
    // @unchecked: the server uses it from one thread at a time; the test
    // reads only the atomics.
    let closeCount = Atomic<Int>(0)
    private let inner: CountingBody
    private let delay: useconds_t
    private let started = Atomic<Bool>(false)

    init(total: Int, delay: useconds_t) {
        inner = CountingBody(total: total)
        self.delay = delay
    }

    func write(into output: inout [UInt8]) throws -> Bool {
        if !started.exchange(true, ordering: .relaxed) { usleep(delay) }
        return try inner.write(into: &output)
    }

    func close() {
        closeCount.add(1, ordering: .relaxed)
    }
}
