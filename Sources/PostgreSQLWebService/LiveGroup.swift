import PostgreSQL

/// The callers that follow the same list (the same statement, values and
/// embeds) as the same role, or the same channel: their changes are read
/// once per batch, as that role, and each event is written once, into the
/// group's log, which each of them reads from where it stands.
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
    /// The group's last events, which its callers write from, and resume from.
    let log: LiveEventLog

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
        self.log = LiveEventLog(floor: floor)
    }

    var isReady: Bool {
        if case .ready = state { return true }
        return false
    }
}
