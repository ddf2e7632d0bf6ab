internal import CEpoll
#if canImport(Glibc)
import Glibc
#endif
import Locking

/// A thread that waits on `epoll` for the file descriptors registered with
/// it and runs their handlers, and the tasks handed to it, on that thread.
///
/// The HTTP server's event loops run libmicrohttpd on loops of this kind,
/// and a connection pool runs its pipeline's database connections on one
/// (docs/THREADING.md).
///
/// One pass of the loop:
/// 1. waits until a registered descriptor is ready, a task is handed in,
///    or the time a pass hook asked for has come;
/// 2. runs the handlers of the descriptors that are ready;
/// 3. runs the tasks handed in from other threads (``execute(_:)``);
/// 4. runs the actions scheduled during the pass (``runAtPassEnd(_:)``),
///    in order, until none is left, then asks every pass hook
///    (``addPassHook(_:)``) how long the loop may sleep, and does so again
///    while a hook scheduled more actions.
///
/// Actions are how work arising during a pass is batched: a pipeline that
/// is handed ten jobs during a pass sends them together, in one action.
///
/// Only ``execute(_:)``, ``isCurrent``, ``current`` and ``stop()`` may be
/// called from other threads; everything else belongs to the loop's
/// thread, which its handlers, tasks, actions and hooks run on.
///
/// ```swift
/// let loop = try EventLoop(name: "loop-1")
/// loop.execute { print(EventLoop.current === loop) }   // true, on the loop's thread
/// loop.stop()
/// ```
public final class EventLoop: @unchecked Sendable {
    // `@unchecked Sendable`: `tasks`, `isSleeping`, `isStopping` and
    // `hasFinished` are touched only with `lock` held; every other stored
    // property only by the loop's thread (or before it starts).

    /// What a descriptor is watched for.
    ///
    /// ```swift
    /// registration.interest = [.readable, .writable]
    /// ```
    public struct Interest: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Data to read, or the peer closed.
        public static let readable = Interest(rawValue: UInt32(EPOLLIN.rawValue))
        /// Room to write.
        public static let writable = Interest(rawValue: UInt32(EPOLLOUT.rawValue))
    }

    /// A descriptor watched by the loop, and its handler.
    public final class Registration {
        /// The descriptor.
        public let descriptor: Int32
        fileprivate let handler: (Registration) -> Void
        fileprivate var slot: Int
        fileprivate unowned let loop: EventLoop
        /// What it is watched for; setting it tells `epoll` at once.
        public var interest: Interest {
            didSet {
                guard interest != oldValue, slot >= 0 else { return }
                loop.control(EPOLL_CTL_MOD, self)
            }
        }

        fileprivate init(descriptor: Int32, interest: Interest, slot: Int, loop: EventLoop, handler: @escaping (Registration) -> Void) {
            self.descriptor = descriptor
            self.interest = interest
            self.slot = slot
            self.loop = loop
            self.handler = handler
        }
    }

    /// The loop's name, which its thread also carries (up to 15 bytes of it).
    public let name: String

    private let epoll: Int32
    private let wakeDescriptor: Int32

    private let lock = ConditionLock()
    private var tasks: [@Sendable () -> Void] = []
    private var isSleeping = false
    private var isStopping = false
    private var hasFinished = false
    private var hasThread = false

    // The loop thread's own; `@exclusivity(unchecked)` because only that
    // thread touches them (a runtime check per access would cost on every
    // request for nothing).
    @exclusivity(unchecked) private var registrations: [Registration?] = []
    @exclusivity(unchecked) private var freeSlots: [Int] = []
    @exclusivity(unchecked) private var actions: [() -> Void] = []
    @exclusivity(unchecked) private var hooks: [(id: Int, hook: () -> Int)] = []
    @exclusivity(unchecked) private var stopHooks: [() -> Void] = []
    @exclusivity(unchecked) private var nextHookID = 0
    /// What the participants keep per loop (the HTTP daemon a loop runs,
    /// say), by a key of their own; on the loop's thread only.
    @exclusivity(unchecked) public var locals: [Int: AnyObject] = [:]
    /// The loop runs its stop hooks, or has run them: a task or pass-end
    /// action handed to it now would never run. On the loop's thread only.
    @exclusivity(unchecked) package private(set) var isEnding = false

    /// Why a loop could not be created.
    public struct StartError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Creates a loop and starts its thread.
    ///
    /// ```swift
    /// let loop = try EventLoop(name: "http-1")
    /// ```
    public init(name: String) throws {
        self.name = name
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { throw StartError(description: "epoll_create1: \(String(cString: strerror(errno)))") }
        wakeDescriptor = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wakeDescriptor >= 0 else {
            close(epoll)
            throw StartError(description: "eventfd: \(String(cString: strerror(errno)))")
        }
        let wake = wakeDescriptor
        register(wakeDescriptor, for: .readable) { _ in
            var value: UInt64 = 0
            _ = read(wake, &value, 8)
        }
        hasThread = true
        let box = Unmanaged.passRetained(self)
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { argument in
                // `argument` is the loop passed to pthread_create: never nil.
                let loop = Unmanaged<EventLoop>.fromOpaque(argument!).takeRetainedValue()
                loop.run()
                return nil
            }, box.toOpaque())
        guard created == 0 else {
            box.release()
            close(epoll)
            close(wakeDescriptor)
            throw StartError(description: "pthread_create: \(String(cString: strerror(created)))")
        }
        _ = String(decoding: name.utf8.prefix(15), as: UTF8.self).withCString { pthread_setname_np(thread, $0) }
        pthread_detach(thread)
    }

    deinit {
        close(epoll)
        close(wakeDescriptor)
    }

    // MARK: - Which loop

    private static let currentKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// The loop whose thread calls, `nil` on any other thread.
    ///
    /// ```swift
    /// if let loop = EventLoop.current { loop.runAtPassEnd { flush() } }
    /// ```
    public static var current: EventLoop? {
        guard let pointer = pthread_getspecific(currentKey) else { return nil }
        return Unmanaged<EventLoop>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Whether the calling thread is this loop's.
    public var isCurrent: Bool {
        pthread_getspecific(Self.currentKey) == Unmanaged.passUnretained(self).toOpaque()
    }

    // MARK: - From any thread

    /// Runs `task` on the loop's thread, soon, in the order handed in; from
    /// any thread. Returns `false`, without running it, once the loop has
    /// stopped.
    ///
    /// ```swift
    /// loop.execute { connection.resume() }
    /// ```
    @discardableResult
    public func execute(_ task: @escaping @Sendable () -> Void) -> Bool {
        lock.lock()
        guard !hasFinished, !isStopping else {
            lock.unlock()
            return false
        }
        tasks.append(task)
        let mustWake = isSleeping
        isSleeping = false
        lock.unlock()
        if mustWake { wake() }
        return true
    }

    /// Runs `task` on the loop's thread and waits until it has run; at once
    /// when called there. Returns `false`, without running it, once the
    /// loop has stopped, or when it stops before the task's turn comes.
    ///
    /// ```swift
    /// loop.executeAndWait { pipeline.shutDown() }
    /// ```
    @discardableResult
    public func executeAndWait(_ task: @escaping @Sendable () -> Void) -> Bool {
        if isCurrent {
            task()
            return true
        }
        let done = DoneSignal()
        guard
            execute({
                task()
                done.signal()
            })
        else { return false }
        while !done.wait(for: .milliseconds(100)) {
            if lock.withLock({ hasFinished }) { return done.wait(for: .zero) }
        }
        return true
    }

    /// Stops the loop: its stop hooks run on its thread, then the thread
    /// ends; waits for that, unless called on the loop's own thread (which
    /// then ends after the current pass). Tasks handed in later are not
    /// run. Stopping a stopped loop does nothing.
    ///
    /// ```swift
    /// loop.stop()
    /// ```
    public func stop() {
        lock.lock()
        guard hasThread, !hasFinished else {
            lock.unlock()
            return
        }
        isStopping = true
        isSleeping = false
        lock.unlock()
        if isCurrent { return }
        wake()
        lock.withLock {
            while !hasFinished { _ = lock.wait(until: .now + .seconds(1)) }
        }
    }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeDescriptor, &one, 8)
    }

    // MARK: - On the loop's thread

    /// Watches `descriptor` for `interest`; `handler` runs on the loop
    /// whenever it is ready (level-triggered: as long as it stays ready),
    /// and reads the readiness from the descriptor itself. The caller
    /// keeps the descriptor open until it calls ``unregister(_:)``.
    ///
    /// ```swift
    /// let watch = loop.register(socket, for: .readable) { _ in receive() }
    /// ```
    @discardableResult
    public func register(_ descriptor: Int32, for interest: Interest, handler: @escaping (Registration) -> Void) -> Registration {
        let slot = freeSlots.popLast() ?? registrations.count
        let registration = Registration(descriptor: descriptor, interest: interest, slot: slot, loop: self, handler: handler)
        if slot == registrations.count { registrations.append(registration) } else { registrations[slot] = registration }
        control(EPOLL_CTL_ADD, registration)
        return registration
    }

    /// Stops watching a registration's descriptor (before the caller closes it).
    public func unregister(_ registration: Registration) {
        guard registration.slot >= 0 else { return }
        _ = epoll_ctl(epoll, EPOLL_CTL_DEL, registration.descriptor, nil)
        registrations[registration.slot] = nil
        freeSlots.append(registration.slot)
        registration.slot = -1
    }

    private func control(_ operation: Int32, _ registration: Registration) {
        var event = epoll_event()
        event.events = registration.interest.rawValue
        event.data.u64 = UInt64(registration.slot)
        _ = epoll_ctl(epoll, operation, registration.descriptor, &event)
    }

    /// Runs `action` later in this pass, after the handlers and tasks, in
    /// the order scheduled; an action may schedule more.
    ///
    /// ```swift
    /// if !isFlushScheduled { isFlushScheduled = true; loop.runAtPassEnd { flush() } }
    /// ```
    public func runAtPassEnd(_ action: @escaping () -> Void) {
        actions.append(action)
    }

    /// Adds a hook asked at the end of every pass how many milliseconds the
    /// loop may sleep before the next (-1: as long as it likes); the hook
    /// also does there whatever has come due. Returns an id for
    /// ``removePassHook(_:)``.
    ///
    /// ```swift
    /// let hook = loop.addPassHook { expireTimeouts(); return waiting.isEmpty ? -1 : 10 }
    /// ```
    @discardableResult
    public func addPassHook(_ hook: @escaping () -> Int) -> Int {
        nextHookID += 1
        hooks.append((nextHookID, hook))
        return nextHookID
    }

    /// Removes the pass hook with `id` (what ``addPassHook(_:)`` returned).
    ///
    /// ```swift
    /// loop.removePassHook(hook)
    /// ```
    public func removePassHook(_ id: Int) {
        hooks.removeAll { $0.id == id }
    }

    /// Runs `hook` on the loop's thread when the loop stops, before its thread ends.
    ///
    /// ```swift
    /// loop.onStop { pipeline.shutDown() }
    /// ```
    public func onStop(_ hook: @escaping () -> Void) {
        stopHooks.append(hook)
    }

    // MARK: - The loop

    private func run() {
        pthread_setspecific(Self.currentKey, Unmanaged.passUnretained(self).toOpaque())
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        var timeout: Int32 = -1
        var taken: [@Sendable () -> Void] = []
        while true {
            lock.lock()
            if isStopping {
                lock.unlock()
                break
            }
            if !tasks.isEmpty { timeout = 0 }
            isSleeping = timeout != 0
            lock.unlock()

            let count = events.withUnsafeMutableBufferPointer { buffer in
                epoll_wait(epoll, buffer.baseAddress, Int32(buffer.count), timeout)
            }

            lock.lock()
            isSleeping = false
            swap(&taken, &tasks)
            lock.unlock()

            for index in 0..<max(Int(count), 0) {
                let slot = Int(events[index].data.u64)
                guard slot < registrations.count, let registration = registrations[slot] else { continue }
                registration.handler(registration)
            }
            for task in taken { task() }
            taken.removeAll(keepingCapacity: true)
            timeout = finishPass()
        }
        isEnding = true
        for hook in stopHooks { hook() }
        stopHooks = []
        hooks = []
        actions = []
        locals = [:]
        for registration in registrations {
            guard let registration else { continue }
            unregister(registration)
        }
        pthread_setspecific(Self.currentKey, nil)
        // Released after the lock: a task's captures may take it in their deinit.
        let dropped = lock.withLock {
            hasFinished = true
            lock.signal()
            defer { tasks = [] }
            return tasks
        }
        _ = dropped
    }

    /// Runs the actions and hooks of a pass; the next wait's timeout.
    private func finishPass() -> Int32 {
        var timeout = -1
        repeat {
            var index = 0
            while index < actions.count {
                actions[index]()
                index += 1
            }
            actions.removeAll(keepingCapacity: true)
            timeout = -1
            for entry in hooks {
                let limit = entry.hook()
                if limit >= 0, timeout < 0 || limit < timeout { timeout = limit }
            }
        } while !actions.isEmpty
        return Int32(clamping: timeout)
    }
}

/// An event loop is handed from thread to thread only through its
/// `Sendable` entry points; its registrations belong to its thread.
@available(*, unavailable)
extension EventLoop.Registration: Sendable {}

/// A value handed to a loop's thread through another thread that does not
/// touch it: a connection opened for the loop, a job for its pipeline.
///
/// `@unchecked Sendable`: the value is used on the loop's thread alone
/// once handed over; the thread that carries it only passes it on.
///
/// ```swift
/// let job = LoopConfined(job)
/// loop.execute { pipeline.enqueue(job.value) }
/// ```
public struct LoopConfined<Value>: @unchecked Sendable {
    public let value: Value
    public init(_ value: Value) { self.value = value }
}

/// A signal one thread waits for, once. `@unchecked Sendable`: `isDone`
/// is touched only with `lock` held.
private final class DoneSignal: @unchecked Sendable {
    private let lock = ConditionLock()
    private var isDone = false

    func signal() {
        lock.withLock {
            isDone = true
            lock.signal()
        }
    }

    /// Whether the signal came within `duration`.
    func wait(for duration: Duration) -> Bool {
        let deadline = ContinuousClock.now + duration
        return lock.withLock {
            while !isDone, ContinuousClock.now < deadline { _ = lock.wait(until: deadline) }
            return isDone
        }
    }
}
