#if canImport(Glibc)
import Glibc
#endif

/// The process's limit on open file descriptors (`RLIMIT_NOFILE`), which
/// bounds the connections a server can hold: each takes one descriptor.
///
/// Most systems start a process with a soft limit of 1,024 and a much higher
/// hard limit (524,288 on systemd); the soft limit exists for programs that
/// still use `select`, whose descriptor sets stop at 1,024. libmicrohttpd
/// here polls with epoll, so the server raises the soft limit to the hard
/// one when it starts, as Go's runtime, nginx (`worker_rlimit_nofile`) and
/// systemd's own services do.
enum FileDescriptorLimit {
    /// Raises the soft limit to the hard limit; returns the soft limit in
    /// effect afterwards (the unchanged one if raising failed).
    static func raiseToHardLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(openFilesResource, &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(openFilesResource, &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)  // RLIM_INFINITY is UInt.max
    }

    /// `RLIMIT_NOFILE`, which Glibc imports as an enum case on Linux.
    private static var openFilesResource: __rlimit_resource_t {
        __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    }
}
