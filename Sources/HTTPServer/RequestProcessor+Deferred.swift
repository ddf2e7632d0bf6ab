import JSONStreaming
import Locking

// MARK: - Responses produced off the event loop

/// What a worker (or a promise) produced for a suspended request.
struct PreparedResponse {
    var response: HTTPResponse
    /// Set when the body goes on past its first block.
    var pump: StreamPump?
    /// The response went through the server's compression already.
    var isCompressed = false
}

/// A value another thread produces for a request (its response, or the
/// admission's decision); its connection is suspended meanwhile.
final class Deferral<Value>: @unchecked Sendable {
    // `@unchecked Sendable`: `ready` is touched only with `suspension.lock` held.
    let suspension: Suspension
    private var ready: Value?
    /// A value was handed over: the first one is the value (an admission's
    /// decision and its deadline's 503 may both come).
    private var isFulfilled = false

    init(suspension: Suspension) {
        self.suspension = suspension
    }

    /// Hands the value over and has the connection processed again; from
    /// any thread. Returns `false` when it is too late (the request is
    /// over, or another value came first): the value was not taken, and
    /// the caller disposes of it.
    func fulfil(_ value: Value) -> Bool {
        suspension.lock.withLock {
            guard !suspension.isOver, !isFulfilled else { return false }
            isFulfilled = true
            ready = value
            suspension.resumeLocked()
            return true
        }
    }

    /// The request is over (its connection closed or timed out, perhaps
    /// while the value was on its way): nothing is taken from now on.
    /// Returns the value handed over and not taken, which the caller
    /// disposes of; `fulfil` returns `false` after this, so each value is
    /// disposed of once, here or by the thread that produced it.
    func end() -> Value? {
        suspension.lock.withLock {
            suspension.endLocked()
            defer { ready = nil }
            return ready
        }
    }

    enum Take {
        case ready(Value)
        case abandoned
        case waiting
    }

    /// On the event loop, when libmicrohttpd calls again: the value if it
    /// is there; else the connection is suspended again.
    func take() -> Take {
        suspension.lock.withLock {
            if let ready {
                self.ready = nil
                return .ready(ready)
            }
            if suspension.isOver { return .abandoned }
            suspension.suspendLocked()
            return .waiting
        }
    }
}

extension Deferral<PreparedResponse> {
    /// ``fulfil(_:)``; too late, the body is closed.
    func deliver(_ prepared: PreparedResponse) {
        guard !fulfil(prepared) else { return }
        prepared.discard(closingOn: nil)
    }
}

extension PreparedResponse {
    /// Closes the body of a response that will never be queued: its
    /// pump's, or a stream not yet pulled from (on `workers` when given,
    /// since closing may wait for the database; else on this thread).
    func discard(closingOn workers: WorkerPool?) {
        if let pump {
            pump.discard()
        } else if case .stream(let body) = response.body {
            if let workers { workers.submit { body.close() } } else { body.close() }
        }
    }
}

extension RequestProcessor {
    /// Whether `response` needs work that may block before it can be queued.
    static func needsWorker(_ response: HTTPResponse) -> Bool {
        if response.isDeferred { return true }
        switch response.body {
        case .empty, .bytes: return false
        case .stream: return true
        }
    }

    /// Suspends the connection and has `response` produced off the event loop.
    func deferResponse(_ response: HTTPResponse, to context: RequestState, on connection: ClientConnection, daemon: EventLoopDaemon) {
        let workers = self.workers
        let suspension = Suspension(connection: connection.handle, daemon: daemon, registry: suspensions)
        let deferral = Deferral<PreparedResponse>(suspension: suspension)
        context.deferral = deferral
        suspension.lock.withLock { suspension.suspendLocked() }
        func promise() -> ResponsePromise {
            ResponsePromise { response in
                guard Self.needsWorker(response) else { return deferral.deliver(PreparedResponse(response: response)) }
                workers.submit { deferral.deliver(self.prepare(response, context: context, deferral: deferral)) }
            }
        }
        if let deferred = response.work {
            switch deferred.kind {
            case .later(let start):
                return start(promise())
            case .task(let work):
                let promise = promise()
                Task(executorPreference: workers) { promise.succeed(await work()) }
                return
            case .blocking:
                break
            }
        }
        workers.submit { deferral.deliver(self.prepare(response, context: context, deferral: deferral)) }
    }

    /// On a worker: the response made ready to queue. Blocking work runs,
    /// promises are waited for, and a streaming body's first block is
    /// pulled: a body that ends within it goes out with `Content-Length`.
    private func prepare(
        _ response: HTTPResponse, context: RequestState, deferral: Deferral<PreparedResponse>
    ) -> PreparedResponse {
        var response = Self.resolve(response)
        // Compressed here, on the worker, before the first block is pulled.
        if let compression = configuration.compression {
            response = compression.apply(to: response, requestHeaders: context.headers)
        }
        let isCompressed = configuration.compression != nil
        guard case .stream(let body) = response.body else {
            return PreparedResponse(response: response, isCompressed: isCompressed)
        }
        // A HEAD's first block is pulled too, for the GET's framing; libmicrohttpd sends no body for it.
        // An event body's first block is what it has now: the rest comes when it comes.
        let isEventBody = body is any EventStreamingBody
        var first: [UInt8] = []
        first.reserveCapacity(4 << 10)
        var failure: (any Error)?
        do {
            while first.count < StreamPump.blockSize {
                if !isEventBody { StreamPump.reserveBlock(&first) }
                let before = first.count
                if !(try body.write(into: &first)) {
                    for (name, value) in body.headersWhenWhole() { response.headers[name] = value }
                    body.close()
                    response.body = .bytes(first)
                    return PreparedResponse(response: response, isCompressed: isCompressed)
                }
                if isEventBody, first.count == before { break }
            }
        } catch {
            failure = error
        }
        let pump = StreamPump(
            body: body, first: first, failure: failure, context: context, suspension: deferral.suspension, workers: workers)
        return PreparedResponse(response: response, pump: pump, isCompressed: isCompressed)
    }

    /// Runs blocking work and waits for promises until a response with a
    /// body is there; on a thread that may block.
    static func resolve(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        while let deferred = response.work {
            switch deferred.kind {
            case .blocking(let work):
                response = work()
            case .later(let start):
                let box = HandOff<HTTPResponse>()
                start(ResponsePromise { box.put($0) })
                response = box.take()
            case .task(let work):
                // This thread waits for the task, which runs on Swift's own executor.
                let box = HandOff<HTTPResponse>()
                Task { box.put(await work()) }
                response = box.take()
            }
        }
        return response
    }
}

/// One value handed from another thread (a promise, a check) to a waiting thread.
final class HandOff<Value>: @unchecked Sendable {
    // `@unchecked Sendable`: `value` is touched only with `lock` held.
    private let lock = ConditionLock()
    private var value: Value?

    func put(_ value: Value) {
        lock.withLock {
            self.value = value
            lock.signal()
        }
    }

    func take() -> Value {
        lock.withLock {
            while true {
                if let value { return value }
                _ = lock.wait(until: .now + .seconds(3600))
            }
        }
    }
}
