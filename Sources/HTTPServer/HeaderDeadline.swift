#if canImport(Glibc)
import Glibc
#endif
import Locking
import Synchronization

/// Closes connections that take longer than the connection timeout to send
/// a request's header fields.
///
/// libmicrohttpd's connection timeout counts idle time only: a client that
/// sends one byte every second never reaches it and holds its connection
/// (and, with a thread per connection, a thread) for as long as it likes.
/// This watchdog gives every connection `timeout` seconds from when it
/// opened, or from the end of its previous request, until its header fields
/// are complete; past that it shuts the socket down, and libmicrohttpd's
/// thread for the connection then sees the end of the stream and closes it.
///
/// The sockets are only shut down (never closed) here, and only while the
/// connection is registered: libmicrohttpd reports a connection closed
/// before it closes its socket, so a registered descriptor is never one
/// reused by another connection.
///
/// ```swift
/// let deadline = HeaderDeadline(timeout: 30)
/// deadline.opened(connection: key, socket: fd)   // MHD_CONNECTION_NOTIFY_STARTED
/// deadline.headersReceived(connection: key)     // first access-handler call
/// deadline.requestCompleted(connection: key)    // the next request's clock starts
/// deadline.closed(connection: key)              // MHD_CONNECTION_NOTIFY_CLOSED
/// ```
// `@unchecked Sendable`: `entries` is only touched with `lock` held. The lock
// is a ``ConditionLock`` (a pthread mutex) rather than `Synchronization.Mutex`,
// whose futex-based implementation ThreadSanitizer cannot see, so that the
// sanitizer checks this code instead of reporting the lock's accesses as races.
final class HeaderDeadline: @unchecked Sendable {
    private struct Entry {
        var socket: Int32
        /// When the header fields must be in; `nil` while a request is being served.
        var deadline: Double?
    }

    private let timeout: Double
    private let lock = ConditionLock()
    private var entries: [UInt: Entry] = [:]
    private let isRunning = Atomic<Bool>(true)
    private let finished = Atomic<Bool>(false)

    init(timeout: Double) {
        self.timeout = timeout
        var thread = pthread_t()
        let box = Unmanaged.passRetained(self)
        let created = pthread_create(&thread, nil, { argument in
            let watchdog = Unmanaged<HeaderDeadline>.fromOpaque(argument!).takeRetainedValue()
            watchdog.watch()
            return nil
        }, box.toOpaque())
        if created == 0 {
            pthread_detach(thread)
        } else {
            box.release()
            finished.store(true, ordering: .releasing)
        }
    }

    /// Stops the watchdog thread (within its polling interval).
    func stop() {
        isRunning.store(false, ordering: .releasing)
        while !finished.load(ordering: .acquiring) { usleep(10_000) }
    }

    // MARK: - Connection events

    func opened(connection: UInt, socket: Int32) {
        guard socket >= 0 else { return }
        let deadline = Self.now() + timeout
        lock.withLock { entries[connection] = Entry(socket: socket, deadline: deadline) }
    }

    func headersReceived(connection: UInt) {
        lock.withLock { entries[connection]?.deadline = nil }
    }

    func requestCompleted(connection: UInt) {
        let deadline = Self.now() + timeout
        lock.withLock { entries[connection]?.deadline = deadline }
    }

    func closed(connection: UInt) {
        _ = lock.withLock { entries.removeValue(forKey: connection) }
    }

    // MARK: - Watching

    private func watch() {
        while isRunning.load(ordering: .acquiring) {
            usleep(200_000)
            let now = Self.now()
            lock.withLock {
                for (key, entry) in entries {
                    guard let deadline = entry.deadline, now > deadline else { continue }
                    shutdown(entry.socket, Int32(SHUT_RDWR))
                    entries[key]?.deadline = nil
                }
            }
        }
        finished.store(true, ordering: .releasing)
    }

    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
