#if canImport(Glibc)
import Glibc
#endif
import Locking

/// Standard error with a short-lived buffer, for the log.
///
/// The server logs a line per request (the access log). Written one
/// `write` each, those lines cost about 2 µs of system time per request
/// (an appending `write` of 120 bytes to a file on this machine's ext4)
/// and make the connection threads queue on the file's lock. Here lines
/// collect in memory and reach standard error in batches:
///
/// - at most ``flushInterval`` after the first line of a batch was logged,
///   by a thread of its own that sleeps while nothing is waiting;
/// - at once when ``capacity`` bytes are waiting, for a line logged with
///   `immediately` (warnings and errors), and for every line when standard
///   error is a terminal;
/// - on ``flush()``, which the server calls before it exits.
///
/// Lines keep their order and stay whole: every write happens with the
/// lock held. A crash loses the lines of the last ``flushInterval``.
///
/// ```swift
/// StandardErrorOutput.shared.write(Array("started\n".utf8), immediately: false)
/// StandardErrorOutput.shared.flush()
/// ```
final class StandardErrorOutput: @unchecked Sendable {
    // @unchecked Sendable: `pending` and `isFlusherRunning` are read and
    // written only with `lock` held.

    /// The process's standard error.
    static let shared = StandardErrorOutput(fileDescriptor: STDERR_FILENO)

    /// How long a line may wait in the buffer.
    static let flushInterval = Duration.milliseconds(50)
    /// How many bytes may wait before a line is written at once.
    static let capacity = 64 << 10

    private let fileDescriptor: Int32
    private let isTerminal: Bool
    private let lock = ConditionLock()
    private var pending: [UInt8] = []
    private var isFlusherRunning = false

    /// Output to `fileDescriptor` (tests use a pipe).
    init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
        self.isTerminal = isatty(fileDescriptor) == 1
    }

    /// Appends `line` (ending in a newline) to standard error.
    func write(_ line: [UInt8], immediately: Bool) {
        lock.withLock {
            let wasEmpty = pending.isEmpty
            pending.append(contentsOf: line)
            if immediately || isTerminal || pending.count >= Self.capacity {
                writePending()
            } else if wasEmpty {
                startFlusherIfNeeded()
                lock.signal()
            }
        }
    }

    /// Writes whatever is waiting.
    func flush() {
        lock.withLock { writePending() }
    }

    // MARK: - Writing

    /// With the lock held: writes the waiting bytes, retrying short writes.
    private func writePending() {
        pending.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(fileDescriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    break  // Nowhere to report it: standard error itself failed.
                }
                offset += written
            }
        }
        pending.removeAll(keepingCapacity: pending.capacity <= Self.capacity)
    }

    // MARK: - Flusher thread

    /// With the lock held: starts the thread that writes batches, once.
    /// The thread holds the output for good.
    private func startFlusherIfNeeded() {
        guard !isFlusherRunning else { return }
        var thread = pthread_t()
        let output = Unmanaged.passRetained(self)
        let created = pthread_create(&thread, nil, { argument in
            Unmanaged<StandardErrorOutput>.fromOpaque(argument!).takeRetainedValue().flushPeriodically()
            return nil
        }, output.toOpaque())
        if created == 0 {
            pthread_detach(thread)
            isFlusherRunning = true
        } else {
            output.release()
            writePending()  // No thread: no batching either.
        }
    }

    /// Sleeps until a batch begins, lets it gather for `flushInterval`, writes it; forever.
    private func flushPeriodically() {
        lock.lock()
        while true {
            while pending.isEmpty {
                _ = lock.wait(until: .now + .seconds(3600))
            }
            let deadline = ContinuousClock.now + Self.flushInterval
            while !pending.isEmpty, lock.wait(until: deadline) {}
            if !pending.isEmpty { writePending() }
        }
    }
}
