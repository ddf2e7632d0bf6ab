#if canImport(Glibc)
import Glibc
#endif
import Locking
import Testing

@Test func lockedValueTakesChangesFromManyThreadsWhole() {
    let counts = Locked<[String: Int]>([:])
    var threads: [pthread_t] = []
    for name in ["a", "b", "c", "d"] {
        final class Box {
            let body: () -> Void
            init(_ body: @escaping () -> Void) { self.body = body }
        }
        var thread = pthread_t()
        let body = {
            for _ in 0..<10_000 { counts.withLock { $0[name, default: 0] += 1 } }
            for _ in 0..<10_000 { counts.withLock { $0["all", default: 0] += 1 } }
        }
        let created = pthread_create(&thread, nil, { argument in
            Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue().body()
            return nil
        }, Unmanaged.passRetained(Box(body)).toOpaque())
        #expect(created == 0)
        threads.append(thread)
    }
    for thread in threads { pthread_join(thread, nil) }
    #expect(counts.withLock { $0 } == ["a": 10_000, "b": 10_000, "c": 10_000, "d": 10_000, "all": 40_000])
}

@Test func lockedValueHandsBackWhatTheBodyReturnsAndThrows() {
    struct Refused: Error {}
    let value = Locked(1)
    #expect(value.withLock { $0 += 1; return $0 * 10 } == 20)
    #expect(throws: Refused.self) { try value.withLock { _ throws(Refused) in throw Refused() } }
    #expect(value.withLock { $0 } == 2)
}
