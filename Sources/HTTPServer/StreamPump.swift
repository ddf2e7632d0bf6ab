internal import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#endif
import JSONStreaming
import Logging

/// Feeds a `StreamingBody` to libmicrohttpd's content reader on an event
/// loop, with the body's pulls (which may block: a database cursor) made
/// on worker threads: a loop never waits for a body, so each pull goes to
/// a worker and the connection is suspended while the reader has nothing
/// to hand out.
///
/// A stream holds two buffers of one block each, allocated once: the one
/// the reader hands out, and the one the next pull fills while the socket
/// drains the first. A pull starts as soon as the reader begins on a block
/// and the other buffer is free; when the reader has handed out its block
/// and the next is not there yet, the connection is suspended until the
/// pull ends. A pull starts only from the reader, which libmicrohttpd calls
/// only when the socket has room: a slow client slows the producer down,
/// and at most two blocks wait in memory. Fixed buffers, rather than one
/// that a pull appends to (which grows to several blocks), bound each
/// stream's memory, so that many concurrent streams stay small.
///
/// An ``EventStreamingBody`` (events that come when they come) is pulled
/// on workers while its writes may block; after that the reader writes it
/// on the loop itself, and when it has nothing to send, the connection is
/// suspended until the body wakes it: an idle stream holds no thread and
/// no block, only what the body keeps.
///
/// With the event-writes patch (``LibraryPatches``), an event stream's
/// reader sends its bytes to the socket itself, as soon as it has them:
/// libmicrohttpd would send what the reader gave only at its next pass over
/// its connections, which with thousands of streams is an event's whole
/// wait over again. What the socket does not take at once is handed to
/// libmicrohttpd, which sends it when the socket has room and only then
/// calls the reader again, so bytes never overtake each other. The response
/// is sent without chunks (it ends when its connection closes), since a
/// send cut short by a full socket would otherwise leave a chunk half sent.
///
/// Ownership: the response holds one retain, released in the free
/// callback. The body is used by one pull at a time, and closed once: when
/// it ends or fails, or when the response is freed (on a worker, since
/// closing may wait for the database).
final class StreamPump: @unchecked Sendable {
    // `@unchecked Sendable`: the state below is touched only with
    // `suspension.lock` held; `body` only by the one pull under way, by
    // the reader while no pull is (an event body's writes on the loop), or
    // by its closing; `context` only on the event loop (in the reader).
    private let body: any StreamingBody
    /// The body, when its pieces come at their own pace.
    private let events: (any EventStreamingBody)?
    private let context: RequestState
    private let suspension: Suspension
    private let workers: WorkerPool
    /// The block the reader hands out, from `pendingStart` on.
    private var pending: [UInt8]
    private var pendingStart = 0
    /// The block the last pull brought, which the reader takes once
    /// `pending` is handed out; empty when there is none.
    private var filled: [UInt8] = []
    /// The empty buffer the next pull fills (taken by the pull meanwhile).
    private var spare: [UInt8] = []
    private var isFinished = false
    private var failure: (any Error)?
    private var isPulling = false
    private var isBodyClosed = false
    private var isFreed = false
    /// The socket the reader sends an event stream's bytes to itself; -1
    /// when libmicrohttpd sends them. Set on the loop before the response
    /// is queued.
    private var directSocket: Int32 = -1

    /// A pump whose first block (`first`, and possibly `failure`) was already pulled.
    init(
        body: any StreamingBody, first: [UInt8], failure: (any Error)?, context: RequestState,
        suspension: Suspension, workers: WorkerPool
    ) {
        self.body = body
        self.events = body as? any EventStreamingBody
        self.pending = first
        self.failure = failure
        self.context = context
        self.suspension = suspension
        self.workers = workers
    }

    /// How many bytes a pull writes before it hands its block over. A
    /// pull starts only once the reader has taken the block before, so
    /// each block costs a hand-off to a worker and, when the client reads
    /// faster than the pull, a suspension: smaller blocks would multiply
    /// those for mid-sized lists, to save little memory with many streams
    /// open (`make bench`, scenarios 5 and 8).
    static let blockSize = 64 << 10
    /// What a block's buffer is allocated with: the block and room for the
    /// value written last, which ends past it, so that the buffer never grows.
    static let bufferCapacity = blockSize + blockSize / 4

    /// The buffer libmicrohttpd allocates with each response, for reads of
    /// a body sent without chunks (to an HTTP/1.0 client). A chunked body
    /// is read straight into the connection's write buffer, from its memory
    /// pool (`Daemon.memoryLimit`, 32 KB), so a larger one (64 KB, zeroed)
    /// would only cost each stream memory.
    static let responseBufferSize = 16 << 10

    /// Grows `first`, the buffer a body's first block is written to, to
    /// a block's buffer once it holds more than a small body: a buffer
    /// left to double would keep twice that for the whole stream.
    static func reserveBlock(_ first: inout [UInt8]) {
        if first.count >= 2 << 10, first.capacity < bufferCapacity {
            first.reserveCapacity(bufferCapacity)
        }
    }

    /// The most an event stream's reader sends itself in one call.
    static let directSendLimit = 256 << 10

    /// The buffer of an event stream's response (for an HTTP/1.0 client):
    /// events are small, and thousands of streams stay open.
    static let eventResponseBufferSize = 1 << 10

    /// The response reading from the pump, for `connection`, or `nil` (the
    /// body is then closed): chunked, or for an event stream whose reader
    /// sends its bytes itself (not over TLS), ending with its connection.
    func makeResponse(for connection: OpaquePointer) -> OpaquePointer? {
        let retained = Unmanaged.passRetained(self)
        let response = MHD_create_response_from_callback(
            UInt64.max, events == nil ? StreamPump.responseBufferSize : StreamPump.eventResponseBufferSize, StreamPump.read,
            retained.toOpaque(), StreamPump.free
        )
        guard let response else {
            retained.takeRetainedValue().freed()
            return nil
        }
        if events != nil, context.method != .head, suspension.daemon.writesEventsDirectly, shim_MHD_get_tls_session(connection) == nil {
            let socket = shim_MHD_get_connection_fd(connection)
            if socket >= 0, shim_MHD_set_response_flags(response, .RF_HTTP_1_0_COMPATIBLE_STRICT) == .YES {
                // Each event goes out when it comes, not after an acknowledgement of the one before.
                var one: Int32 = 1
                _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                suspension.lock.withLock { directSocket = socket }
            }
        }
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
        var sentHere = 0
        // A pull started while the reader sends a block itself, submitted
        // on whichever way the reader returns (it ends only with the pull).
        var pulls = false
        func submittingPull(_ result: Int) -> Int {
            if pulls { workers.submit { self.pull() } }
            return result
        }
        while true {
            if pendingStart == pending.count, !filled.isEmpty {
                // The next block becomes the one handed out; the one handed
                // out, emptied, the buffer for the pull after.
                swap(&pending, &filled)
                pendingStart = 0
                filled.removeAll(keepingCapacity: true)
                swap(&spare, &filled)
            }
            if pendingStart == pending.count, filled.isEmpty, failure == nil, !isFinished, let events, !isPulling,
                !events.writeMayBlock
            {
                guard nextEventsLocked(events) else {
                    suspension.lock.unlock()
                    return submittingPull(StreamPump.endWithError)
                }
            }
            // Sent here when the reader sends its bytes itself; what the
            // socket does not take, and what comes past `directSendLimit` in
            // one call (so that one stream cannot hold the loop), goes to
            // libmicrohttpd below, which calls the reader again once it is sent.
            guard directSocket >= 0, pendingStart < pending.count, sentHere < Self.directSendLimit else { break }
            let before = pendingStart
            // The next block is pulled while this one goes out.
            pulls = startsPullLocked() || pulls
            guard sendDirectlyLocked() else {
                suspension.lock.unlock()
                return submittingPull(StreamPump.endWithError)
            }
            sentHere += pendingStart - before
            if pendingStart < pending.count { break }
        }
        // Only copied: the buffer stays whole until it is swapped out.
        let count = Self.copy(from: pending, start: &pendingStart, into: buffer)
        if count > 0 {
            let mustPull = startsPullLocked() || pulls
            suspension.lock.unlock()
            if mustPull { workers.submit { self.pull() } }
            context.bytesSent += count
            return count
        }
        if let failure {
            suspension.lock.unlock()
            context.logger.error(
                "aborting the streamed response to \(context.methodForLog) \(context.rawPathForLog) after \(context.bytesSent) bytes: \(failure)"
            )
            context.streamFailed = true
            return submittingPull(StreamPump.endWithError)
        }
        if isFinished {
            suspension.lock.unlock()
            return submittingPull(StreamPump.endOfStream)
        }
        if suspension.isOver {
            // The server stops without waiting for the rest.
            suspension.lock.unlock()
            context.streamFailed = true
            return submittingPull(StreamPump.endWithError)
        }
        let mustPull = startsPullLocked() || pulls
        suspension.suspendLocked()
        suspension.lock.unlock()
        if mustPull { workers.submit { self.pull() } }
        return 0
    }

    /// An event body's next pieces, written here on the loop into `pending`;
    /// `pending` stays empty when the body ended (`isFinished`), the server
    /// stops, or the connection is suspended until the body wakes it.
    /// `false` when the body failed (logged, `failure` set). With
    /// `suspension.lock` held.
    private func nextEventsLocked(_ events: any EventStreamingBody) -> Bool {
        // The blocks of the body's first part are let go: an idle stream keeps none.
        pending = []
        pendingStart = 0
        spare = []
        while true {
            var next: [UInt8] = []
            let more: Bool
            do {
                more = try events.write(into: &next)
            } catch {
                failure = error
                context.logger.error(
                    "aborting the streamed response to \(context.methodForLog) \(context.rawPathForLog) after \(context.bytesSent) bytes: \(error)"
                )
                context.streamFailed = true
                return false
            }
            if !more { isFinished = true }
            if !next.isEmpty {
                pending = next
                return true
            }
            if !more || suspension.isOver { return true }
            let suspension = suspension
            if events.wakeWhenReady({ suspension.lock.withLock { suspension.resumeLocked() } }) {
                suspension.suspendLocked()
                return true
            }
        }
    }

    /// Sends what `pending` holds from `pendingStart` on to `directSocket`,
    /// as much as the socket takes now, and moves `pendingStart` past it;
    /// `false` when the connection is gone. With `suspension.lock` held.
    private func sendDirectlyLocked() -> Bool {
        while pendingStart < pending.count {
            let sent = pending.withUnsafeBytes { bytes in
                send(directSocket, bytes.baseAddress! + pendingStart, bytes.count - pendingStart, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
            }
            if sent > 0 {
                pendingStart += sent
                context.bytesSent += sent
            } else if sent < 0, errno == EINTR {
                continue
            } else {
                // A full socket: libmicrohttpd sends the rest when it has room.
                return sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
            }
        }
        return true
    }

    /// Copies what `pending` holds from `start` on into `buffer`, as much
    /// as fits, and moves `start` past it. Returns the count.
    private static func copy(from pending: [UInt8], start: inout Int, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(pending.count - start, buffer.count)
        guard count > 0 else { return 0 }
        pending.withUnsafeBytes { bytes in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + count)]))
        }
        start += count
        return count
    }

    /// Whether a pull must start now (the other buffer free, none under
    /// way, and a body that is not written on the loop); with the lock held.
    private func startsPullLocked() -> Bool {
        guard !isPulling, !isFinished, failure == nil, !isFreed, filled.isEmpty, events?.writeMayBlock ?? true else { return false }
        isPulling = true
        return true
    }

    private func freed() {
        let mustClose = suspension.lock.withLock {
            isFreed = true
            pending = []
            pendingStart = 0
            filled = []
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
        chunk.reserveCapacity(StreamPump.bufferCapacity)
        var finished = false
        var failure: (any Error)?
        do {
            while chunk.count < StreamPump.blockSize {
                let before = chunk.count
                if !(try body.write(into: &chunk)) {
                    finished = true
                    break
                }
                // An event body with nothing more for now: the reader writes it from here on.
                if events != nil, chunk.count == before { break }
            }
        } catch {
            failure = error
        }
        let mustClose = suspension.lock.withLock {
            isPulling = false
            if !isFreed {
                filled = chunk
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

    private static let read:
        @convention(c) (
            UnsafeMutableRawPointer?, UInt64, UnsafeMutablePointer<CChar>?, Int
        ) -> Int = { cls, _, buffer, capacity in
            // `cls` is the context this server registered with libmicrohttpd: never nil.
            Unmanaged<StreamPump>.fromOpaque(cls!).takeUnretainedValue()
                .fill(UnsafeMutableRawBufferPointer(start: buffer, count: capacity))
        }

    private static let free: @convention(c) (UnsafeMutableRawPointer?) -> Void = { cls in
        // `cls` is the context this server registered with libmicrohttpd: never nil.
        Unmanaged<StreamPump>.fromOpaque(cls!).takeRetainedValue().freed()
    }
}
