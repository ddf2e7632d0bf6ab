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

    private init(body: any StreamingBody, context: RequestContext) {
        self.body = body
        self.context = context
        pending.reserveCapacity(Self.blockSize)
    }

    /// A chunked response pulling from `body`, or `nil` (with `body`
    /// closed) if libmicrohttpd could not create one.
    ///
    /// A body that ends within the first block (one employee, an error
    /// list) goes out as a fixed-length response instead: headers and body
    /// then leave in one `send`, not three (headers, chunk, last chunk).
    static func makeResponse(body: any StreamingBody, context: RequestContext) -> OpaquePointer? {
        let stream = StreamReader(body: body, context: context)
        if context.method != .head, let whole = stream.prefetch() {
            let response = whole.withUnsafeBytes { buffer in
                MHD_create_response_from_buffer(
                    buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress), .RESPMEM_MUST_COPY
                )
            }
            stream.close()
            if response != nil { context.bytesSent = whole.count }
            return response
        }
        let reader = Unmanaged.passRetained(stream)
        // UInt64.max is MHD_SIZE_UNKNOWN, a macro Swift does not import.
        let response = MHD_create_response_from_callback(
            UInt64.max, blockSize, StreamReader.read, reader.toOpaque(), StreamReader.free
        )
        if response == nil {
            reader.takeRetainedValue().close()
        }
        return response
    }

    /// Pulls up to one block from the body before the response is queued.
    /// Returns the whole body if it ended within that block without an
    /// error; otherwise what was pulled (and any failure) stays pending for
    /// the reader, as if `fill` had pulled it.
    private func prefetch() -> [UInt8]? {
        do {
            while pending.count < Self.blockSize {
                if !(try body.write(into: &pending)) {
                    isFinished = true
                    return pending
                }
            }
        } catch {
            failure = error
        }
        return nil
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
        let count = min(pending.count - pendingStart, buffer.count)
        guard count > 0 else { return 0 }
        pending.withUnsafeBytes { bytes in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[pendingStart..<(pendingStart + count)]))
        }
        pendingStart += count
        if pendingStart == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingStart = 0
        } else if pendingStart >= Self.blockSize {
            pending.removeFirst(pendingStart)
            pendingStart = 0
        }
        context.bytesSent += count
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
