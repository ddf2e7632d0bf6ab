internal import CMicroHTTPD
import JSONStreaming
import Logging

/// Feeds a `StreamingBody` to libmicrohttpd's content-reader callback.
///
/// libmicrohttpd calls the reader only when the socket has room for more,
/// so the producer is pulled at the client's pace (back-pressure). The
/// reader hands over what is left from the previous pull first, then pulls
/// until it has enough to fill the block or the body ends.
///
/// Ownership: the response holds one retain (taken in `makeResponse`),
/// released in the free callback, which also closes the body. A HEAD
/// response never calls the reader, but is freed all the same.
final class StreamReader {
    /// Block size libmicrohttpd asks for (the chunk size on the wire).
    static let blockSize = 64 << 10

    private let body: any StreamingBody
    private let context: RequestContext
    private var pending: [UInt8] = []
    private var pendingStart = 0
    private var isFinished = false
    private var failure: (any Error)?
    private var isClosed = false

    private init(body: any StreamingBody, context: RequestContext, pending: [UInt8], failure: (any Error)?) {
        self.body = body
        self.context = context
        self.pending = pending
        self.failure = failure
    }

    /// A chunked response pulling from `body`, or `nil` (with `body`
    /// closed) if libmicrohttpd could not create one.
    ///
    /// A body that ends within the first block (one employee, an error
    /// list) goes out as a fixed-length response instead: headers and body
    /// then leave in one `send`, not three (headers, chunk, last chunk).
    /// That case needs no reader (saving its allocation per request): the
    /// block is pulled here, and handed to a reader only if the body goes on.
    static func makeResponse(body: any StreamingBody, context: RequestContext) -> (OpaquePointer?, isChunked: Bool) {
        var pending: [UInt8] = []
        // Room for a small body; a longer one grows the buffer to a block
        // as it goes. A whole block allocated and freed per request cost
        // more than the body: freeing 64 KB or more makes `free` consolidate
        // the arena's small chunks.
        pending.reserveCapacity(4 << 10)
        var failure: (any Error)?
        // A HEAD pulls the first block too, so that it gets the GET's framing
        // (`Content-Length` or chunked); libmicrohttpd sends no body for it.
        do {
            while pending.count < blockSize {
                if !(try body.write(into: &pending)) {
                    body.close()
                    let response = Connection.makeResponse(sending: pending, for: context)
                    if response != nil, context.method != .head { context.bytesSent = pending.count }
                    return (response, false)
                }
            }
        } catch {
            // What was pulled, and the failure, stay pending for the
            // reader, as if `fill` had pulled them.
            failure = error
        }
        let reader = Unmanaged.passRetained(StreamReader(body: body, context: context, pending: pending, failure: failure))
        // UInt64.max is MHD_SIZE_UNKNOWN, a macro Swift does not import.
        let response = MHD_create_response_from_callback(
            UInt64.max, blockSize, StreamReader.read, reader.toOpaque(), StreamReader.free
        )
        if response == nil {
            reader.takeRetainedValue().close()
        }
        return (response, true)
    }

    /// Fills `buffer` with up to `buffer.count` bytes; 0 only at the end.
    /// What the producer wrote before it failed still goes out; the failure
    /// is reported on the next call.
    private func fill(_ buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if let failure, pending.count == pendingStart { throw failure }
        while !isFinished && failure == nil && pending.count - pendingStart < buffer.count {
            do {
                if !(try body.write(into: &pending)) { isFinished = true }
            } catch {
                guard pending.count > pendingStart else { throw error }
                failure = error
            }
        }
        let count = Self.handOut(from: &pending, start: &pendingStart, into: buffer)
        context.bytesSent += count
        return count
    }

    /// Copies what `pending` holds from `start` on into `buffer`, as much
    /// as fits, and drops what was handed out (at once when all of it was,
    /// else once a block's worth has gathered). Returns the count.
    static func handOut(from pending: inout [UInt8], start: inout Int, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let count = copy(from: pending, start: &start, into: buffer)
        guard count > 0 else { return 0 }
        if start == pending.count {
            pending.removeAll(keepingCapacity: true)
            start = 0
        } else if start >= blockSize {
            pending.removeFirst(start)
            start = 0
        }
        return count
    }

    /// Copies what `pending` holds from `start` on into `buffer`, as much
    /// as fits, and moves `start` past it. Returns the count.
    static func copy(from pending: [UInt8], start: inout Int, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(pending.count - start, buffer.count)
        guard count > 0 else { return 0 }
        pending.withUnsafeBytes { bytes in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + count)]))
        }
        start += count
        return count
    }

    private func close() {
        guard !isClosed else { return }
        isClosed = true
        body.close()
    }

    // MARK: - Callbacks

    private static let endOfStream = -1
    private static let endWithError = -2

    private static let read: @convention(c) (
        UnsafeMutableRawPointer?, UInt64, UnsafeMutablePointer<CChar>?, Int
    ) -> Int = { cls, _, buffer, capacity in
        let reader = Unmanaged<StreamReader>.fromOpaque(cls!).takeUnretainedValue()
        do {
            let count = try reader.fill(UnsafeMutableRawBufferPointer(start: buffer, count: capacity))
            return count > 0 ? count : endOfStream
        } catch {
            reader.context.logger.error(
                "aborting the streamed response to \(reader.context.method) \(reader.context.rawPathForLog) after \(reader.context.bytesSent) bytes: \(error)"
            )
            reader.context.streamFailed = true
            return endWithError
        }
    }

    private static let free: @convention(c) (UnsafeMutableRawPointer?) -> Void = { cls in
        Unmanaged<StreamReader>.fromOpaque(cls!).takeRetainedValue().close()
    }
}
