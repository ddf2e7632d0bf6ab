#if canImport(Glibc)
import Glibc
#endif
import Locking
import Testing

@Test func lockedValueTakesChangesFromManyThreadsWhole() {
    let counts = Locked<[String: Int]>([:])
    let threads = ["a", "b", "c", "d"].map { name in
        onThread {
            for _ in 0..<10_000 { counts.withLock { $0[name, default: 0] += 1 } }
            for _ in 0..<10_000 { counts.withLock { $0["all", default: 0] += 1 } }
        }
    }
    for thread in threads { pthread_join(thread, nil) }
    #expect(counts.withLock { $0 } == ["a": 10_000, "b": 10_000, "c": 10_000, "d": 10_000, "all": 40_000])
}

@Test func lockedValueHandsBackWhatTheBodyReturnsAndThrows() {
    struct Refused: Error {}
    let value = Locked(1)
    #expect(
        value.withLock {
            $0 += 1; return $0 * 10
        } == 20)
    #expect(throws: Refused.self) { try value.withLock { _ throws(Refused) in throw Refused() } }
    #expect(value.withLock { $0 } == 2)
}
