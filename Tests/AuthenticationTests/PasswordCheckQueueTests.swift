import Foundation
import Locking
import Testing
@testable import Authentication

/// The password-check threads: a bounded queue, and nothing a check holds
/// (a request, a password) kept once it has run.
@Suite("Password check queue")
struct PasswordCheckQueueTests {
    final class Held: Sendable {
        let freed: Locked<Int>
        init(_ freed: Locked<Int>) { self.freed = freed }
        deinit { freed.withLock { $0 += 1 } }
    }

    @Test("checks that ran let go of what they held, though the queue never emptied; a full queue refuses")
    func releasesAndBounds() throws {
        let queue = PasswordCheckQueue(threads: 1, capacity: 8)
        let freed = Locked(0)
        let ran = Locked(0)
        let open = Locked(false)
        // The first check waits, so that the queue fills behind it.
        #expect(
            queue.submit {
                while !open.withLock({ $0 }) { usleep(1_000) }
            })
        Thread.sleep(forTimeInterval: 0.1)
        var accepted = 0
        for _ in 0..<20 {
            let held = Held(freed)
            if queue.submit({
                _ = held; ran.withLock { $0 += 1 }
            }) {
                accepted += 1
            }
        }
        #expect(accepted == 8, "the queue's length bounds what waits")
        open.withLock { $0 = true }
        // Steady traffic afterwards: the queue keeps a check or two in it.
        for _ in 0..<200 {
            let held = Held(freed)
            while !queue.submit({
                _ = held; ran.withLock { $0 += 1 }
            }) { usleep(1_000) }
        }
        let deadline = Date(timeIntervalSinceNow: 10)
        while ran.withLock({ $0 }) < 208, Date() < deadline { usleep(10_000) }
        #expect(ran.withLock { $0 } == 208)
        usleep(50_000)
        #expect(freed.withLock { $0 } == 220, "every check's captures freed: \(freed.withLock { $0 })")
    }
}
