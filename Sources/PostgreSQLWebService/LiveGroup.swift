import PostgreSQL

/// The callers that follow the same list (the same statement, values and
/// embeds) as the same role, or the same channel: their changes are read
/// once per batch, as that role, and each event is written once, in a
/// buffer they all share.
///
/// `@unchecked Sendable`: the fields marked "feed lock" are touched only
/// with ``LiveFeed``'s registry lock held; those marked "feed loop" only on
/// the feed's loop, and by the thread that loads the group before it is
/// ready (the lock's release publishes them to the loop).
final class LiveGroup: @unchecked Sendable {
    /// What the group follows.
    let list: LiveList
    /// As whom its rows are read: the callers' role, read-only.
    let access: Access

    enum State {
        case loading
        case ready
        case failed(any Error)
    }

    // MARK: Feed lock

    var state = State.loading
    var subscribers: [ObjectIdentifier: LiveStream] = [:]
    /// When a group left without callers is forgotten.
    var lingersUntil: ContinuousClock.Instant?
    /// The group's last events, oldest first, from `windowStart` on (the
    /// entries before it are spent): what a caller that connects again
    /// with `Last-Event-ID` resumes from.
    var window: [(sequence: UInt64, bytes: [UInt8])] = []
    var windowStart = 0
    var windowBytes = 0
    /// The window holds every event of the group after this number.
    var windowFloor: UInt64
    /// Changes that came while the group was loading, read once it is ready.
    var heldChanges: [LiveChange] = []

    // MARK: Feed loop

    /// The key of each row in the list, and the hash of the row as last
    /// written (`nil` until then).
    var members: [String: Int?] = [:]
    /// The tables besides the list's own whose changes may change its rows.
    var dependencies: Set<String> = []
    /// Whether each key column is written as a JSON number.
    var numericKey: [Bool] = []

    init(list: LiveList, access: Access, floor: UInt64) {
        self.list = list
        self.access = access
        self.windowFloor = floor
    }

    var isReady: Bool {
        if case .ready = state { return true }
        return false
    }

    /// Adds an event to the window, forgetting the oldest past `limit`
    /// bytes; with the feed lock held.
    func remember(_ sequence: UInt64, _ bytes: [UInt8], limit: Int) {
        window.append((sequence, bytes))
        windowBytes += bytes.count
        while windowBytes > limit, windowStart < window.count {
            windowBytes -= window[windowStart].bytes.count
            windowFloor = window[windowStart].sequence
            window[windowStart].bytes = []
            windowStart += 1
        }
        if windowStart > 64, windowStart * 2 > window.count {
            window.removeFirst(windowStart)
            windowStart = 0
        }
    }

    /// The events after `sequence`, when the window still holds every one
    /// of them; `nil` when some are gone. With the feed lock held.
    func events(after sequence: UInt64) -> [[UInt8]]? {
        guard sequence >= windowFloor else { return nil }
        return window[windowStart...].filter { $0.sequence > sequence }.map(\.bytes)
    }
}
