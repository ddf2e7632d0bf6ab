import EventLoops
import HTTPServer
import Locking
import Logging
import PostgreSQL
import Synchronization

/// How a server follows lists live (docs/LIVE.md); every value has a default.
///
/// ```swift
/// var live = LiveConfiguration()
/// live.heartbeat = .seconds(30)
/// ```
public struct LiveConfiguration: Sendable {
    /// How often a stream with nothing to send gets a comment, so that
    /// proxies do not close it.
    public var heartbeat: Duration
    /// How long the feed gathers changes before it reads them, from the
    /// first one after a quiet time: the most a change waits for its batch.
    public var batchInterval: Duration
    /// The bytes of events each group keeps for callers that connect again
    /// (`Last-Event-ID`), and the most a stream may fall behind by before
    /// it is dropped (its next connection then always gets `reset`).
    public var window: Int
    /// How long a group stays after its last caller left, for callers
    /// that connect again.
    public var linger: Duration
    /// When a stream is ended, to be connected again, before the server's
    /// response deadline cuts it off; `nil`: never.
    public var streamLifetime: Duration?
    /// The most groups followed at once; a caller who would start one
    /// more is answered 503.
    public var maximumGroups: Int
    /// The most rows a followed list may hold when its group starts (a
    /// larger list is answered 400); the runner's `maxRows` when smaller.
    public var maximumRows: Int
    /// The most rows a group reads whole, when a change it cannot tie to
    /// its rows comes (a table it reads besides its own); a larger group
    /// is reset instead.
    public var wholeReadRows: Int
    /// What streams tell clients to wait before they connect again.
    public var retry: Duration
    /// The channel the triggers of `live.sql` notify.
    public var channel: String

    public init(
        heartbeat: Duration = .seconds(15), batchInterval: Duration = .milliseconds(20), window: Int = 1 << 20,
        linger: Duration = .seconds(60), streamLifetime: Duration? = nil, maximumGroups: Int = 1_000, maximumRows: Int = 100_000,
        wholeReadRows: Int = 10_000, retry: Duration = .seconds(2), channel: String = "sql_rest_live"
    ) {
        self.heartbeat = heartbeat
        self.batchInterval = batchInterval
        self.window = max(1 << 10, window)
        self.linger = linger
        self.streamLifetime = streamLifetime
        self.maximumGroups = max(1, maximumGroups)
        self.maximumRows = max(1, maximumRows)
        self.wholeReadRows = max(0, wholeReadRows)
        self.retry = retry
        self.channel = channel
    }
}

/// Follows lists for the callers who ask for them as Server-Sent Events
/// (`Accept: text/event-stream`), with one `LISTEN` connection to the
/// primary whatever their number, and one loop (a thread) that gathers
/// the changes the triggers of `live.sql` send, reads the changed rows of
/// each group of callers again, once per batch, as the group's role, and
/// hands every caller of the group the same events (docs/LIVE.md).
///
/// A ``QueryRunner`` given a feed answers a list's event stream; a
/// server's program makes one (`--live`).
///
/// ```swift
/// let live = LiveFeed(pool: pool, options: options, logger: logger)
/// let runner = QueryRunner(pool: pool, options: options, live: live)
/// ```
public final class LiveFeed: @unchecked Sendable {
    // `@unchecked Sendable`: `registry` is touched only with `lock` held;
    // `loopState` only on the feed's loop.
    public let configuration: LiveConfiguration
    let pool: ConnectionPool
    let options: JSONRenderingOptions
    let logger: Logger

    struct Registry {
        var groups: [String: LiveGroup] = [:]
        /// Numbers every event the feed writes.
        var sequence: UInt64 = 0
        /// Names the feed's events until its `LISTEN` connection is lost.
        var epoch = LiveFeed.newEpoch()
        var isListening = false
        /// Why listening failed last, for the callers turned away meanwhile.
        var listenFailure: String?
        var loop: EventLoop?
        /// Channels relayed (`@listen`), and those the listener listens on.
        var channels: Set<String> = []
        var listenedChannels: Set<String> = []
        var isStopped = false
        var streams = 0
    }

    let lock = ConditionLock()
    var registry = Registry()
    let loopState = LoopState()

    // Counters for `/metrics`.
    let batchCount = Atomic<Int>(0)
    let statementCount = Atomic<Int>(0)
    let eventCount = Atomic<Int>(0)
    let droppedCount = Atomic<Int>(0)
    let resetCount = Atomic<Int>(0)

    /// A feed on `pool`'s primary, writing rows with `options`; its loop
    /// and connections start with its first caller.
    public init(
        pool: ConnectionPool, options: JSONRenderingOptions = JSONRenderingOptions(), configuration: LiveConfiguration = .init(),
        logger: Logger
    ) {
        self.pool = pool
        self.options = options
        self.configuration = configuration
        self.logger = logger
    }

    deinit {
        registry.loop?.stop()
    }

    /// What the feed does now, for `/metrics`.
    ///
    /// ```swift
    /// live.statistics.streams   // callers following a list now
    /// ```
    public struct Statistics: Sendable {
        /// Streams open now, and their groups.
        public var streams: Int
        public var groups: Int
        /// Batches of changes read, statements they ran, events written (to groups, not to each caller).
        public var batches: Int
        public var statements: Int
        public var events: Int
        /// Streams dropped for falling behind; streams reset (their list read again from the start).
        public var dropped: Int
        public var resets: Int
        /// Whether the `LISTEN` connection is up.
        public var isListening: Bool
    }

    public var statistics: Statistics {
        let (streams, groups, isListening) = lock.withLock { (registry.streams, registry.groups.count, registry.isListening) }
        return Statistics(
            streams: streams, groups: groups, batches: batchCount.load(ordering: .relaxed),
            statements: statementCount.load(ordering: .relaxed), events: eventCount.load(ordering: .relaxed),
            dropped: droppedCount.load(ordering: .relaxed), resets: resetCount.load(ordering: .relaxed), isListening: isListening)
    }

    /// The `LISTEN` connection's backend, as `pg_stat_activity.pid` names it; `nil` while there is none.
    package var listenerPID: Int? {
        lock.withLock { registry.loop }.flatMap { loop in
            let box = Locked<Int?>(nil)
            let state = LoopConfined(loopState)
            loop.executeAndWait { box.withLock { $0 = state.value.listener?.backendPID } }
            return box.withLock { $0 }
        }
    }

    static func newEpoch() -> String {
        String(UInt32.random(in: 0x1000_0000...UInt32.max), radix: 16)
    }

    // MARK: - Ending streams

    /// Ends every stream after what it holds, without `reset` (a drain:
    /// the callers connect again, to another server or to this one after
    /// its restart, with their `Last-Event-ID`).
    public func endAllStreams() {
        let streams = lock.withLock { registry.groups.values.flatMap { $0.subscribers.values } }
        for stream in streams { stream.end() }
    }

    /// Ends every stream, stops the loop and closes its connections. A
    /// caller after this is answered 503.
    public func stop() {
        let loop = lock.withLock {
            registry.isStopped = true
            registry.isListening = false
            lock.broadcast()
            return registry.loop
        }
        endAllStreams()
        loop?.stop()
    }
}
