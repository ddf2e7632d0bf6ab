import JSONStreaming
import Locking
import PostgreSQL
import Synchronization

/// One caller's Server-Sent Events: an opening (`retry:`, and `reset`
/// when the caller's state is stale), the list's rows as `snapshot`
/// pages, `ready` with the id changes follow from, then its group's events
/// as they come, read from the group's ``LiveEventLog`` from where the
/// stream stands, and comments that keep proxies from closing it.
///
/// The snapshot is read from the database as the client reads it (on
/// workers, `writeMayBlock`); after it, the stream holds its place in its
/// group's log (the number of the last event it wrote) and the comments
/// not yet sent, and the server writes what came since on its event loop
/// when the stream wakes it. A stream that falls behind the log (a client
/// that stopped reading while more than the log holds came) is dropped:
/// its response ends with an error.
///
/// ```swift
/// let stream = LiveStream()
/// stream.follow(group.log, after: 42)
/// stream.start(opening: LiveEvents.retry(2000), snapshot: snapshot, readyID: "5f3a.42")
/// stream.enqueue(LiveEvents.heartbeat)
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
        /// The group's events, and the number of the last one written.
        var log: LiveEventLog?
        var cursor: UInt64 = 0
        /// In the log's list of streams it wakes at its next events.
        var isWaitingOnLog = false
        /// Comments, and the stream's last words, not yet written.
        var queue: [[UInt8]] = []
        var wake: (@Sendable () -> Void)?
        var isEnded = false
        var isDropped = false
    }

    private var opening: [UInt8]?
    private var snapshot: Snapshot?
    private var readyID: String?
    private let isLive = Atomic<Bool>(false)
    private let state = Locked(State())
    /// Called once when the response is over (the group forgets the stream).
    var onClose: (@Sendable () -> Void)?
    /// Called once if the stream is dropped for falling behind.
    var onDrop: (@Sendable () -> Void)?
    /// When the stream began, for its lifetime.
    let started = ContinuousClock.now

    /// A stream that writes nothing yet: ``follow(_:after:)`` gives it its
    /// group's events, ``start(opening:snapshot:readyID:)`` what it writes
    /// first.
    init() {}

    /// Has the stream write the events of `log` numbered after `cursor`.
    func follow(_ log: LiveEventLog, after cursor: UInt64) {
        state.withLock { state in
            state.log = log
            state.cursor = cursor
        }
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
        let (more, isDropped, droppedNow) = state.withLock { state -> (Bool, Bool, Bool) in
            if state.isDropped { return (false, true, false) }
            if let log = state.log {
                guard let cursor = log.write(after: state.cursor, into: &output) else {
                    state.isDropped = true
                    state.queue = []
                    return (false, true, true)
                }
                state.cursor = cursor
            }
            for chunk in state.queue { output += chunk }
            state.queue.removeAll()
            return (!state.isEnded, false, false)
        }
        if droppedNow { onDrop?() }
        if isDropped { throw LiveStreamDropped() }
        return more
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
            if let log = state.log, !state.isWaitingOnLog {
                guard log.wait(self, after: state.cursor) else { return false }
                state.isWaitingOnLog = true
            }
            state.wake = wake
            return true
        }
    }

    func close() {
        snapshot?.close()
        snapshot = nil
        state.withLock { state in
            // The log may still list the stream among those it wakes: the
            // stream lets go of the log, so that neither keeps the other.
            state.log = nil
            state.queue = []
            state.isEnded = true
            state.wake = nil
        }
        onClose?()
        onClose = nil
    }

    // MARK: - The feed's side

    /// Wakes the stream if it waits for its group's next events (its log
    /// appended some); from any thread.
    func wake() {
        let wake = state.withLock { state -> (@Sendable () -> Void)? in
            state.isWaitingOnLog = false
            defer { state.wake = nil }
            return state.wake
        }
        wake?()
    }

    /// Queues `chunk`, a comment, unless the stream still holds one or is
    /// over, and wakes the connection; from any thread.
    func enqueue(_ chunk: [UInt8]) {
        let wake = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.isEnded, !state.isDropped else { return nil }
            if state.queue.isEmpty { state.queue.append(chunk) }
            defer { state.wake = nil }
            return state.wake
        }
        wake?()
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

    /// Drops the stream if its group's log no longer holds the events it
    /// has yet to write (a client that stopped reading): it takes nothing
    /// more. Returns whether it is dropped, now or before.
    func dropIfBehind() -> Bool {
        let (dropped, now) = state.withLock { state -> (Bool, Bool) in
            if state.isDropped { return (true, false) }
            guard !state.isEnded, let log = state.log, !log.covers(after: state.cursor) else { return (false, false) }
            state.isDropped = true
            state.queue = []
            return (true, true)
        }
        if now { onDrop?() }
        return dropped
    }
}

/// A stream that fell behind by more than its limit was dropped: its
/// response ends with an error, and its caller connects again.
struct LiveStreamDropped: Error, CustomStringConvertible {
    var description: String { "the event stream fell too far behind its changes and was dropped" }
}
