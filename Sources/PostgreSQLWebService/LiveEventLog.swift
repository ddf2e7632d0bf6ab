import Locking

/// A group's last events, oldest first, which each of its streams reads
/// from where it stands (its cursor, the number of the last event it
/// wrote): the events are kept once per group, not queued on each stream,
/// and a batch touches only the streams that wait for it.
///
/// The log holds every event after ``floor``, the last `limit` bytes and
/// the last batch; a stream whose cursor falls below it is dropped,
/// and a caller that comes back with an older `Last-Event-ID` gets `reset`.
///
/// ```swift
/// let log = LiveEventLog(floor: 41)
/// let waiting = log.append([(42, LiveEvents.event("update", id: "5f3a.42", data: row))], limit: 1 << 20)
/// var output: [UInt8] = []
/// let cursor = log.write(after: 41, into: &output)   // 42; output holds the event
/// ```
final class LiveEventLog: Sendable {
    private struct State {
        var entries: [(sequence: UInt64, bytes: [UInt8])] = []
        /// The entries before it are spent.
        var start = 0
        var bytes = 0
        var floor: UInt64
        /// Streams that wrote every event and wait for the next.
        var waiting: [LiveStream] = []
    }

    private let state: Locked<State>

    /// An empty log that holds every event after `floor`.
    init(floor: UInt64) {
        state = Locked(State(floor: floor))
    }

    /// The log holds every event after this number.
    var floor: UInt64 { state.withLock { $0.floor } }

    /// Adds `events` (numbered in order, after every event the log holds),
    /// forgetting the oldest while those before them pass `limit` bytes
    /// (judged by what came before: a stream that keeps up takes a batch
    /// of any size). Returns the streams that waited for them, to be
    /// woken: each waits once.
    func append(_ events: [(sequence: UInt64, bytes: [UInt8])], limit: Int) -> [LiveStream] {
        state.withLock { state in
            var added = 0
            for event in events {
                state.entries.append(event)
                added += event.bytes.count
            }
            state.bytes += added
            while state.bytes - added > limit, state.start < state.entries.count {
                state.bytes -= state.entries[state.start].bytes.count
                state.floor = state.entries[state.start].sequence
                state.entries[state.start].bytes = []
                state.start += 1
            }
            if state.start > 64, state.start * 2 > state.entries.count {
                state.entries.removeFirst(state.start)
                state.start = 0
            }
            defer { state.waiting = [] }
            return state.waiting
        }
    }

    /// Whether the log holds every event after `cursor`.
    func covers(after cursor: UInt64) -> Bool {
        state.withLock { cursor >= $0.floor }
    }

    /// Appends the events after `cursor` to `output`: the number of the
    /// last one (`cursor` when there is none), `nil` when the log no longer
    /// holds them all.
    func write(after cursor: UInt64, into output: inout [UInt8]) -> UInt64? {
        state.withLock { state in
            guard cursor >= state.floor else { return nil }
            let first = Self.first(after: cursor, in: state)
            guard first < state.entries.count else { return cursor }
            if output.isEmpty, first == state.entries.count - 1 {
                // The log's buffer itself, not a copy.
                output = state.entries[first].bytes
            } else {
                for index in first..<state.entries.count { output += state.entries[index].bytes }
            }
            return state.entries[state.entries.count - 1].sequence
        }
    }

    /// Has `stream` woken by the next ``append(_:limit:)`` when the log
    /// holds nothing after `cursor`; `false` when it does (or no longer
    /// holds it all): the stream has something to write now.
    func wait(_ stream: LiveStream, after cursor: UInt64) -> Bool {
        state.withLock { state in
            guard cursor >= state.floor else { return false }
            guard Self.first(after: cursor, in: state) == state.entries.count else { return false }
            state.waiting.append(stream)
            return true
        }
    }

    /// The index of the first entry numbered after `cursor` (binary search:
    /// the numbers grow).
    private static func first(after cursor: UInt64, in state: State) -> Int {
        var low = state.start
        var high = state.entries.count
        while low < high {
            let middle = (low + high) / 2
            if state.entries[middle].sequence <= cursor { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
