#if canImport(Glibc)
import Glibc
#endif
internal import CMicroHTTPDPatches

// MARK: - The memory of idle connections

extension Daemon {
    // libmicrohttpd 0.9.75 zeroes a connection's whole pool (`memoryLimit`,
    // 32 KB by default) after every request, which makes all of it resident
    // for as long as the connection stays open; the pages given back keep
    // many idle keep-alive connections small (the bench's scenario 7).
    // `CMicroHTTPDPatches/PoolRelease.c` says how. Each function below does nothing for a server whose
    // ``LibraryPatches/releasesPoolPages`` is off: libmicrohttpd then zeroes
    // as it does.

    /// A connection whose previous request completed less than this long
    /// ago is busy: its pool is left as it is, to be filled again soon.
    static let busyWithin: UInt64 = 1_000_000_000

    /// Called when a request on `connection` has completed, just before
    /// libmicrohttpd resets the connection's pool on the same thread: the
    /// pool's pages go back to the kernel unless the connection is busy, in
    /// which case they are neither given back nor zeroed. Giving them back
    /// costs the next request page faults and the process a TLB shootdown,
    /// which a connection serving one request after another would pay for
    /// nothing; one that has served its first request, or waited a while,
    /// most likely stays idle now.
    static func releasePoolUnlessBusy(_ connection: OpenConnection) {
        guard connection.processor.libraryPatches.releasesPoolPages else { return }
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
        let now = UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
        let previous = connection.lastCompleted.exchange(now, ordering: .relaxed)
        mhd_pool_reset_next(previous == 0 || now - previous > busyWithin ? MHD_POOL_RESET_RELEASE : MHD_POOL_RESET_KEEP)
    }

    /// Called just before a response is queued. Building the response's
    /// head, libmicrohttpd shrinks the connection's read buffer to the bytes
    /// it holds and zeroes the space it gives back to the pool (about 16 KB
    /// for a small request): free pool space, which libmicrohttpd writes
    /// before it reads (PoolRelease.c), so that zeroing is skipped.
    static func leaveReadBufferUnzeroed(_ connection: ClientConnection) {
        guard connection.releasesPoolPages else { return }
        mhd_pool_reset_next(MHD_POOL_RESET_KEEP)
    }

    /// Called when a request ended otherwise than completed: no word of
    /// ``leaveReadBufferUnzeroed(_:)`` is left for a later zeroing.
    static func zeroPoolAsUsual(_ connection: OpenConnection) {
        guard connection.processor.libraryPatches.releasesPoolPages else { return }
        mhd_pool_reset_next(MHD_POOL_RESET_ZERO)
    }
}
