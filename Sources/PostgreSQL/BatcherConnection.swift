internal import CLibPQ
#if canImport(Glibc)
import Glibc
#endif
import EventLoops
import PrometheusMetrics
import Locking

// MARK: - Connections of a pipeline

/// A job sent, waiting for its results.
struct InFlight {
    let job: StatementBatcher.Job
    /// How many statement results make it complete.
    let count: Int
    let submitted: ContinuousClock.Instant
    let sent: ContinuousClock.Instant
    /// Answered already (overdue behind a job that does not finish).
    var isAbandoned = false
    /// The last job before a synchronization point.
    var endsGroup = false
    var results: [QueryResult?] = []
    /// A preparation's failure, which fails the whole job.
    var failure: (any Error)?
    /// The spans of the statements sent, in order, when the job is traced.
    var spans: [StatementSpan]?

    init(job: StatementBatcher.Job, count: Int, submitted: ContinuousClock.Instant, sent: ContinuousClock.Instant) {
        self.job = job
        self.count = count
        self.submitted = submitted
        self.sent = sent
    }

    /// Ends the spans of the statements whose results did not come, with `failure`.
    func endSpansLeft(failure: DatabaseError?) {
        guard let spans, results.count < spans.count else { return }
        for span in spans[results.count...] { span.end(rows: nil, failure: failure) }
    }
}

/// One connection of a pipeline, in pipeline mode, and what it waits for.
/// Touched by the loop's thread alone: its `var`s are not checked for
/// exclusivity at run time (see `StatementBatcher`).
final class BatcherConnection {
    enum Expected {
        /// A statement sent before a job's own, whose failure is the job's:
        /// the preparation of the statement; without one, `DEALLOCATE ALL`
        /// or the statement that makes a group of reads read-only.
        case preliminary(PreparedStatement?)
        case statement
        case sync
    }

    let connection: Connection
    let registration: EventLoop.Registration
    /// Jobs sent, oldest first; taken out by `removeFirst()` and `removeAll()`.
    @exclusivity(unchecked) var inFlight: [InFlight] = []
    /// The results still to come, in order, from `expectedStart` on.
    @exclusivity(unchecked) var expected: [Expected] = []
    @exclusivity(unchecked) var expectedStart = 0
    @exclusivity(unchecked) var needsFlush = false
    /// Reads sent since the last synchronization point.
    @exclusivity(unchecked) var groupSize = 0
    /// Reads have been sent since the last synchronization point.
    var isGroupOpen: Bool { groupSize > 0 }

    /// Where the job whose results come next is in `inFlight`.
    @exclusivity(unchecked) private var receivingIndex = 0

    /// Where the job whose results come next is: the first still short of them.
    func receivingJob() -> Int? {
        while receivingIndex < inFlight.count, inFlight[receivingIndex].results.count >= inFlight[receivingIndex].count {
            receivingIndex += 1
        }
        return receivingIndex < inFlight.count ? receivingIndex : nil
    }

    /// Takes the first job in flight out.
    func removeFirst() -> InFlight {
        receivingIndex = max(0, receivingIndex - 1)
        return inFlight.removeFirst()
    }

    /// Takes every job in flight out.
    func removeAll() -> [InFlight] {
        receivingIndex = 0
        defer { inFlight = [] }
        return inFlight
    }

    init(_ connection: Connection, registration: EventLoop.Registration) {
        self.connection = connection
        self.registration = registration
    }

    func advance() {
        expectedStart += 1
        if expectedStart == expected.count {
            expected.removeAll(keepingCapacity: true)
            expectedStart = 0
        } else if expectedStart >= 1024 {
            expected.removeFirst(expectedStart)
            expectedStart = 0
        }
    }
}
