import JSONStreaming
import Locking
import PostgreSQL
import Synchronization

/// One caller's Server-Sent Events: an opening (`retry:`, and `reset`
/// when the caller's state is stale), the list's rows as `snapshot`
/// pages, `ready` with the id changes follow from, then the events its
/// group hands it (``enqueue(_:eventBytes:)``) as they come, and
/// comments that keep proxies from closing it.
///
/// The snapshot is read from the database as the client reads it (on
/// workers, `writeMayBlock`); after it, the stream holds only the events
/// not yet sent, each a buffer its whole group shares, and the server
/// writes them on its event loop when the stream wakes it. A stream that
/// falls behind by more than its limit (a client that stopped reading) is
/// dropped: it keeps nothing more, and its response ends with an error.
///
/// ```swift
/// let stream = LiveStream(limit: 1 << 20)
/// stream.start(opening: LiveEvents.retry(2000), snapshot: snapshot, readyID: "5f3a.42")
/// stream.enqueue(LiveEvents.event("update", id: "5f3a.43", data: row), eventBytes: 120)
/// ```
final class LiveStream: EventStreamingBody, @unchecked Sendable {
    // `@unchecked Sendable`: `opening` and `snapshot` are touched by the
    // one thread that writes the body at a time (the server's), and
    // `snapshot` is let go before `isLive` is set; the fields of `state`
    // only with its lock held.

    /// The rows of the snapshot, as the list runs for this caller.
    final class Snapshot {
        let rows: any RowSource
        /// Where `rows` come from, given back once they are read.
        let lease: (pool: ConnectionPool, connection: Connection)?
        let options: JSONRenderingOptions

        init(rows: any RowSource, lease: (pool: ConnectionPool, connection: Connection)?, options: JSONRenderingOptions) {
            self.rows = rows
            self.lease = lease
            self.options = options
        }

        func close() {
            rows.close()
            if let lease { lease.pool.release(lease.connection) }
        }
    }

    private struct State {
        var queue: [[UInt8]] = []
        /// Bytes of events (not comments) waiting, which the limit bounds.
        var eventBytes = 0
        var wake: (@Sendable () -> Void)?
        var isEnded = false
        var isDropped = false
    }

    private var opening: [UInt8]?
    private var snapshot: Snapshot?
    private var readyID: String?
    private let isLive = Atomic<Bool>(false)
    private let state = Locked(State())
    /// The most bytes of events that may wait for the client.
    let limit: Int
    /// Called once when the response is over (the group forgets the stream).
    var onClose: (@Sendable () -> Void)?
    /// When the stream began, for its lifetime.
    let started = ContinuousClock.now

    /// A stream that takes events from now on, and falls behind by at
    /// most `limit` bytes of them; ``start(opening:snapshot:readyID:)``
    /// says what it writes first, before the server writes it.
    init(limit: Int) {
        self.limit = limit
    }

    /// Writes `opening`, then the rows of `snapshot` and `ready` (with
    /// `readyID`), then the events; without a snapshot (a caller that
    /// resumes), `opening` and then the events at once.
    func start(opening: [UInt8], snapshot: Snapshot?, readyID: String?) {
        self.opening = opening
        self.snapshot = snapshot
        self.readyID = readyID
        if snapshot == nil { isLive.store(true, ordering: .releasing) }
    }

    deinit {
        snapshot?.close()
    }

    // MARK: - The server's side

    var writeMayBlock: Bool { !isLive.load(ordering: .acquiring) }

    /// A `snapshot` page's rows (about this many bytes).
    static let pageLimit = 16_384

    func write(into output: inout [UInt8]) throws -> Bool {
        if let opening {
            output += opening
            self.opening = nil
            if snapshot != nil { return true }
        }
        if let snapshot {
            try writePage(of: snapshot, into: &output)
            return true
        }
        return try state.withLock { state in
            if state.isDropped { throw LiveStreamDropped() }
            if output.isEmpty, state.queue.count == 1 {
                // The group's buffer itself, not a copy.
                output = state.queue[0]
            } else {
                for chunk in state.queue { output += chunk }
            }
            state.queue.removeAll()
            state.eventBytes = 0
            return !state.isEnded
        }
    }

    /// A page of rows, and, after the last, `ready`: the stream goes live.
    private func writePage(of snapshot: Snapshot, into output: inout [UInt8]) throws {
        let rows = snapshot.rows
        let before = rows.rowsWritten
        let writer = ByteWriter(capacity: 4 << 10)
        var afterRow = false
        let more = try rows.writeRows(options: snapshot.options, afterRow: &afterRow, limit: Self.pageLimit, to: writer)
        if rows.rowsWritten > before {
            output += LiveEvents.snapshotOpening
            writer.flush(into: &output)
            output += LiveEvents.snapshotClosing
        }
        guard !more else { return }
        snapshot.close()
        self.snapshot = nil
        output += LiveEvents.event("ready", id: readyID, data: Array("{}".utf8))
        isLive.store(true, ordering: .releasing)
    }

    func wakeWhenReady(_ wake: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            guard state.queue.isEmpty, !state.isEnded, !state.isDropped else { return false }
            state.wake = wake
            return true
        }
    }

    func close() {
        snapshot?.close()
        snapshot = nil
        state.withLock { state in
            state.queue = []
            state.isEnded = true
            state.wake = nil
        }
        onClose?()
        onClose = nil
    }

    // MARK: - The feed's side

    /// Queues `chunk` (events of `eventBytes` bytes, or a comment of none)
    /// and wakes the connection; from any thread. Returns `false` when the
    /// stream is over, or is dropped now because more than its limit of
    /// events still waited for its client: it takes nothing more.
    @discardableResult
    func enqueue(_ chunk: [UInt8], eventBytes: Int) -> Bool {
        let (wake, taken) = state.withLock { state -> ((@Sendable () -> Void)?, Bool) in
            guard !state.isEnded, !state.isDropped else { return (nil, false) }
            // Judged by what still waits from before: a client that keeps
            // up takes a batch of any size.
            if state.eventBytes > limit {
                state.isDropped = true
                state.queue = []
            } else {
                state.queue.append(chunk)
                state.eventBytes += eventBytes
            }
            defer { state.wake = nil }
            return (state.wake, !state.isDropped)
        }
        wake?()
        return taken
    }

    /// Ends the stream after what it holds and `final` (a `reset`, say);
    /// from any thread.
    func end(after final: [UInt8]? = nil) {
        let wake = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.isEnded, !state.isDropped else { return nil }
            if let final { state.queue.append(final) }
            state.isEnded = true
            defer { state.wake = nil }
            return state.wake
        }
        wake?()
    }

    /// Whether the stream takes no more events (ended, dropped or closed).
    var isOver: Bool { state.withLock { $0.isEnded || $0.isDropped } }

    /// Whether the stream was dropped for falling behind.
    var isDropped: Bool { state.withLock { $0.isDropped } }
}

/// A stream that fell behind by more than its limit was dropped: its
/// response ends with an error, and its caller connects again.
struct LiveStreamDropped: Error, CustomStringConvertible {
    var description: String { "the event stream fell too far behind its changes and was dropped" }
}
