internal import CMicroHTTPD
import JSONStreaming
import Logging

/// Feeds a `StreamingBody` to libmicrohttpd's content reader on an event
/// loop, with the body's pulls (which may block: a database cursor) made
/// on worker threads.
///
/// One of two pumps, one per threading model: with a thread per
/// connection, `StreamReader` pulls on the connection's own thread, which
/// may wait for the body; a loop never may, so this one hands each pull to
/// a worker and suspends the connection meanwhile.
///
/// The reader hands out what the last pull brought and asks for the next
/// block as soon as less than one is left, so one pull runs while the
/// socket drains the block before; when nothing is there yet, the
/// connection is suspended until the pull ends. A pull starts only from
/// the reader, which libmicrohttpd calls only when the socket has room:
/// a slow client slows the producer down, and at most about two blocks
/// wait in memory.
///
/// Ownership: the response holds one retain, released in the free
/// callback. The body is used by one pull at a time, and closed once: when
/// it ends or fails, or when the response is freed (on a worker, since
/// closing may wait for the database).
final class StreamPump: @unchecked Sendable {
    // `@unchecked Sendable`: the state below is touched only with
    // `suspension.lock` held; `body` only by the one pull under way or by
    // its closing; `context` only on the event loop (in the reader).
    private let body: any StreamingBody
    private let context: RequestContext
    private let suspension: Suspension
    private let workers: WorkerPool
    private var pending: [UInt8]
    private var pendingStart = 0
    /// The buffer the next pull fills: a stream uses two buffers in turn,
    /// not a new block per pull (each then copied into `pending`).
    private var spare: [UInt8] = []
    private var isFinished = false
    private var failure: (any Error)?
    private var isPulling = false
    private var isBodyClosed = false
    private var isFreed = false

    /// A pump whose first block (`first`, and possibly `failure`) was already pulled.
    init(
        body: any StreamingBody, first: [UInt8], failure: (any Error)?, context: RequestContext,
        suspension: Suspension, workers: WorkerPool
    ) {
        self.body = body
        self.pending = first
        self.failure = failure
        self.context = context
        self.suspension = suspension
        self.workers = workers
    }

    /// The chunked response reading from the pump, or `nil` (the body is then closed).
    func makeResponse() -> OpaquePointer? {
        let retained = Unmanaged.passRetained(self)
        let response = MHD_create_response_from_callback(
            UInt64.max, StreamReader.blockSize, StreamPump.read, retained.toOpaque(), StreamPump.free
        )
        if response == nil { retained.takeRetainedValue().freed() }
        return response
    }

    /// Closes the body of a pump that will never be queued (the request
    /// ended before its response was ready).
    func discard() {
        freed()
    }

    // MARK: - Event loop

    private func fill(_ buffer: UnsafeMutableRawBufferPointer) -> Int {
        suspension.lock.lock()
        let count = StreamReader.handOut(from: &pending, start: &pendingStart, into: buffer)
        if count > 0 {
            let mustPull = startsPullLocked()
            suspension.lock.unlock()
            if mustPull { workers.submit { self.pull() } }
            context.bytesSent += count
            return count
        }
        if let failure {
            suspension.lock.unlock()
            context.logger.error(
                "aborting the streamed response to \(context.method) \(context.rawPathForLog) after \(context.bytesSent) bytes: \(failure)"
            )
            context.streamFailed = true
            return StreamPump.endWithError
        }
        if isFinished {
            suspension.lock.unlock()
            return StreamPump.endOfStream
        }
        if suspension.isOver {
            // The server stops without waiting for the rest.
            suspension.lock.unlock()
            context.streamFailed = true
            return StreamPump.endWithError
        }
        let mustPull = startsPullLocked()
        suspension.suspendLocked()
        suspension.lock.unlock()
        if mustPull { workers.submit { self.pull() } }
        return 0
    }

    /// Whether a pull must start now (less than a block left, none under way); with the lock held.
    private func startsPullLocked() -> Bool {
        guard !isPulling, !isFinished, failure == nil, !isFreed,
              pending.count - pendingStart < StreamReader.blockSize
        else { return false }
        isPulling = true
        return true
    }

    private func freed() {
        let mustClose = suspension.lock.withLock {
            isFreed = true
            pending = []
            pendingStart = 0
            spare = []
            guard !isPulling, !isBodyClosed else { return false }
            isBodyClosed = true
            return true
        }
        if mustClose {
            let body = self.body
            workers.submit { body.close() }
        }
    }

    // MARK: - Worker

    private func pull() {
        var chunk = suspension.lock.withLock {
            defer { spare = [] }
            return spare
        }
        chunk.removeAll(keepingCapacity: true)
        // Filled to a block and a little past it, by the last value written:
        // room for that, so that the buffer does not double to 128 KB.
        chunk.reserveCapacity(StreamReader.blockSize + StreamReader.blockSize / 4)
        var finished = false
        var failure: (any Error)?
        do {
            while chunk.count < StreamReader.blockSize {
                if !(try body.write(into: &chunk)) {
                    finished = true
                    break
                }
            }
        } catch {
            failure = error
        }
        let mustClose = suspension.lock.withLock {
            isPulling = false
            if !isFreed {
                if pending.count == pendingStart {
                    // All handed out: the chunk becomes what is pending, as it is.
                    swap(&pending, &chunk)
                    pendingStart = 0
                } else {
                    pending.append(contentsOf: chunk)
                }
                spare = chunk
                isFinished = finished
                self.failure = failure
            }
            suspension.resumeLocked()
            guard finished || failure != nil || isFreed, !isBodyClosed else { return false }
            isBodyClosed = true
            return true
        }
        if mustClose { body.close() }
    }

    // MARK: - Callbacks

    private static let endOfStream = -1
    private static let endWithError = -2

    private static let read: @convention(c) (
        UnsafeMutableRawPointer?, UInt64, UnsafeMutablePointer<CChar>?, Int
    ) -> Int = { cls, _, buffer, capacity in
        Unmanaged<StreamPump>.fromOpaque(cls!).takeUnretainedValue()
            .fill(UnsafeMutableRawBufferPointer(start: buffer, count: capacity))
    }

    private static let free: @convention(c) (UnsafeMutableRawPointer?) -> Void = { cls in
        Unmanaged<StreamPump>.fromOpaque(cls!).takeRetainedValue().freed()
    }
}
