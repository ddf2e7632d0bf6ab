internal import CMicroHTTPDErrorHook
import Synchronization

/// Counts the streamed responses under way in the process and, when the
/// last one ends, gives the heap's free memory back to the kernel.
///
/// A stream's buffers and its database results (a block of rows and the
/// rows attached to it) are allocated and freed by the worker thread that
/// happens to pull it, each in the malloc arena of its thread; glibc keeps
/// an arena's freed memory for later unless it lies at the arena's very
/// top. After 50 concurrent streams the server kept 60 MB more than before
/// them, for good (BENCHMARKS.md, scenario 8). `malloc_trim(0)` returns
/// the free pages of every arena; it takes a few milliseconds, once per
/// burst of streams rather than per request.
enum StreamMemory {
    private static let streams = Atomic<Int>(0)

    /// A streamed response has started.
    static func began() {
        streams.add(1, ordering: .relaxed)
    }

    /// A streamed response has ended (its body closed); the last one
    /// trims the heap, on the calling thread.
    static func ended() {
        if streams.subtract(1, ordering: .relaxed).newValue == 0 {
            _ = malloc_trim(0)
        }
    }
}
