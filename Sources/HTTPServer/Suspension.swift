internal import CMicroHTTPD
internal import CMicroHTTPDPatches
import Locking

/// A connection that an event loop set aside (`MHD_suspend_connection`)
/// while another thread works for it, and the hand-over of what that work
/// produced. libmicrohttpd processes the connection again, calling the
/// access handler or the content reader, once it is resumed.
///
/// Every suspension is resumed exactly once: by the work's end, or by the
/// server's stop (libmicrohttpd must not be stopped with a suspended
/// connection); after the request completes, nothing resumes it. A resume
/// has the connection's loop run libmicrohttpd at the end of its pass: at
/// once when it happens on that loop (a pipeline's answer), else by waking it.
final class Suspension: @unchecked Sendable {
    // `@unchecked Sendable`: the state is touched only with `lock` held.
    // libmicrohttpd's calls are made with the lock held too, so that a
    // resume never races the request's completion.
    let lock = ConditionLock()
    private let connection: OpaquePointer
    let daemon: EventLoopDaemon
    private var isSuspended = false
    /// The request completed or the server stops: never resume again.
    private(set) var isOver = false
    private let registry: SuspensionRegistry

    init(connection: OpaquePointer, daemon: EventLoopDaemon, registry: SuspensionRegistry) {
        self.connection = connection
        self.daemon = daemon
        self.registry = registry
    }

    /// Sets the connection aside; call from its event loop, inside one of
    /// libmicrohttpd's callbacks, with `lock` held.
    func suspendLocked() {
        guard !isSuspended, !isOver else { return }
        isSuspended = true
        registry.add(self)
        MHD_suspend_connection(connection)
    }

    /// Has the connection processed again; with `lock` held.
    func resumeLocked() {
        guard isSuspended else { return }
        isSuspended = false
        registry.remove(self)
        MHD_resume_connection(connection)
        daemon.resumed()
    }

    /// The request completed: forget the connection.
    func end() {
        lock.withLock { endLocked() }
    }

    /// ``end()``, with `lock` held.
    func endLocked() {
        isOver = true
        if isSuspended {
            isSuspended = false
            registry.remove(self)
        }
    }

    /// The server stops: the work will not be waited for.
    func abandon() {
        lock.withLock {
            resumeLocked()
            isOver = true
        }
    }
}

/// The suspended connections of a server, resumed when it stops.
final class SuspensionRegistry: @unchecked Sendable {
    // `@unchecked Sendable`: `suspended` is touched only with `lock` held.
    private let lock = ConditionLock()
    private var suspended: [ObjectIdentifier: Suspension] = [:]

    func add(_ suspension: Suspension) {
        lock.withLock { suspended[ObjectIdentifier(suspension)] = suspension }
    }

    func remove(_ suspension: Suspension) {
        lock.withLock { _ = suspended.removeValue(forKey: ObjectIdentifier(suspension)) }
    }

    /// Resumes every suspended connection, for good.
    func abandonAll() {
        let all = lock.withLock { Array(suspended.values) }
        for suspension in all { suspension.abandon() }
    }
}
