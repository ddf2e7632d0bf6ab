#if canImport(Glibc)
import Glibc
#endif
import EventLoops
import Locking
import PostgreSQL
@testable import PostgreSQLWebService
import Synchronization
import Testing

/// Objects by key run without blocking (`Query.object(on:loop:access:options:completion:)`),
/// on the pool's batcher with other callers' statements.
@Suite struct PoolBatcherTests {
    /// Waits up to 30 s until `done` reaches `total`.
    static func expectAllDone(_ done: borrowing Atomic<Int>, total: Int) {
        let deadline = ContinuousClock.now + .seconds(30)
        while done.load(ordering: .relaxed) < total, ContinuousClock.now < deadline { usleep(10_000) }
        #expect(done.load(ordering: .relaxed) == total)
    }

    /// Runs one read on `loop`'s batcher and waits for it: the batcher is
    /// then open, its stop hook registered.
    static func runOne(on pool: ConnectionPool, loop: EventLoop) throws {
        let done = Done()
        start(object("SELECT 1 AS id"), on: pool, loop: loop, readOnly: true) { done.put($0) }
        _ = try done.wait().get()
    }

    /// Runs `query` on the pool's own batcher and waits for it: whether
    /// there was a row, and the body (`null` without one), or the failure.
    static func run(_ query: Query, on pool: ConnectionPool, readOnly: Bool = false) -> Result<(found: Bool, body: String), any Error> {
        let done = Done()
        start(query, on: pool, readOnly: readOnly) { done.put($0) }
        return done.wait().map { object in
            (object != nil, object.map { String(decoding: $0, as: UTF8.self) } ?? "null")
        }
    }

    /// Starts `query` on `pool`'s batcher for `loop` (its own without one).
    static func start(
        _ query: Query, on pool: ConnectionPool, loop: EventLoop? = nil, readOnly: Bool = false,
        completion: @escaping (Result<[UInt8]?, any Error>) -> Void
    ) {
        query.object(on: pool, loop: loop, access: Access(isReadOnly: readOnly), options: JSONRenderingOptions(), completion: completion)
    }

    /// `sql` as an object query with the `(key, sql)` embeds.
    static func object(_ sql: String, _ arguments: SQLArguments = [:], embedding embeds: [(String, String)] = []) -> Query {
        Query.object(sql, arguments, notFound: "none").attaching(embeds)
    }

    @Test(arguments: [
        (SQLValue.text("2"), "agrees"), (.text("3"), "disagrees"), (.text("abc"), "fails"), (.null, "is NULL"),
    ])
    func attachmentsBoundFromArgumentsMatchTheRow(guess: SQLValue, _: String) throws {
        let pool = TestDatabase.pool(size: 1)
        defer { pool.close() }
        let adapter = Self.object(
            "SELECT n AS id FROM generate_series(1, 3) n WHERE n = :wanted", ["wanted": 2, "id": guess],
            embedding: [("tenfold", "SELECT :id::int * 10 AS tenfold"), ("none", "SELECT 1 AS one WHERE false")])
        let outcome = try Self.run(adapter, on: pool).get()
        #expect(outcome.found)
        #expect(outcome.body == #"{"id":2,"tenfold":[{"tenfold":20}],"none":[]}"#)
    }

    @Test func aMissingRowIsNoObject() throws {
        let pool = TestDatabase.pool(size: 1)
        defer { pool.close() }
        let adapter = Self.object(
            "SELECT 1 AS id WHERE :id::int > 5", ["id": 1], embedding: [("tenfold", "SELECT :id::int * 10 AS tenfold")])
        let outcome = try Self.run(adapter, on: pool).get()
        #expect(!outcome.found)
        #expect(outcome.body == "null")
    }

    /// Failures come back as errors, and the loop's connections go on serving.
    @Test func failuresAreReportedAndTheLoopGoesOn() throws {
        let pool = TestDatabase.pool(size: 1)
        defer { pool.close() }
        let failing = Self.object("SELECT 1 / :zero::int AS id", ["zero": 0], embedding: [("tenfold", "SELECT 10 AS tenfold")])
        #expect { try Self.run(failing, on: pool).get() } throws: { ($0 as? DatabaseError)?.code == .divisionByZero }

        // Twice: a statement whose preparation failed is prepared again, not run unprepared.
        for _ in 1...2 {
            let broken = Self.object("SELEC 1 AS id")
            #expect { try Self.run(broken, on: pool).get() } throws: { ($0 as? DatabaseError)?.code == .syntaxError }
        }

        let missing = Self.object("SELECT :id::int AS id")
        #expect { try Self.run(missing, on: pool).get() } throws: { ($0 as? ParameterError)?.name == "id" }

        let fine = Self.object("SELECT :id::int AS id", ["id": 7])
        #expect(try Self.run(fine, on: pool).get().body == #"{"id":7}"#)
    }

    /// Many callers at once share the loop's connections; each gets its own answer.
    @Test func manyCallersAtOnceGetTheirOwnRows() throws {
        let pool = TestDatabase.pool(size: 1)
        defer { pool.close() }
        let wrong = Atomic<Int>(0)
        let done = Atomic<Int>(0)
        let total = 2_000
        for number in 0..<total {
            let adapter = Self.object(
                "SELECT :n::int AS n, repeat('x', :n::int % 50) AS pad", ["n": number],
                embedding: [("double", "SELECT :n::int * 2 AS d FROM generate_series(1, :n::int % 3)")])
            Self.start(adapter, on: pool) { outcome in
                let output = (try? outcome.get()).flatMap { $0 } ?? []
                let pad = String(repeating: "x", count: number % 50)
                let doubles = Array(repeating: #"{"d":\#(number * 2)}"#, count: number % 3).joined(separator: ",")
                if String(decoding: output, as: UTF8.self) != #"{"n":\#(number),"pad":"\#(pad)","double":[\#(doubles)]}"# {
                    wrong.add(1, ordering: .relaxed)
                }
                done.add(1, ordering: .relaxed)
            }
        }
        Self.expectAllDone(done, total: total)
        #expect(wrong.load(ordering: .relaxed) == 0)
    }

    /// While its connection keeps up, the pipeline sends every batch on it
    /// and opens no other.
    @Test func oneConnectionServesWhileItKeepsUp() throws {
        let application = "pipeline-one-\(UInt32.random(in: 0...UInt32.max))"
        let pool = ConnectionPool(.init(conninfo: "application_name=\(application)", size: 1))
        defer { pool.close() }
        let done = Atomic<Int>(0)
        let total = 2_000
        for number in 0..<total {
            let adapter = Self.object("SELECT :n::int AS n", ["n": number])
            Self.start(adapter, on: pool) { _ in
                done.add(1, ordering: .relaxed)
            }
        }
        Self.expectAllDone(done, total: total)
        let observer = try TestDatabase.connect()
        defer { observer.close() }
        let sessions = try observer.fetchOne(
            Int.self, "SELECT count(*) AS count FROM pg_stat_activity WHERE application_name = :name", ["name": application])
        #expect(sessions == 1)
    }

    /// Second rounds (guesses that fail) among many callers on the
    /// pipeline's two connections: each round takes its statements from the
    /// connection that runs it. Five SQL texts used in no set order give the
    /// same statement different names on the two. A slow statement stalls
    /// the first connection, so that the second opens; once it ends, both
    /// take jobs.
    @Test func secondRoundsRunOnEitherConnection() throws {
        let pool = TestDatabase.pool(size: 1)
        defer { pool.close() }
        let slow = Self.object("SELECT 1 AS id FROM pg_sleep(0.4)")
        let slowDone = Done()
        Self.start(slow, on: pool) { slowDone.put($0) }
        usleep(200_000)
        let wrong = Atomic<Int>(0)
        let done = Atomic<Int>(0)
        let total = 1_000
        for number in 0..<total {
            let variant = number % 5
            let guess = number % 2 == 0 ? number + variant : -1
            let adapter = Self.object(
                "SELECT :wanted::int + \(variant) AS id", ["wanted": number, "id": guess],
                embedding: [("more", "SELECT :id::int * 10 + \(variant) AS t")])
            Self.start(adapter, on: pool) { outcome in
                let output = (try? outcome.get()).flatMap { $0 } ?? []
                let id = number + variant
                if String(decoding: output, as: UTF8.self) != #"{"id":\#(id),"more":[{"t":\#(id * 10 + variant)}]}"# {
                    wrong.add(1, ordering: .relaxed)
                }
                done.add(1, ordering: .relaxed)
            }
        }
        Self.expectAllDone(done, total: total)
        #expect(wrong.load(ordering: .relaxed) == 0)
        #expect((try? slowDone.wait().get()) != nil)
    }

    /// Reads handed in together share a transaction (one `now()`), made
    /// read-only; a read that fails among them fails alone, and the reads
    /// skipped after it are sent again and get their own rows.
    @Test func readsShareATransactionAndFailAlone() throws {
        let pool = TestDatabase.pool(size: 1)
        defer { pool.close() }
        let lock = ConditionLock()
        // `@unchecked Sendable` in effect: touched only with `lock` held.
        nonisolated(unsafe) var outcomes: [Int: String] = [:]
        let done = Atomic<Int>(0)
        let total = 300
        for number in 0..<total {
            let divisor = number % 7 == 3 ? 0 : 1
            let adapter = Self.object(
                "SELECT :n::int / :divisor::int AS n, now()::text AS started, current_setting('transaction_read_only') AS readOnly",
                ["n": number, "divisor": divisor])
            Self.start(adapter, on: pool, readOnly: true) { outcome in
                let text: String
                switch outcome {
                case .success(let output): text = String(decoding: output ?? [], as: UTF8.self)
                case .failure(let error): text = "\((error as? DatabaseError)?.code.rawValue ?? "\(error)")"
                }
                lock.withLock { outcomes[number] = text }
                done.add(1, ordering: .relaxed)
            }
        }
        Self.expectAllDone(done, total: total)
        let results = lock.withLock { outcomes }
        var started: Set<String> = []
        for number in 0..<total {
            let text = try #require(results[number])
            if number % 7 == 3 {
                #expect(text == SQLState.divisionByZero.rawValue)
                continue
            }
            #expect(text.hasPrefix(#"{"n":\#(number),"started":""#), "\(number): \(text)")
            #expect(text.hasSuffix(#","readOnly":"on"}"#), "\(number): \(text)")
            started.insert(String(text.split(separator: ",")[1]))
        }
        #expect(started.count < total / 2, "reads handed in together share transactions")
    }

    /// A read that writes fails in its read-only transaction (`25006`); the
    /// same statement not marked as a read runs in a transaction of its own.
    @Test func aReadThatWritesFails() throws {
        try TestDatabase.withScratchSchema("CREATE SEQUENCE counter") { schema in
            let pool = TestDatabase.pool(size: 1)
            defer { pool.close() }
            let read = Self.object("SELECT nextval('\(schema).counter') AS n")
            #expect { try Self.run(read, on: pool, readOnly: true).get() } throws: {
                ($0 as? DatabaseError)?.code == .readOnlySQLTransaction
            }

            let write = Self.object("SELECT nextval('\(schema).counter') AS n")
            let body = try Self.run(write, on: pool).get().body
            #expect(body == #"{"n":1}"#)
        }
    }

    /// Given an event loop, the pool's batcher is that loop's: the completion
    /// runs there, with no other thread. Closing the pool closes its
    /// connection; the next caller opens one again.
    @Test func onAnEventLoopTheBatcherIsTheLoops() throws {
        let application = "pipeline-loop-\(UInt32.random(in: 0...UInt32.max))"
        let pool = ConnectionPool(.init(conninfo: "application_name=\(application)", size: 1))
        defer { pool.close() }
        let loop = try EventLoop(name: "test-loop")
        defer { loop.stop() }
        let observer = try TestDatabase.connect()
        defer { observer.close() }
        func sessions() throws -> Int? {
            try observer.fetchOne(
                Int.self, "SELECT count(*) AS count FROM pg_stat_activity WHERE application_name = :name", ["name": application])
        }
        for round in 1...2 {
            let done = Done()
            let onLoop = Atomic<Bool>(false)
            let query = Self.object("SELECT :n::int AS n", ["n": round])
            Self.start(query, on: pool, loop: loop, readOnly: true) { outcome in
                onLoop.store(loop.isCurrent, ordering: .relaxed)
                done.put(outcome)
            }
            let output = try #require(try done.wait().get())
            let ranOnLoop = onLoop.load(ordering: .relaxed)
            #expect(ranOnLoop)
            #expect(String(decoding: output, as: UTF8.self) == #"{"n":\#(round)}"#)
            #expect(try sessions() == 1)
            pool.close()
            // The connection is closed when `close()` returns; its backend
            // leaves `pg_stat_activity` a moment later.
            let deadline = ContinuousClock.now + .seconds(10)
            while try sessions() != 0, ContinuousClock.now < deadline { usleep(10_000) }
            #expect(try sessions() == 0)
        }
    }

    /// A loop that stops answers every job handed to its batcher, those
    /// whose hand-over it never ran included: none is left without an
    /// answer, whether the batcher had run a job before (`warm`) or not.
    @Test(arguments: [true, false]) func everyJobIsAnsweredWhenItsLoopStops(warm: Bool) throws {
        let pool = TestDatabase.pool(size: 1)
        defer { pool.close() }
        let loop = try EventLoop(name: "test-stopping-loop")
        if warm { try Self.runOne(on: pool, loop: loop) }
        let answered = Atomic<Int>(0)
        let total = 200
        for index in 0..<total {
            Self.start(Self.object("SELECT :n::int AS id", ["n": index]), on: pool, loop: loop, readOnly: true) { _ in
                answered.add(1, ordering: .relaxed)
            }
        }
        loop.stop()
        Self.expectAllDone(answered, total: total)
    }

    /// A job handed to a batcher while its loop runs its stop hooks (a read
    /// sent again to the primary by a replica's failure, say) is answered:
    /// it fails at once with the closed error rather than wait for a pass
    /// that never comes. `warm`: the batcher ran a job before, so its own
    /// stop hook has run; else the stop hook is its first use.
    @Test(arguments: [true, false]) func aJobHandedInWhileItsLoopStopsIsAnswered(warm: Bool) throws {
        let pool = TestDatabase.pool(size: 1)
        defer { pool.close() }
        let loop = try EventLoop(name: "test-ending-loop")
        if warm { try Self.runOne(on: pool, loop: loop) }
        let closed = Atomic<Int>(0)
        loop.executeAndWait {
            loop.onStop {
                Self.start(Self.object("SELECT 2 AS id"), on: pool, loop: loop, readOnly: true) { outcome in
                    if case .failure(let error as DatabaseError) = outcome, error.code == .connectionFailure {
                        closed.add(1, ordering: .relaxed)
                    }
                }
            }
        }
        loop.stop()
        Self.expectAllDone(closed, total: 1)
    }

    /// Closing the pool fails what is in flight; the next caller starts the loop again.
    @Test func theLoopStartsAgainAfterThePoolCloses() throws {
        let pool = TestDatabase.pool(size: 1)
        defer { pool.close() }
        let first = Self.object("SELECT 1 AS id")
        #expect(try Self.run(first, on: pool).get().body == #"{"id":1}"#)
        pool.close()
        usleep(50_000)
        let second = Self.object("SELECT 2 AS id")
        #expect(try Self.run(second, on: pool).get().body == #"{"id":2}"#)
    }
}

/// One outcome handed from the loop's thread to the test's.
private final class Done: @unchecked Sendable {
    // `@unchecked Sendable`: `outcome` is touched only with `lock` held.
    private let lock = ConditionLock()
    private var outcome: Result<[UInt8]?, any Error>?

    func put(_ outcome: Result<[UInt8]?, any Error>) {
        lock.withLock {
            self.outcome = outcome
            lock.signal()
        }
    }

    func wait() -> Result<[UInt8]?, any Error> {
        lock.withLock {
            while outcome == nil { _ = lock.wait(until: .now + .seconds(30)) }
            return outcome!
        }
    }
}
