#if canImport(Glibc)
import Glibc
#endif
import Locking

/// Standard error with a short-lived buffer, for the log.
///
/// The server logs a line per request (the access log). Written with one
/// `write` each, those lines would cost a system call per request, make
/// the event loops queue on the file's lock, and keep the file system's
/// journal busy. Here lines collect
/// in memory and a thread of its own writes them in batches:
///
/// - at most ``flushInterval`` after the first line of a batch was logged
///   (the thread sleeps while nothing waits);
/// - as soon as ``capacity`` bytes wait;
/// - at once, by the logging thread, for a line logged `immediately`
///   (warnings and errors), for every line when the output is a terminal,
///   and when the writing thread has fallen ``capacity`` × 4 behind (a
///   slow disk then slows the server down instead of filling its memory);
/// - on ``flush()``, which the server calls before it exits.
///
/// The event loops never wait for the disk otherwise: the batch is taken
/// out of the buffer and written without its lock held. Lines keep their
/// order and stay whole (writes are serialised by a second lock, taken
/// before the first is released). A crash loses the lines of the last
/// ``flushInterval``.
///
/// ```swift
/// StandardErrorOutput.shared.write(Array("started\n".utf8), immediately: false)
/// StandardErrorOutput.shared.flush()
/// ```
final class StandardErrorOutput: @unchecked Sendable {
    // @unchecked Sendable: `pending`, `spare` and `isFlusherRunning` are
    // used only with `lock` held; `writing` serialises the writes.

    /// The process's standard error.
    static let shared = StandardErrorOutput(fileDescriptor: STDERR_FILENO)

    /// How long a line may wait in the buffer.
    static let flushInterval = Duration.milliseconds(50)
    /// How many bytes make a batch that is written without waiting longer.
    static let capacity = 64 << 10

    private let fileDescriptor: Int32
    private let isTerminal: Bool
    private let lock = ConditionLock()
    private let writing = ConditionLock()
    private var pending: [UInt8] = []
    /// The buffer of the batch written last, kept for its capacity.
    private var spare: [UInt8] = []
    private var isFlusherRunning = false

    /// Output to `fileDescriptor` (tests use a pipe).
    init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
        self.isTerminal = isatty(fileDescriptor) == 1
    }

    /// Appends `line` (ending in a newline) to the output.
    func write(_ line: [UInt8], immediately: Bool) {
        lock.lock()
        let wasEmpty = pending.isEmpty
        pending.append(contentsOf: line)
        if immediately || isTerminal || pending.count >= 4 * Self.capacity {
            writePendingAndUnlock()
            return
        }
        if wasEmpty || pending.count >= Self.capacity {
            if !isFlusherRunning { startFlusher() }
            lock.signal()
        }
        lock.unlock()
    }

    /// Writes whatever waits, and returns once it is written.
    func flush() {
        lock.lock()
        writePendingAndUnlock()
    }

    // MARK: - Writing

    /// With `lock` held: takes the waiting bytes out, releases `lock`, and
    /// writes them. `writing` is taken before `lock` is released, so that
    /// batches are written in the order they were taken.
    private func writePendingAndUnlock() {
        guard !pending.isEmpty else { return lock.unlock() }
        var batch = spare
        swap(&batch, &pending)
        spare = []
        writing.lock()
        lock.unlock()
        writeAll(batch)
        writing.unlock()
        batch.removeAll(keepingCapacity: batch.capacity <= 4 * Self.capacity)
        lock.withLock { if spare.capacity < batch.capacity { spare = batch } }
    }

    /// Writes `bytes`, retrying short and interrupted writes.
    private func writeAll(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { bytes in
            var offset = 0
            // Not empty inside the loop: `bytes` has a base address.
            while offset < bytes.count {
                let written = Glibc.write(fileDescriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return  // Nowhere to report it: the output itself failed.
                }
                offset += written
            }
        }
    }

    // MARK: - Flusher thread

    /// With `lock` held: starts the thread that writes batches. The thread
    /// holds the output for good.
    private func startFlusher() {
        DetachedThread.start { self.flushPeriodically() }
        // Without a thread, lines wait for a warning, a full buffer or `flush()`.
        isFlusherRunning = true
    }

    /// Sleeps until a batch begins, lets it gather for `flushInterval` or
    /// until it is `capacity` bytes long, writes it; forever.
    private func flushPeriodically() {
        while true {
            lock.lock()
            while pending.isEmpty {
                _ = lock.wait(until: .now + .seconds(3600))
            }
            let deadline = ContinuousClock.now + Self.flushInterval
            while !pending.isEmpty, pending.count < Self.capacity, lock.wait(until: deadline) {}
            writePendingAndUnlock()
        }
    }
}
