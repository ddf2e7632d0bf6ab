import EventLoops
import HTTPServer
import PostgreSQL

// MARK: - The feed's loop: listening, batches, heartbeats

extension LiveFeed {
    /// What the feed's loop keeps, on its thread only.
    final class LoopState {
        /// The feed's loop, given when it starts.
        var loop: EventLoop?
        /// The `LISTEN` connection, and its socket's registration.
        var listener: Connection?
        var registration: EventLoop.Registration?
        /// The connection the groups' rows are read again on.
        var reader: Connection?
        /// Changes and channel notifications not yet in a batch.
        var changes: [LiveChange] = []
        var notifications: [(channel: String, payload: String)] = []
        var batchDue: ContinuousClock.Instant?
        var nextHeartbeat = ContinuousClock.now
        var nextHousekeeping = ContinuousClock.now
        var reconnectAt: ContinuousClock.Instant?
        var backoff: Duration = .milliseconds(100)
        var hasWarnedOfPayload = false
    }

    /// On `loop`, the feed's, once: the pass hook, the listener.
    func startLoop(on loop: EventLoop) {
        let state = loopState
        state.loop = loop
        state.nextHeartbeat = .now + configuration.heartbeat
        state.nextHousekeeping = .now + .seconds(1)
        loop.addPassHook { [unowned self] in self.passEnded() }
        loop.onStop { [unowned self] in
            if let registration = state.registration { loop.unregister(registration) }
            state.listener?.close()
            state.listener = nil
            state.reader?.close()
            state.reader = nil
            self.lock.withLock {
                self.registry.isListening = false
                self.lock.broadcast()
            }
        }
        connectListener()
    }

    /// At the end of every pass: whatever has come due; how long the loop may sleep.
    private func passEnded() -> Int {
        let state = loopState
        var now = ContinuousClock.now
        if let reconnectAt = state.reconnectAt, now >= reconnectAt {
            state.reconnectAt = nil
            connectListener()
        }
        if let due = state.batchDue, now >= due {
            state.batchDue = nil
            runBatch()
            now = .now
        }
        if now >= state.nextHeartbeat {
            state.nextHeartbeat = now + configuration.heartbeat
            heartbeat()
        }
        if now >= state.nextHousekeeping {
            state.nextHousekeeping = now + .seconds(1)
            keepHouse(now: now)
        }
        var next = min(state.nextHeartbeat, state.nextHousekeeping)
        if let due = state.batchDue { next = min(next, due) }
        if let reconnectAt = state.reconnectAt { next = min(next, reconnectAt) }
        let wait = ContinuousClock.now.duration(to: next)
        let (seconds, attoseconds) = wait.components
        return max(0, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000) + 1)
    }

    /// Has a batch run within the batch interval (changes held by a group that was loading).
    func scheduleBatch() {
        let state = loopState
        if state.batchDue == nil { state.batchDue = .now + configuration.batchInterval }
    }

    // MARK: Listener

    /// Opens the `LISTEN` connection and listens on the feed's channel and
    /// the relayed ones; on failure, tries again later, waiting longer each time.
    private func connectListener() {
        let state = loopState
        guard let loop = state.loop else { return }
        do {
            let connection = try pool.openConnection(applicationName: "sql-rest live")
            do {
                try connection.listen(configuration.channel)
                let channels = lock.withLock { registry.channels }
                for channel in channels { try connection.listen(channel) }
                state.listener = connection
                state.registration = loop.register(connection.socketDescriptor, for: .readable) { [unowned self] _ in self.receive() }
                state.backoff = .milliseconds(100)
                let epoch = lock.withLock {
                    registry.epoch = Self.newEpoch()
                    registry.isListening = true
                    registry.listenFailure = nil
                    registry.listenedChannels = channels
                    lock.broadcast()
                    return registry.epoch
                }
                logger.info("live: listening on channel \(configuration.channel) (epoch \(epoch))")
            } catch {
                connection.close()
                throw error
            }
        } catch {
            let wait = state.backoff
            state.reconnectAt = .now + wait
            state.backoff = min(state.backoff * 2, .seconds(5))
            lock.withLock { registry.listenFailure = "\(error)" }
            logger.warning("live: cannot listen for changes (\(error)); trying again in \(wait)")
        }
    }

    /// Listens on relayed channels added since; on the loop.
    func listenOnChannels() {
        guard let listener = loopState.listener else { return }
        let wanted = lock.withLock { registry.channels.subtracting(registry.listenedChannels) }
        var listened: Set<String> = []
        for channel in wanted {
            do {
                try listener.listen(channel)
                listened.insert(channel)
            } catch {
                logger.error("live: cannot listen on channel \(channel): \(error)")
            }
        }
        lock.withLock {
            registry.listenedChannels.formUnion(listened)
            lock.broadcast()
        }
    }

    /// Takes the notifications waiting on the listener.
    private func receive() {
        let state = loopState
        guard let listener = state.listener else { return }
        do {
            for notification in try listener.receiveNotifications() {
                if notification.channel == configuration.channel {
                    if let change = LiveChange(payload: notification.payload) {
                        state.changes.append(change)
                    } else if !state.hasWarnedOfPayload {
                        state.hasWarnedOfPayload = true
                        logger.warning(
                            "live: a notification on \(configuration.channel) is not a change of live.sql; such ones are ignored")
                    }
                } else {
                    state.notifications.append((notification.channel, notification.payload))
                }
            }
            if !state.changes.isEmpty || !state.notifications.isEmpty { scheduleBatch() }
        } catch {
            lost(error)
        }
    }

    /// The listener is lost: changes may have been missed, so every stream
    /// gets `reset` and ends, every group goes, and the listener connects
    /// again (at once, then waiting longer each time).
    private func lost(_ error: any Error) {
        let state = loopState
        guard let loop = state.loop else { return }
        if let registration = state.registration { loop.unregister(registration) }
        state.registration = nil
        state.listener?.close()
        state.listener = nil
        state.changes = []
        state.notifications = []
        state.batchDue = nil
        let streams = lock.withLock {
            registry.isListening = false
            registry.listenFailure = "\(error)"
            registry.listenedChannels = []
            let streams = registry.groups.values.flatMap { takeStreams(of: $0) }
            registry.groups = [:]
            lock.broadcast()
            return streams
        }
        logger.error("live: the listener was lost (\(error)); \(streams.count) streams reset, listening again")
        resetCount.add(streams.count, ordering: .relaxed)
        let final = LiveEvents.reset
        for stream in streams { stream.end(after: retryJitter() + final) }
        state.reconnectAt = .now
    }

    /// `retry:` spread over twice the configured wait, so that callers
    /// reset together do not all come back in the same instant.
    func retryJitter() -> [UInt8] {
        LiveEvents.retry(retryMilliseconds + Int.random(in: 0...max(retryMilliseconds, 1)))
    }

    /// `retry:` as configured.
    var retryMilliseconds: Int {
        let (seconds, attoseconds) = configuration.retry.components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }

    // MARK: Heartbeats and housekeeping

    /// A comment to every stream.
    private func heartbeat() {
        let streams = lock.withLock { registry.groups.values.flatMap { $0.subscribers.values } }
        for stream in streams { stream.enqueue(LiveEvents.heartbeat) }
    }

    /// Forgets groups that lingered long enough without callers, ends
    /// streams past their lifetime, and drops those whose group's log no
    /// longer holds what they have yet to write.
    private func keepHouse(now: ContinuousClock.Instant) {
        let (expired, following) = lock.withLock { () -> ([LiveStream], [(LiveGroup, [LiveStream])]) in
            for (id, group) in registry.groups {
                if group.subscribers.isEmpty, let until = group.lingersUntil, now >= until { registry.groups[id] = nil }
            }
            let following = registry.groups.values.map { ($0, Array($0.subscribers.values)) }
            guard let lifetime = configuration.streamLifetime else { return ([], following) }
            return (following.flatMap { $0.1.filter { $0.started.duration(to: now) >= lifetime } }, following)
        }
        for stream in expired { stream.end() }
        let behind = following.map { group, streams in (group, streams.filter { $0.dropIfBehind() }) }.filter { !$0.1.isEmpty }
        guard !behind.isEmpty else { return }
        lock.withLock {
            for (group, streams) in behind {
                for stream in streams where group.subscribers.removeValue(forKey: ObjectIdentifier(stream)) != nil {
                    registry.streams -= 1
                }
                if group.subscribers.isEmpty, group.lingersUntil == nil { group.lingersUntil = now + configuration.linger }
            }
        }
        for (group, streams) in behind {
            logger.notice(
                "live: \(streams.count) stream\(streams.count == 1 ? "" : "s") of \(group.list.key?.relation ?? "a channel") fell too far behind and were dropped"
            )
        }
    }
}
