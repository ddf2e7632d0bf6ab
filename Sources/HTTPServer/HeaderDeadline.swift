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
/// The set of connections changes under a lock as they open and close;
/// each connection's deadline is an atomic in its own `Watch`, which
/// libmicrohttpd keeps as the connection's socket context, so the two
/// changes per request take no lock and no lookup.
///
/// ```swift
/// let deadline = HeaderDeadline(timeout: 30)
/// let watch = deadline.opened(socket: fd)   // MHD_CONNECTION_NOTIFY_STARTED
/// deadline.headersReceived(watch)           // first access-handler call
/// deadline.requestCompleted(watch)          // the next request's clock starts
/// deadline.closed(watch)                    // MHD_CONNECTION_NOTIFY_CLOSED
/// ```
// `@unchecked Sendable`: `watches` is only touched with `lock` held. The lock
// is a ``ConditionLock`` (a pthread mutex) rather than `Synchronization.Mutex`,
// whose futex-based implementation ThreadSanitizer cannot see, so that the
// sanitizer checks this code instead of reporting the lock's accesses as races.
final class HeaderDeadline: @unchecked Sendable {
    /// One open connection's clock.
    final class Watch: Sendable {
        let socket: Int32
        /// When the header fields must be in, in nanoseconds of
        /// `CLOCK_MONOTONIC`; 0 while a request is being served.
        let deadline: Atomic<UInt64>

        fileprivate init(socket: Int32, deadline: UInt64) {
            self.socket = socket
            self.deadline = Atomic(deadline)
        }
    }

    private let timeout: UInt64
    private let lock = ConditionLock()
    private var watches: [ObjectIdentifier: Watch] = [:]
    private let isRunning = Atomic<Bool>(true)
    private let finished = Atomic<Bool>(false)

    init(timeout: Double) {
        self.timeout = UInt64(max(timeout, 0) * 1e9)
        if !DetachedThread.start({ self.watch() }) {
            finished.store(true, ordering: .releasing)
        }
    }

    /// Stops the watchdog thread (within its polling interval).
    func stop() {
        isRunning.store(false, ordering: .releasing)
        while !finished.load(ordering: .acquiring) { usleep(10_000) }
    }

    // MARK: - Connection events

    /// Starts watching a new connection; `nil` without a socket.
    func opened(socket: Int32) -> Watch? {
        guard socket >= 0 else { return nil }
        let watch = Watch(socket: socket, deadline: Self.now() + timeout)
        lock.withLock { watches[ObjectIdentifier(watch)] = watch }
        return watch
    }

    func headersReceived(_ watch: Watch) {
        watch.deadline.store(0, ordering: .relaxed)
    }

    func requestCompleted(_ watch: Watch) {
        watch.deadline.store(Self.now() + timeout, ordering: .relaxed)
    }

    /// Stops watching; once this returns, the socket is never touched here.
    func closed(_ watch: Watch) {
        _ = lock.withLock { watches.removeValue(forKey: ObjectIdentifier(watch)) }
    }

    // MARK: - Watching

    private func watch() {
        while isRunning.load(ordering: .acquiring) {
            usleep(200_000)
            let now = Self.now()
            lock.withLock {
                for watch in watches.values {
                    let deadline = watch.deadline.load(ordering: .relaxed)
                    guard deadline != 0, now > deadline,
                          watch.deadline.compareExchange(expected: deadline, desired: 0, ordering: .relaxed).exchanged
                    else { continue }
                    shutdown(watch.socket, Int32(SHUT_RDWR))
                }
            }
        }
        finished.store(true, ordering: .releasing)
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
