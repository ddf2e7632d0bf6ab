#if canImport(Glibc)
import Glibc
#endif
import Testing
import Locking

/// A counter shared between threads; `@unchecked Sendable` is safe because
/// `value` is only touched with `lock` held.
private final class SharedCounter: @unchecked Sendable {
    let lock = ConditionLock()
    var value = 0
}

@Test func withLockMakesIncrementsFromManyThreadsAtomic() {
    let counter = SharedCounter()
    let threads = (0..<4).map { _ in
        onThread {
            for _ in 0..<10_000 { counter.lock.withLock { counter.value += 1 } }
        }
    }
    for thread in threads { pthread_join(thread, nil) }
    #expect(counter.lock.withLock { counter.value } == 40_000)
}

@Test func waitTimesOutAtTheDeadline() {
    let lock = ConditionLock()
    let started = ContinuousClock.now
    lock.lock()
    var signalled = true
    while signalled { signalled = lock.wait(until: started + .milliseconds(100)) }
    lock.unlock()
    let waited = ContinuousClock.now - started
    #expect(waited >= .milliseconds(100))
    #expect(waited < .seconds(2))
}

@Test func waitReturnsAtOnceWhenTheDeadlineHasPassed() {
    let lock = ConditionLock()
    let passed = lock.withLock { lock.wait(until: .now - .seconds(1)) }
    #expect(!passed)
}

@Test func signalWakesAWaitingThread() {
    let counter = SharedCounter()
    let deadline = ContinuousClock.now + .seconds(10)
    let thread = onThread {
        usleep(50_000)
        counter.lock.withLock {
            counter.value = 1
            counter.lock.signal()
        }
    }
    counter.lock.lock()
    var inTime = true
    while counter.value == 0, inTime { inTime = counter.lock.wait(until: deadline) }
    let value = counter.value
    counter.lock.unlock()
    pthread_join(thread, nil)
    #expect(inTime)
    #expect(value == 1)
    #expect(ContinuousClock.now < deadline)
}
