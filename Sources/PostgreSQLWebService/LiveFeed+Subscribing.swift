import EventLoops
import HTTPServer
import PostgreSQL
import WebService

// MARK: - Callers joining and leaving

extension LiveFeed {
    /// How a stream that joined its group begins.
    enum Start {
        /// With the events after its `Last-Event-ID`, which the group's
        /// log holds.
        case resumed
        /// With a snapshot of the list, then `ready` with `readyID`;
        /// `reset` first when the caller came with a `Last-Event-ID` the
        /// log no longer covers.
        case snapshot(readyID: String, isReset: Bool)
    }

    /// Joins `stream` to the group of `list` read as `access` (made and
    /// loaded first when it is new), on a thread that may block. Events
    /// are queued on the stream from now on; a snapshot read after this
    /// call misses no change. Throws the group's failure (a role that may
    /// not read the list: 403), 503 while the feed cannot listen or holds
    /// its most groups, 400 for a list larger than `maximumRows`.
    func subscribe(_ stream: LiveStream, to list: LiveList, access: Access, lastEventID: String?, maximumRows: Int) throws -> Start {
        let deadline = ContinuousClock.now + pool.configuration.acquireTimeout
        try awaitListening(until: deadline)
        let id: String
        switch list.source {
        case .channel(let channel):
            try awaitChannel(channel, until: deadline)
            id = "channel\u{0}" + channel
        case .table:
            id = (access.role ?? "") + "\u{0}" + list.fingerprint
        }
        var loads = false
        let group: LiveGroup = try lock.withLock { () throws(HTTPError) -> LiveGroup in
            if let existing = registry.groups[id] { return existing }
            guard registry.groups.count < configuration.maximumGroups else {
                throw HTTPError(
                    .serviceUnavailable, detail: "The server follows as many lists as it may at once; try again shortly.",
                    headers: ["Retry-After": "5"])
            }
            let group = LiveGroup(list: list, access: access, floor: registry.sequence)
            registry.groups[id] = group
            loads = true
            return group
        }
        if loads { load(group, id: id, maximumRows: maximumRows) }
        return try lock.withLock { () throws -> Start in
            while case .loading = group.state {
                guard lock.wait(until: deadline) else { throw Self.unavailable("its list is still being read") }
            }
            if case .failed(let error) = group.state { throw error }
            guard registry.groups[id] === group, !registry.isStopped else { throw Self.unavailable("it lost its database listener") }
            group.subscribers[ObjectIdentifier(stream)] = stream
            group.lingersUntil = nil
            registry.streams += 1
            stream.onClose = { [weak self, weak group] in
                guard let self, let group else { return }
                self.unsubscribe(stream, from: group)
            }
            stream.onDrop = { [weak self] in self?.droppedCount.add(1, ordering: .relaxed) }
            if let lastEventID, let sequence = Self.sequence(of: lastEventID, epoch: registry.epoch),
                sequence <= registry.sequence, group.log.covers(after: sequence)
            {
                stream.follow(group.log, after: sequence)
                return .resumed
            }
            stream.follow(group.log, after: registry.sequence)
            return .snapshot(readyID: "\(registry.epoch).\(registry.sequence)", isReset: lastEventID != nil)
        }
    }

    /// The sequence number of an event id of this epoch (`5f3a9c01.42`), `nil` for another's.
    static func sequence(of id: String, epoch: String) -> UInt64? {
        let parts = id.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, parts[0] == epoch else { return nil }
        return UInt64(parts[1])
    }

    static func unavailable(_ reason: String) -> HTTPError {
        HTTPError(
            .serviceUnavailable, detail: "The server cannot follow this list right now: \(reason). Connect again shortly.",
            headers: ["Retry-After": "1"])
    }

    /// Forgets `stream` (its response is over); a group left without
    /// callers lingers, then goes.
    func unsubscribe(_ stream: LiveStream, from group: LiveGroup) {
        lock.withLock {
            guard group.subscribers.removeValue(forKey: ObjectIdentifier(stream)) != nil else { return }
            registry.streams -= 1
            if group.subscribers.isEmpty { group.lingersUntil = .now + configuration.linger }
        }
    }

    /// The streams of `group`, which it forgets; with the lock held.
    func takeStreams(of group: LiveGroup) -> [LiveStream] {
        let streams = Array(group.subscribers.values)
        group.subscribers = [:]
        registry.streams -= streams.count
        return streams
    }

    /// Forgets `stream` whether or not it joined (a snapshot that failed).
    func abandon(_ stream: LiveStream) {
        stream.onClose?()
        stream.onClose = nil
        stream.close()
    }

    // MARK: - Listening

    /// Starts the loop and its listener if need be, and waits until it listens.
    private func awaitListening(until deadline: ContinuousClock.Instant) throws(HTTPError) {
        try lock.withLock { () throws(HTTPError) in
            guard !registry.isStopped else { throw Self.unavailable("it is stopping") }
            if registry.loop == nil {
                let loop: EventLoop
                do {
                    loop = try EventLoop(name: "live")
                } catch {
                    throw Self.unavailable("it cannot start its thread")
                }
                registry.loop = loop
                let feed = LoopConfined(self)
                loop.execute { feed.value.startLoop(on: loop) }
            }
            while !registry.isListening {
                guard !registry.isStopped, lock.wait(until: deadline) else {
                    throw Self.unavailable("its database listener is not connected (\(registry.listenFailure ?? "connecting"))")
                }
            }
        }
    }

    /// Has the listener listen on `channel` too, and waits until it does.
    private func awaitChannel(_ channel: String, until deadline: ContinuousClock.Instant) throws(HTTPError) {
        let loop = try lock.withLock { () throws(HTTPError) -> EventLoop? in
            guard !registry.listenedChannels.contains(channel) else { return nil }
            registry.channels.insert(channel)
            return registry.loop
        }
        if let loop {
            let feed = LoopConfined(self)
            loop.execute { feed.value.listenOnChannels() }
        }
        try lock.withLock { () throws(HTTPError) in
            while !registry.listenedChannels.contains(channel) {
                guard lock.wait(until: deadline) else { throw Self.unavailable("it cannot listen on channel \(channel)") }
            }
        }
    }

    // MARK: - A group's start

    /// Reads a new group's keys and the tables it depends on, on this
    /// thread, then makes it ready (or failed) for the callers waiting.
    private func load(_ group: LiveGroup, id: String, maximumRows: Int) {
        do {
            if case .table = group.list.source {
                try pool.withConnection { connection in
                    try loadMembers(of: group, on: connection, maximumRows: maximumRows)
                    group.dependencies = dependencies(of: group, on: connection)
                }
            }
            let hasHeld = lock.withLock {
                group.state = .ready
                lock.broadcast()
                return !group.heldChanges.isEmpty
            }
            if hasHeld, let loop = lock.withLock({ registry.loop }) {
                let feed = LoopConfined(self)
                loop.execute { feed.value.scheduleBatch() }
            }
        } catch {
            lock.withLock {
                group.state = .failed(error)
                if registry.groups[id] === group { registry.groups[id] = nil }
                lock.broadcast()
            }
        }
    }

    /// The keys of the list's rows and the hashes of their JSON, read as
    /// the group's role (which fails here when it may not read them), and
    /// which of the key's columns are numbers.
    private func loadMembers(of group: LiveGroup, on connection: Connection, maximumRows: Int) throws {
        var members: [String: Int] = [:]
        let names = group.list.keyNames
        try readRows(
            of: group.list.resolved, as: group, on: connection,
            columns: { source in group.numericKey = names.map { source.type(of: $0).map(Self.isNumeric) ?? false } }
        ) { key, json in
            members[key.canonical] = Self.hash(json)
            if members.count > maximumRows {
                throw HTTPError(
                    .badRequest, detail: "This list holds more than \(maximumRows) rows, more than an event stream follows: filter it.")
            }
        }
        group.members = members
    }

    static func isNumeric(_ type: PostgresType) -> Bool {
        [PostgresType.int2, .int4, .int8, .float4, .float8, .numeric].contains(type)
    }

    /// The tables other than the list's own that its statements read (its
    /// embeds', a view's, a row-level security policy's), from their
    /// generic plans as the group's role. A statement PostgreSQL cannot
    /// plan without its values' types is left out, and logged.
    private func dependencies(of group: LiveGroup, on connection: Connection) -> Set<String> {
        var relations: Set<String> = []
        var statements: [String] = []
        func collect(_ query: Query) {
            statements.append(query.sql)
            for embed in query.embeds { collect(embed.query) }
        }
        collect(group.list.resolved)
        for sql in statements {
            do {
                try connection.transaction(readOnly: true, role: group.access.role) { connection in
                    try connection.executeScript("SET LOCAL plan_cache_mode = force_generic_plan")
                    let parameters = StatementShape.of(sql).parameters
                    try connection.executeScript("PREPARE sql_rest_live_plan AS " + parameters.sql)
                    let values = parameters.names.isEmpty ? "" : "(" + parameters.names.map { _ in "NULL" }.joined(separator: ", ") + ")"
                    let plan = try connection.runSimple("EXPLAIN (VERBOSE, FORMAT JSON) EXECUTE sql_rest_live_plan" + values)
                    try connection.executeScript("DEALLOCATE sql_rest_live_plan")
                    if plan.rowCount > 0, let text = plan.string(row: 0, column: 0), let document = try? JSONValue.parse(Array(text.utf8)) {
                        Self.relations(in: document, into: &relations)
                    }
                }
            } catch {
                logger.warning(
                    "live: the tables \(group.list.key?.relation ?? "a list") reads beside its own are not known (\(error)); only its own changes reach it"
                )
            }
        }
        if let key = group.list.key { relations.remove(key.relation) }
        return relations
    }

    /// Every `Schema`.`Relation Name` of a plan in `EXPLAIN (VERBOSE, FORMAT JSON)`.
    static func relations(in value: JSONValue, into relations: inout Set<String>) {
        switch value {
        case .array(let items):
            for item in items { Self.relations(in: item, into: &relations) }
        case .object(let members):
            if case .string(let name)? = members["Relation Name"], case .string(let schema)? = members["Schema"] {
                relations.insert(schema + "." + name)
            }
            for (_, member) in members { Self.relations(in: member, into: &relations) }
        default:
            break
        }
    }
}
