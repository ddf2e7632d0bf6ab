#if canImport(Glibc)
import Glibc
#endif
internal import CMicroHTTPDErrorHook

// MARK: - The memory of idle connections

extension Daemon {
    /// Whether libmicrohttpd gives the pages of a connection's memory pool
    /// back to the kernel after each request rather than zeroing them: set
    /// up once, by the first daemon to start.
    ///
    /// libmicrohttpd 0.9.75 zeroes a connection's whole pool
    /// (`memoryLimit`, 32 KB by default) after every request, which makes
    /// all of it resident for as long as the connection stays open: 10,000
    /// idle keep-alive connections held 343 MB. With the pages given back,
    /// 63 MB (BENCHMARKS.md, scenario 7); `CMicroHTTPDErrorHook/PoolRelease.c`
    /// says how.
    static let releasesPoolPages: Bool = mhd_pool_release_install()

    /// A connection whose previous request completed less than this long
    /// ago is busy: its pool is zeroed in place, to be filled again soon.
    static let busyWithin: UInt64 = 1_000_000_000

    /// Called when a request on `connection` has completed, just before
    /// libmicrohttpd resets the connection's pool on the same thread: the
    /// pool's pages go back to the kernel unless the connection is busy.
    /// Giving them back costs the next request page faults and the process
    /// a TLB shootdown, 15 µs of CPU per request, which a connection serving
    /// one request after another would pay for nothing; one that has served
    /// its first request, or waited a while, most likely stays idle now.
    static func releasePoolUnlessBusy(_ connection: OpenConnection) {
        guard releasesPoolPages else { return }
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        let now = UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
        let previous = connection.lastCompleted.exchange(now, ordering: .relaxed)
        mhd_pool_release_next(previous == 0 || now - previous > busyWithin)
    }
}
