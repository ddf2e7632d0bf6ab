internal import CMicroHTTPD
import EventLoops
#if canImport(Glibc)
import Glibc
#endif
import Locking
import Synchronization

// MARK: - A daemon run by an event loop

/// One `MHD_Daemon` in external-polling mode, run by an ``EventLoop`` of
/// its own: the loop watches libmicrohttpd's `epoll` descriptor and calls
/// `MHD_run` at the end of a pass in which it was ready or a suspended
/// connection was resumed, and when a connection's timeout comes.
///
/// A connection resumed by another thread (a worker, a pool's pipeline)
/// wakes the loop (``EventLoop/execute(_:)``); one resumed on the loop
/// itself is processed at the end of the pass, with no wake-up.
///
/// `@unchecked Sendable`: `handle` and the scheduling state are used on
/// the loop's thread only, except for `MHD_resume_connection`, which
/// libmicrohttpd makes safe from any thread, and `stop()`, which runs
/// after the loop has ended.
final class EventLoopDaemon: @unchecked Sendable {
    let loop: EventLoop
    /// Whether an event stream's reader sends its bytes itself (``LibraryPatches``, `StreamPump`).
    let writesEventsDirectly: Bool
    private let handle: OpaquePointer
    @exclusivity(unchecked) private var isRunScheduled = false
    /// A task that schedules a run is on its way to the loop (`resumed()`).
    private let isRunRequested = Atomic<Bool>(false)
    private var isStopped = false

    /// The key under which a loop keeps its daemon among its ``EventLoop/locals``.
    private static let key = Int.min

    /// The daemon of the calling thread's loop, `nil` on any other thread.
    static var current: EventLoopDaemon? {
        EventLoop.current?.locals[key].map { unsafeDowncast($0, to: EventLoopDaemon.self) }
    }

    /// Starts a loop for `handle`, a daemon started without a thread of its own.
    init(handle: OpaquePointer, name: String, writesEventsDirectly: Bool) throws {
        self.handle = handle
        self.writesEventsDirectly = writesEventsDirectly
        loop = try EventLoop(name: name)
        let daemon = LoopConfined(self)
        loop.execute { daemon.value.attach() }
    }

    private func attach() {
        loop.locals[Self.key] = self
        guard let info = epollDescriptor(handle) else { return }
        loop.register(info, for: .readable) { [unowned self] _ in self.scheduleRun() }
        loop.addPassHook { [unowned self] in self.passEnded() }
    }

    /// Has libmicrohttpd process its connections at the end of this pass; on the loop.
    func scheduleRun() {
        guard !isRunScheduled else { return }
        isRunScheduled = true
        loop.runAtPassEnd { [unowned self] in
            self.isRunScheduled = false
            MHD_run(self.handle)
        }
    }

    /// A connection of this daemon was resumed (`MHD_resume_connection`),
    /// on any thread: libmicrohttpd processes it at the loop's next pass.
    ///
    /// From another thread, one task on the loop serves every resume made
    /// before it runs: a pool's pipeline resumes many connections of a loop
    /// in one pass, and each would otherwise hand the loop a task of its own.
    func resumed() {
        if loop.isCurrent { return scheduleRun() }
        guard !isRunRequested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let daemon = LoopConfined(self)
        loop.execute {
            daemon.value.isRunRequested.store(false, ordering: .releasing)
            daemon.value.scheduleRun()
        }
    }

    /// How long the loop may sleep for libmicrohttpd: until its next
    /// connection timeout, or not at all while connections still have work
    /// (libmicrohttpd then wants `MHD_run` again at once). Runs it when due.
    private func passEnded() -> Int {
        var milliseconds: UInt64 = 0
        guard MHD_get_timeout(handle, &milliseconds) == .YES else { return -1 }
        if milliseconds == 0, !isRunScheduled {
            MHD_run(handle)
            guard MHD_get_timeout(handle, &milliseconds) == .YES else { return -1 }
        }
        return Int(min(milliseconds, 60_000))
    }

    /// Stops accepting connections: the listening socket leaves the loop
    /// and closes. Waits until the loop has done it.
    func quiesce() {
        let daemon = LoopConfined(self)
        loop.executeAndWait {
            let socket = MHD_quiesce_daemon(daemon.value.handle)
            if socket >= 0 { close(socket) }
        }
    }

    /// Ends the loop, then stops the daemon here (nothing runs it any more).
    func stop() {
        guard !isStopped else { return }
        isStopped = true
        loop.stop()
        MHD_stop_daemon(handle)
    }
}

/// `MHD_get_daemon_info` is variadic: the daemon's `epoll` descriptor.
private func epollDescriptor(_ handle: OpaquePointer) -> Int32? {
    let descriptor = shim_MHD_get_epoll_fd(handle)
    return descriptor >= 0 ? descriptor : nil
}

// MARK: - Listening sockets

/// A listening socket per event loop, all bound to the same address and
/// port with `SO_REUSEPORT`, so that the kernel spreads new connections
/// over the loops (one socket shared by all would wake every loop for each
/// connection, and the first awake would take them all).
///
/// `SO_REUSEPORT` would also let a second server of the same user listen
/// on the port beside a running one: a socket without it first checks that
/// the port is free, and starting fails if it is not.
struct ListeningSockets {
    let descriptors: [Int32]
    let port: Int

    init(address: SocketAddress, count: Int) throws {
        var address = address
        if address.port != 0 {
            let probe = try Self.socket(address, reusePort: false)
            close(probe)
        }
        var descriptors: [Int32] = []
        do {
            for _ in 0..<count {
                let descriptor = try Self.socket(address, reusePort: true)
                descriptors.append(descriptor)
                if address.port == 0 { address = address.withPort(Self.boundPort(descriptor)) }
            }
        } catch {
            for descriptor in descriptors { close(descriptor) }
            throw error
        }
        self.descriptors = descriptors
        self.port = address.port
    }

    /// A socket bound to `address` and listening; non-blocking and not
    /// inherited by child processes, as libmicrohttpd makes its own.
    private static func socket(_ address: SocketAddress, reusePort: Bool) throws -> Int32 {
        let descriptor = Glibc.socket(
            address.isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            0)
        guard descriptor >= 0 else { throw failure("socket", address) }
        var one: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if reusePort { _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size)) }
        if address.isIPv6 { _ = setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size)) }
        let bound = address.withSockaddr { bind(descriptor, $0, address.length) }
        guard bound == 0, listen(descriptor, SOMAXCONN) == 0 else {
            let error = failure("bind", address)
            close(descriptor)
            throw error
        }
        return descriptor
    }

    private static func boundPort(_ descriptor: Int32) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        let family = storage.ss_family
        return withUnsafePointer(to: &storage) { pointer in
            if family == sa_family_t(AF_INET6) {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
    }

    private static func failure(_ call: String, _ address: SocketAddress) -> HTTPServer.StartError {
        HTTPServer.StartError(description: "cannot listen on \(address) (\(call): \(String(cString: strerror(errno))))")
    }
}
