/// A response body produced piece by piece while the client reads it.
///
/// The HTTP server pulls from a streaming body only when the socket can take
/// more bytes, so a slow client slows the producer down instead of making the
/// server buffer the whole body (back-pressure). Each call appends the next
/// piece to `output`; a piece should be small (a row, a few kilobytes).
///
/// If `write(into:)` throws after the status line has been sent, the server
/// aborts the response: the connection is closed without the final chunk, so
/// a client can never mistake a truncated body for a complete one.
///
/// ```swift
/// final class Countdown: StreamingBody {
///     var n = 3
///     func write(into output: inout [UInt8]) throws -> Bool {
///         output.append(contentsOf: "\(n)\n".utf8)
///         n -= 1
///         return n > 0
///     }
///     func close() {}
/// }
/// ```
///
/// A body is used by one thread at a time (the connection's), never
/// concurrently; it need not be `Sendable`.
public protocol StreamingBody: AnyObject {
    /// Appends the next piece of the body to `output`.
    ///
    /// - Returns: `true` while more is to come, `false` once the body is
    ///   complete (the call may still append a last piece).
    func write(into output: inout [UInt8]) throws -> Bool

    /// Called exactly once when the response is over, whether it completed,
    /// failed or the client went away. Releases what the body holds
    /// (a database connection, a file).
    func close()

    /// Header fields the body can tell once it has been written to its
    /// end (a list's `Content-Range`, from the rows it held): the server
    /// adds them when the body ends within the first block it pulls,
    /// before it sends the header. None by default.
    func headersWhenWhole() -> [(name: String, value: String)]
}

extension StreamingBody {
    public func headersWhenWhole() -> [(name: String, value: String)] { [] }
}

/// A streaming body whose pieces come at their own pace rather than as
/// fast as the client reads: a stream of events (Server-Sent Events) that
/// may have nothing to send for minutes. While it has nothing, it costs
/// the connection no thread: the server sets the connection aside until
/// the body calls the wake-up it was given.
///
/// Its first part may block (rows read from a database): while
/// ``writeMayBlock`` is `true`, the server pulls it on worker threads as
/// any body. Once it is `false`, the server calls ``StreamingBody/write(into:)``
/// on its event loop, where it must return at once with what the body
/// holds, which may be nothing; after a write that appended nothing and
/// returned `true`, the server hands the body a wake-up
/// (``wakeWhenReady(_:)``) and waits for it.
///
/// Such a body is never compressed (a compressor holds back what it has
/// not yet packed, and every event must go out when it comes).
///
/// ```swift
/// final class Ticks: EventStreamingBody {
///     let lock = NSLock(); var ticks: [[UInt8]] = []; var wake: (@Sendable () -> Void)?
///     var writeMayBlock: Bool { false }
///     func write(into output: inout [UInt8]) throws -> Bool {
///         lock.withLock { for tick in ticks { output += tick }; ticks = [] }
///         return true
///     }
///     func wakeWhenReady(_ wake: @escaping @Sendable () -> Void) -> Bool {
///         lock.withLock { if ticks.isEmpty { self.wake = wake; return true } else { return false } }
///     }
///     func close() {}
/// }
/// ```
public protocol EventStreamingBody: StreamingBody {
    /// Whether the next write may block: the server then makes it on a
    /// worker thread; once `false`, on its event loop.
    var writeMayBlock: Bool { get }

    /// Keeps `wake`, to be called once, from any thread and without a
    /// lock of the body held, when the body has something to write or has
    /// ended; returns `true`. Returns `false`, without keeping it, when
    /// the body already has something (the server then writes at once).
    func wakeWhenReady(_ wake: @escaping @Sendable () -> Void) -> Bool
}
