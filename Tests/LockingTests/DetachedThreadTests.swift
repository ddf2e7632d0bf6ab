import Testing
import Locking

/// A flag one thread sets and another waits for; `@unchecked Sendable`
/// because `isSet` is only touched with `lock` held.
private final class Flag: @unchecked Sendable {
    let lock = ConditionLock()
    var isSet = false
}

@Test func detachedThreadRunsItsBody() {
    let flag = Flag()
    let started = DetachedThread.start {
        flag.lock.withLock {
            flag.isSet = true
            flag.lock.signal()
        }
    }
    #expect(started)
    flag.lock.lock()
    let deadline = ContinuousClock.now + .seconds(5)
    while !flag.isSet, flag.lock.wait(until: deadline) {}
    let isSet = flag.isSet
    flag.lock.unlock()
    #expect(isSet)
}
