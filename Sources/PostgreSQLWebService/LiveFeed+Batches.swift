import EventLoops
import JSONStreaming
import PostgreSQL

// MARK: - Batches: the changed rows read again, once per group

extension LiveFeed {
    /// What one batch reads again for a group.
    struct Work {
        let group: LiveGroup
        var keys: Set<LiveKey> = []
        /// A change it cannot tie to its rows: it reads the whole list.
        var isWhole = false
        var payloads: [String] = []
    }

    /// The most keys one statement reads again; more are read in several.
    static let keysPerStatement = 1_000
    /// Past this many keys in one batch, a group reads its whole list instead.
    static let keysPerBatch = 10_000

    /// Reads the changes gathered since the last batch: each group's
    /// changed rows again, in one statement (a few for many keys), as its
    /// role; then its events, to each of its callers.
    func runBatch() {
        let state = loopState
        let changes = state.changes
        let notifications = state.notifications
        state.changes = []
        state.notifications = []
        var work: [ObjectIdentifier: Work] = [:]
        lock.withLock {
            for group in registry.groups.values {
                switch group.state {
                case .loading:
                    if case .table = group.list.source { group.heldChanges += changes }
                case .failed:
                    continue
                case .ready:
                    var item = Work(group: group)
                    switch group.list.source {
                    case .table(let key, _):
                        for change in group.heldChanges + changes { route(change, key: key, dependencies: group.dependencies, into: &item) }
                        group.heldChanges = []
                    case .channel(let channel):
                        item.payloads = notifications.filter { $0.channel == channel }.map(\.payload)
                    }
                    if !item.keys.isEmpty || item.isWhole || !item.payloads.isEmpty { work[ObjectIdentifier(group)] = item }
                }
            }
        }
        guard !work.isEmpty else { return }
        batchCount.add(1, ordering: .relaxed)
        for item in work.values {
            if !item.payloads.isEmpty {
                publish(item.payloads.map { (nil, LiveEvents.payloadData($0)) }, to: item.group)
            } else {
                readAgain(item)
            }
        }
    }

    /// What `change` means to a group following `key`: rows of its own
    /// table by key; rows it refers to, when the change is in a table the
    /// group reads and refers to the group's table by a foreign key; the
    /// whole list when it is in a table the group reads otherwise.
    private func route(_ change: LiveChange, key: ListKey, dependencies: Set<String>, into work: inout Work) {
        if change.relation == key.relation {
            if change.isWhole { work.isWhole = true } else { work.keys.formUnion(change.keys) }
        } else if dependencies.contains(change.relation) {
            if !change.isWhole, let keys = change.references[key.relation] {
                work.keys.formUnion(keys)
            } else {
                work.isWhole = true
            }
        }
    }

    /// Reads a group's changed rows (or its whole list) again and writes
    /// the events they make: `insert` for a row that entered the list,
    /// `update` for one whose JSON changed, `delete` for one that left.
    /// A group that fails to, or has too many rows to read whole, is reset.
    private func readAgain(_ work: Work) {
        let group = work.group
        let keys = Array(work.keys)
        let isWhole = work.isWhole || keys.count > Self.keysPerBatch
        if isWhole, group.members.count > configuration.wholeReadRows {
            logger.notice(
                "live: \(group.list.key?.relation ?? "a list") changed in a way only a whole read tells, and its \(group.members.count) rows are more than it reads whole: its callers start again"
            )
            return reset(group)
        }
        var events: [(name: String?, data: [UInt8])] = []
        do {
            if isWhole {
                var seen: Set<String> = []
                for row in try read(group.list.resolved, as: group) {
                    seen.insert(row.key.canonical)
                    event(for: row, in: group, into: &events)
                }
                for key in group.members.keys where !seen.contains(key) {
                    group.members[key] = nil
                    events.append(("delete", deleted(key, in: group)))
                }
            } else {
                var start = 0
                while start < keys.count {
                    let chunk = Array(keys[start..<min(start + Self.keysPerStatement, keys.count)])
                    start += chunk.count
                    let asked = Set(chunk.map(\.canonical))
                    var seen: Set<String> = []
                    for row in try read(group.list.keyed(chunk), as: group) where asked.contains(row.key.canonical) {
                        seen.insert(row.key.canonical)
                        event(for: row, in: group, into: &events)
                    }
                    for key in asked where !seen.contains(key) && group.members.removeValue(forKey: key) != nil {
                        events.append(("delete", deleted(key, in: group)))
                    }
                }
            }
        } catch {
            logger.error(
                "live: reading \(group.list.key?.relation ?? "a list") again as \(group.access.role ?? "the server's role") failed (\(error)): its callers start again"
            )
            if loopState.reader?.isBroken == true {
                loopState.reader?.close()
                loopState.reader = nil
            }
            return reset(group)
        }
        publish(events, to: group)
    }

    /// The event `row` makes, if any, recorded among the members.
    private func event(for row: (key: LiveKey, json: [UInt8]), in group: LiveGroup, into events: inout [(name: String?, data: [UInt8])]) {
        let hash = Self.hash(row.json)
        switch group.members[row.key.canonical] {
        case nil:
            group.members[row.key.canonical] = hash
            events.append(("insert", row.json))
        case let known?:
            guard known != hash else { return }
            group.members[row.key.canonical] = hash
            events.append(("update", row.json))
        }
    }

    /// A `delete` event's data: the key, by the names the rows write it under.
    private func deleted(_ canonical: String, in group: LiveGroup) -> [UInt8] {
        let names = group.list.keyNames
        let values = names.count == 1 ? [Substring(canonical)] : canonical.split(separator: "\u{1F}", omittingEmptySubsequences: false)
        var data: [UInt8] = [UInt8(ascii: "{")]
        for (index, name) in names.enumerated() {
            if index > 0 { data.append(UInt8(ascii: ",")) }
            JSONWriter.appendString(name, to: &data)
            data.append(UInt8(ascii: ":"))
            let value = index < values.count ? String(values[index]) : ""
            if index < group.numericKey.count, group.numericKey[index], Double(value) != nil {
                data += value.utf8
            } else {
                JSONWriter.appendString(value, to: &data)
            }
        }
        data.append(UInt8(ascii: "}"))
        return data
    }

    /// The rows of `query` as `group`'s role, on the feed's reader: each
    /// one's key and JSON.
    private func read(_ query: Query, as group: LiveGroup) throws -> [(key: LiveKey, json: [UInt8])] {
        let state = loopState
        if state.reader == nil { state.reader = try pool.openConnection(applicationName: "sql-rest live reader") }
        guard let reader = state.reader else { return [] }
        statementCount.add(1 + Self.embedCount(query), ordering: .relaxed)
        var rows: [(key: LiveKey, json: [UInt8])] = []
        try readRows(of: query, as: group, on: reader) { rows.append(($0, $1)) }
        return rows
    }

    /// Calls `body` with the key and the JSON of each row of `query`, read
    /// as `group`'s role on `connection`; `columns` first, with the source,
    /// once its columns are known.
    func readRows(
        of query: Query, as group: LiveGroup, on connection: Connection, columns: ((any RowSource) -> Void)? = nil,
        _ body: (LiveKey, [UInt8]) throws -> Void
    ) throws {
        let source = try query.rowSource(on: connection, access: group.access)
        defer {
            source.close()
            connection.rollBackQuietly()
        }
        columns?(source)
        let names = group.list.keyNames
        let writer = ByteWriter(capacity: 4 << 10)
        while try source.hasNext() {
            let key = LiveKey(names.map { source.nextText($0) ?? "" })
            try source.writeNext(options: options, to: writer)
            try body(key, Array(writer.bytes))
            writer.removeAll()
        }
    }

    /// The hash a row's JSON is known by among a group's members (never 0).
    static func hash(_ json: [UInt8]) -> Int {
        var hasher = Hasher()
        hasher.combine(json)
        return hasher.finalize() | 1
    }

    private static func embedCount(_ query: Query) -> Int {
        query.embeds.reduce(0) { $0 + 1 + embedCount($1.query) }
    }

    /// Numbers `events`, appends them to the group's log, which its
    /// callers write from, and wakes those that waited for them.
    func publish(_ events: [(name: String?, data: [UInt8])], to group: LiveGroup) {
        guard !events.isEmpty else { return }
        let waiting = lock.withLock { () -> [LiveStream] in
            var numbered: [(sequence: UInt64, bytes: [UInt8])] = []
            numbered.reserveCapacity(events.count)
            for event in events {
                registry.sequence += 1
                numbered.append(
                    (registry.sequence, LiveEvents.event(event.name, id: "\(registry.epoch).\(registry.sequence)", data: event.data)))
            }
            return group.log.append(numbered, limit: configuration.window)
        }
        eventCount.add(events.count, ordering: .relaxed)
        for stream in waiting { stream.wake() }
    }

    /// Ends a group: its callers get `reset` and connect again, to a new group.
    func reset(_ group: LiveGroup) {
        let streams = lock.withLock { () -> [LiveStream] in
            for (id, candidate) in registry.groups where candidate === group { registry.groups[id] = nil }
            return takeStreams(of: group)
        }
        resetCount.add(streams.count, ordering: .relaxed)
        for stream in streams { stream.end(after: retryJitter() + LiveEvents.reset) }
    }
}
