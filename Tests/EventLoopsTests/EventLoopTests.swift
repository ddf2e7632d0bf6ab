#if canImport(Glibc)
import Glibc
#endif
import EventLoops
import Locking
import Synchronization
import Testing

/// What the loop's thread records, read by the test.
private final class Log: Sendable {
    private let entries = Locked<[String]>([])
    func add(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
}

/// A registration, kept on the loop's thread.
private final class Watch {
    var registration: EventLoop.Registration?
}

/// Waits up to `seconds` for `condition`, polling every millisecond.
private func eventually(within seconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(1_000)
    }
    return condition()
}

@Suite struct EventLoopTests {
    @Test func tasksRunOnTheLoopInOrder() throws {
        let loop = try EventLoop(name: "test-order")
        defer { loop.stop() }
        let log = Log()
        #expect(EventLoop.current == nil)
        #expect(!loop.isCurrent)
        for index in 0..<100 {
            loop.execute {
                log.add("\(index) \(EventLoop.current === loop) \(loop.isCurrent)")
            }
        }
        #expect(eventually { log.all.count == 100 })
        #expect(log.all == (0..<100).map { "\($0) true true" })
    }

    /// A descriptor's handler runs while it is ready; after `unregister`, never again.
    /// `executeAndWait` returns once the task has run on the loop; on the
    /// loop's own thread it runs the task at once; after `stop()` it runs nothing.
    @Test func executeAndWaitReturnsOnceTheTaskHasRun() throws {
        let loop = try EventLoop(name: "test-wait")
        let log = Log()
        let ran = loop.executeAndWait {
            usleep(50_000)
            log.add(loop.isCurrent ? "on the loop" : "elsewhere")
        }
        #expect(ran)
        #expect(log.all == ["on the loop"])
        let nested = loop.executeAndWait {
            let inner = loop.executeAndWait { log.add("inner") }
            log.add("outer \(inner)")
        }
        #expect(nested)
        #expect(log.all == ["on the loop", "inner", "outer true"])
        loop.stop()
        #expect(!loop.executeAndWait { log.add("after stop") })
        #expect(log.all.count == 3)
    }

    @Test func aReadyDescriptorRunsItsHandler() throws {
        let loop = try EventLoop(name: "test-fd")
        defer { loop.stop() }
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let reader = ends[0]
        let log = Log()
        let watch = LoopConfined(Watch())
        loop.execute {
            watch.value.registration = loop.register(reader, for: .readable) { _ in
                var byte: UInt8 = 0
                if read(reader, &byte, 1) == 1 { log.add("read \(byte)") }
            }
        }
        var byte: UInt8 = 7
        _ = write(ends[1], &byte, 1)
        #expect(eventually { log.all == ["read 7"] })
        loop.execute {
            if let registration = watch.value.registration { loop.unregister(registration) }
            log.add("unregistered")
        }
        #expect(eventually { log.all.count == 2 })
        byte = 8
        _ = write(ends[1], &byte, 1)
        usleep(50_000)
        #expect(log.all == ["read 7", "unregistered"])
    }

    /// Actions run after the pass's tasks, in the order scheduled, those
    /// they schedule included; hooks come after the actions.
    @Test func actionsRunAtTheEndOfThePass() throws {
        let loop = try EventLoop(name: "test-actions")
        defer { loop.stop() }
        let log = Log()
        loop.execute {
            loop.runAtPassEnd {
                log.add("action 1")
                loop.runAtPassEnd { log.add("action 3, scheduled by action 1") }
            }
            loop.runAtPassEnd { log.add("action 2") }
            var hooked = false
            loop.addPassHook {
                if !hooked {
                    hooked = true
                    log.add("hook")
                }
                return -1
            }
            log.add("task")
        }
        #expect(eventually { log.all.count == 5 })
        #expect(log.all == ["task", "action 1", "action 2", "action 3, scheduled by action 1", "hook"])
    }

    /// A hook's wait limit wakes the loop with nothing else to do.
    @Test func aHookLimitsTheSleep() throws {
        let loop = try EventLoop(name: "test-hook")
        defer { loop.stop() }
        let calls = Atomic<Int>(0)
        loop.execute {
            loop.addPassHook {
                calls.add(1, ordering: .relaxed)
                return 5
            }
        }
        usleep(200_000)
        // About 40 passes in 200 ms; a loop that slept forever would have made one.
        #expect(calls.load(ordering: .relaxed) >= 10)
    }

    /// Stopping runs the stop hooks on the loop's thread and waits for the
    /// thread to end; tasks handed in afterwards are refused.
    @Test func stoppingRunsTheStopHooks() throws {
        let loop = try EventLoop(name: "test-stop")
        let log = Log()
        loop.execute {
            loop.onStop { log.add("stopped on the loop: \(loop.isCurrent)") }
        }
        usleep(10_000)
        loop.stop()
        #expect(log.all == ["stopped on the loop: true"])
        #expect(!loop.execute { log.add("too late") })
        loop.stop()
        usleep(10_000)
        #expect(log.all.count == 1)
    }

    /// The loop's own thread may stop it (a pool released by the last task
    /// that held it, say): the loop ends after the pass.
    @Test func aLoopStopsItselfWithoutWaiting() throws {
        let loop = try EventLoop(name: "test-self-stop")
        let log = Log()
        loop.execute {
            loop.onStop { log.add("stopped") }
            loop.stop()
            log.add("returned")
        }
        #expect(eventually { log.all == ["returned", "stopped"] })
        #expect(!loop.execute {})
    }
}
