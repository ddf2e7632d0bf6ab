#if canImport(Glibc)
import Glibc
#endif
import Locking
import Synchronization

/// Closes connections that take too long over a request: to send its
/// header fields, to send its body, or to read a streamed response; and
/// answers requests whose admission takes too long.
///
/// libmicrohttpd's connection timeout counts idle time only: a client that
/// sends (or reads) one byte every second never reaches it and holds its
/// connection, with a thread, a buffer, or a database connection behind a
/// streamed response, for as long as it likes. This watchdog gives every
/// connection a deadline for each phase of a request: `header` seconds from
/// when it opened, or from the end of its previous request, until its
/// header fields are complete; `body` seconds from then until its body is
/// in; `response` seconds for a streamed response, from its first block;
/// `admission` seconds for the decision of a pending admission (a password
/// check), from when it was asked for. Past a deadline it shuts the socket
/// down, and libmicrohttpd then sees the end of the stream and closes the
/// connection (a streamed response is cut off, which its client sees as a
/// truncated chunked body); past an admission's, it calls the function
/// given instead (which answers the request 503).
///
/// The sockets are only shut down (never closed) here, and only while the
/// connection is registered: libmicrohttpd reports a connection closed
/// before it closes its socket, so a registered descriptor is never one
/// reused by another connection.
///
/// The set of connections changes under a lock as they open and close;
/// each connection's deadline is an atomic in its own `Watch`, which
/// libmicrohttpd keeps as the connection's socket context, so the changes
/// per request take no lock and no lookup.
///
/// ```swift
/// let deadline = ConnectionDeadline(header: 30, body: 30, response: 600, admission: 10)
/// let watch = deadline.opened(socket: fd)   // MHD_CONNECTION_NOTIFY_STARTED
/// deadline.headersReceived(watch)           // first access-handler call
/// deadline.admissionPending(watch) { … }    // the decision is waited for: … past its deadline
/// deadline.admissionDecided(watch)          // the decision came
/// deadline.bodyExpected(watch)              // admitted, with a body to read
/// deadline.bodyReceived(watch)              // the handler runs
/// deadline.responseStreaming(watch)         // a streamed body begins
/// deadline.requestCompleted(watch)          // the next request's clock starts
/// deadline.closed(watch)                    // MHD_CONNECTION_NOTIFY_CLOSED
/// ```
// `@unchecked Sendable`: `watches` is only touched with `lock` held. The lock
// is a ``ConditionLock`` (a pthread mutex) rather than `Synchronization.Mutex`,
// whose futex-based implementation ThreadSanitizer cannot see, so that the
// sanitizer checks this code instead of reporting the lock's accesses as races.
final class ConnectionDeadline: @unchecked Sendable {
    /// One open connection's clock.
    final class Watch: Sendable {
        let socket: Int32
        /// When the current phase must be over, in nanoseconds of
        /// `CLOCK_MONOTONIC`; 0 while no phase is timed (a handler runs).
        let deadline: Atomic<UInt64>

        fileprivate init(socket: Int32, deadline: UInt64) {
            self.socket = socket
            self.deadline = Atomic(deadline)
        }
    }

    private let headerTimeout: UInt64
    private let bodyTimeout: UInt64
    private let responseTimeout: UInt64
    private let admissionTimeout: UInt64
    private let lock = ConditionLock()
    private var watches: [ObjectIdentifier: Watch] = [:]
    /// What a passed deadline does instead of a shutdown, for the watches
    /// whose admission is pending.
    private var expiries: [ObjectIdentifier: @Sendable () -> Void] = [:]
    private let isRunning = Atomic<Bool>(true)
    private let finished = Atomic<Bool>(false)

    /// Deadlines in seconds for the header fields, the body, a streamed
    /// response and an admission's decision.
    init(header: Double, body: Double, response: Double, admission: Double) {
        func nanoseconds(_ seconds: Double) -> UInt64 { UInt64(min(max(seconds, 0), 1e9) * 1e9) }
        headerTimeout = nanoseconds(header)
        bodyTimeout = nanoseconds(body)
        responseTimeout = nanoseconds(response)
        admissionTimeout = nanoseconds(admission)
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
        let watch = Watch(socket: socket, deadline: Self.now() + headerTimeout)
        lock.withLock { watches[ObjectIdentifier(watch)] = watch }
        return watch
    }

    func headersReceived(_ watch: Watch) {
        watch.deadline.store(0, ordering: .relaxed)
    }

    /// The request's admission is decided on another thread: `expire`
    /// runs (on the watchdog's thread, once) if it is not decided within
    /// the admission deadline.
    func admissionPending(_ watch: Watch, expire: @escaping @Sendable () -> Void) {
        lock.withLock { expiries[ObjectIdentifier(watch)] = expire }
        watch.deadline.store(Self.now() + admissionTimeout, ordering: .relaxed)
    }

    /// The admission's decision was taken (in time or not).
    func admissionDecided(_ watch: Watch) {
        watch.deadline.store(0, ordering: .relaxed)
        _ = lock.withLock { expiries.removeValue(forKey: ObjectIdentifier(watch)) }
    }

    /// The request was admitted and its body is to be read.
    func bodyExpected(_ watch: Watch) {
        watch.deadline.store(Self.now() + bodyTimeout, ordering: .relaxed)
    }

    /// The body is in: the handler's time is not counted here.
    func bodyReceived(_ watch: Watch) {
        watch.deadline.store(0, ordering: .relaxed)
    }

    /// A streamed response begins: the client has `response` seconds to read it all.
    func responseStreaming(_ watch: Watch) {
        watch.deadline.store(Self.now() + responseTimeout, ordering: .relaxed)
    }

    func requestCompleted(_ watch: Watch) {
        watch.deadline.store(Self.now() + headerTimeout, ordering: .relaxed)
    }

    /// Stops watching; once this returns, the socket is never touched here.
    func closed(_ watch: Watch) {
        lock.withLock {
            _ = watches.removeValue(forKey: ObjectIdentifier(watch))
            _ = expiries.removeValue(forKey: ObjectIdentifier(watch))
        }
    }

    // MARK: - Watching

    private func watch() {
        while isRunning.load(ordering: .acquiring) {
            usleep(200_000)
            let now = Self.now()
            let expired = lock.withLock {
                var expired: [@Sendable () -> Void] = []
                for (key, watch) in watches {
                    let deadline = watch.deadline.load(ordering: .relaxed)
                    guard deadline != 0, now > deadline,
                        watch.deadline.compareExchange(expected: deadline, desired: 0, ordering: .relaxed).exchanged
                    else { continue }
                    if let expire = expiries.removeValue(forKey: key) {
                        expired.append(expire)
                    } else {
                        shutdown(watch.socket, Int32(SHUT_RDWR))
                    }
                }
                return expired
            }
            // Outside the lock: an expiry resumes its connection, which takes locks of its own.
            for expire in expired { expire() }
        }
        finished.store(true, ordering: .releasing)
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
