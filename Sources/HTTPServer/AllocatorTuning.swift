#if canImport(Glibc)
import Glibc
#endif

/// glibc's allocator, set for a server's pattern of allocations: without
/// its fast bins (`mallopt(M_MXFAST, 0)`).
///
/// A request allocates some fifty small blocks and frees them when it is
/// answered, and an event loop answers many requests in one pass, so the
/// per-thread cache (seven blocks of each size) overflows into the fast
/// bins. libpq then allocates a 2 KB block for each result, and a block
/// of that size first consolidates every fast bin. Without fast bins the
/// overflow goes to the ordinary bins at once, and no consolidation pass
/// runs in the middle of a request (`make bench`, scenario 12, measures it).
///
/// `mallopt` is looked up by name because Swift's Glibc module does not
/// import `malloc.h`. With another C library (or another allocator
/// preloaded that has no `mallopt`) this does nothing. Set once per
/// process, by the first server whose ``LibraryPatches`` allow it.
enum AllocatorTuning {
    /// `M_MXFAST` from glibc's `malloc.h`: the largest size the fast bins take.
    private static let maximumFastSize: Int32 = 1

    /// Turns glibc's fast bins off for the whole process; `false` when
    /// there is no `mallopt` or it refused.
    @discardableResult
    static func disableFastBins() -> Bool {
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let mallopt = dlsym(nil, "mallopt") else { return false }
        return unsafeBitCast(mallopt, to: Mallopt.self)(maximumFastSize, 0) == 1
    }
}
