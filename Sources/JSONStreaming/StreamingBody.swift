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
