internal import CMicroHTTPDErrorHook

// MARK: - Suspended connections stay in the epoll set

extension Daemon {
    /// Whether a suspended connection's socket stays in its loop's epoll
    /// set: set up once, by the first daemon with event loops to start.
    ///
    /// libmicrohttpd 0.9.75 takes a suspended connection's socket out of its
    /// epoll set and adds it back after the resume: two `epoll_ctl` calls for
    /// every request that waits for the database, each of which frees or
    /// allocates the kernel's record of the registration.
    /// `CMicroHTTPDErrorHook/EpollSuspension.c` keeps the registration and
    /// hides the socket's events from libmicrohttpd until the resume, which
    /// is what the removal was for (BENCHMARKS.md, "Second wave: suspended
    /// sockets stay registered, reads in groups of 16").
    static let keepsSuspendedSockets: Bool = mhd_epoll_suspension_install()
}
