import HTTPServer
import JSONStreaming
import Locking
import PostgreSQL
import Synchronization
import WebService

// MARK: - Short lists, answered whole from the event loop's batcher

/// What the runner knows of each list statement: whether its answers may
/// be read whole on the batcher (``Query/shortList(runner:request:access:pool:)``),
/// and how many rows at most.
///
/// A list goes to the batcher only when its rows have a bounded width:
/// every column's type sets a maximum length (`int4`, `date`, an enum,
/// `varchar(14)`; not `text`, `json` or arrays). The bound is read from
/// the statement's result description once (`LIMIT 0`, which runs none of
/// its rows), beside the first request, which streams on a worker as
/// before; it fixes how many rows the batcher reads at once: at most
/// ``maximumRows``, and at most ``maximumBytes`` of JSON in the worst case.
/// So a request's memory stays bounded whatever its data, as on the
/// streaming path.
///
/// A statement found to have more rows than that (which then ran again on
/// a worker) takes a worker for its next ``skipsAfterLong`` requests, so
/// that a list that is usually long seldom runs twice; one whose page
/// `limit` fits still takes the batcher. A statement not yet found short
/// (just described, or long before) is tried by one request at a time, the
/// others taking workers until its answer comes: many callers of a long
/// list would otherwise all run it twice while the first try is under way.
final class ShortLists: Sendable {
    /// Rows at most in a short list.
    static let maximumRows = 1_000
    /// Bytes of JSON at most in a short list, by the rows' worst-case width.
    static let maximumBytes = 256 << 10
    /// A statement whose answer took longer than this, from submission to
    /// completion, held up the reads pipelined behind it on the batcher's
    /// connection (which, past `StatementBatcher.stallThreshold`, got no
    /// new ones): its next ``skipsAfterSlow`` requests take a worker. A
    /// second, so that a loaded machine's delays do not move lists that
    /// are quick in themselves.
    static let slow: Duration = .seconds(1)
    static let skipsAfterSlow = 1_000
    static let skipsAfterLong = 100
    /// A try not answered by then is taken for lost (its response dropped
    /// before it started, its job lost with a stopping loop), and the next
    /// request tries again: a lost try must not keep the statement off the
    /// batcher for good.
    let tryLifetime: Duration

    init(tryLifetime: Duration = .seconds(10)) {
        self.tryLifetime = tryLifetime
    }
    /// Statements remembered; past it, the memory is emptied (SQL built per
    /// request from filters may have many shapes).
    static let capacity = 1_000

    /// How a list statement is answered.
    enum Decision {
        /// Its rows' width is not known yet: it streams on a worker, and the
        /// batcher reads its description meanwhile (``learn(_:rowLimit:)``
        /// or ``forget(_:)`` when it comes).
        case unknown
        /// Streamed on a worker.
        case worker
        /// Read whole on the batcher by `statement` (the list's SQL cut by
        /// `:shortLimit`), when it has at most this many rows; `attempt`:
        /// the one try of a statement not yet found short, ended by
        /// ``answered(_:long:attempt:)``.
        case batcher(rowLimit: Int, statement: String, attempt: Attempt? = nil)
    }

    /// One try of a statement not yet found short. Only its own answer
    /// ends it: the answer to an older try (one taken for lost past
    /// `tryLifetime`, or from before the statement was learned again or
    /// forgotten with the others) leaves the newer try running.
    struct Attempt: Equatable, Sendable {
        fileprivate let number: UInt64
    }

    private struct Entry {
        /// Rows at most; 0: the rows have no bounded width.
        var rowLimit: Int
        /// The SQL the batcher runs, written once.
        var statement = ""
        /// Requests left that take a worker after a slow answer.
        var slowSkips = 0
        /// Requests left that take a worker after a long answer, unless their page fits.
        var longSkips = 0
        /// No answer read on the batcher has been short since the statement
        /// was described, or since one was long.
        var mayBeLong = true
        /// The try under way while `mayBeLong`, and when it was sent to the batcher.
        var attempt: (Attempt, started: ContinuousClock.Instant)?
    }

    private let entries = Locked<[String: Entry]>([:])
    private let attempts = Atomic<UInt64>(0)

    /// How the list statement `sql`, whose page has at most `pageLimit`
    /// rows (`nil`: no limit), is answered now.
    func decision(for sql: String, pageLimit: Int?) -> Decision {
        entries.withLock { entries in
            guard var entry = entries[sql] else {
                if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
                // Streamed on workers until its description comes.
                entries[sql] = Entry(rowLimit: 0)
                return .unknown
            }
            guard entry.rowLimit > 0 else { return .worker }
            if entry.slowSkips > 0 {
                entry.slowSkips -= 1
                entries[sql] = entry
                return .worker
            }
            if let pageLimit, pageLimit <= entry.rowLimit { return .batcher(rowLimit: entry.rowLimit, statement: entry.statement) }
            if entry.longSkips > 0 {
                entry.longSkips -= 1
                entries[sql] = entry
                return .worker
            }
            guard entry.mayBeLong else { return .batcher(rowLimit: entry.rowLimit, statement: entry.statement) }
            let now = ContinuousClock.now
            if let (_, started) = entry.attempt, now - started < tryLifetime { return .worker }
            let attempt = Attempt(number: attempts.add(1, ordering: .relaxed).newValue)
            entry.attempt = (attempt, now)
            entries[sql] = entry
            return .batcher(rowLimit: entry.rowLimit, statement: entry.statement, attempt: attempt)
        }
    }

    /// `sql`'s rows take at most `rowLimit` at once on the batcher (0:
    /// none), read by `statement`.
    /// A statement learned again keeps the requests it skips after a slow
    /// answer: its types changed, not its speed.
    func learn(_ sql: String, rowLimit: Int, statement: String = "") {
        entries.withLock { entries in
            entries[sql] = Entry(rowLimit: rowLimit, statement: statement, slowSkips: entries[sql]?.slowSkips ?? 0)
        }
    }

    /// `sql` could not be described (a role without the privilege, say):
    /// the next request tries again.
    func forget(_ sql: String) {
        entries.withLock { entries in entries[sql] = nil }
    }

    /// `sql` answered slowly: the next requests take a worker.
    func answeredSlowly(_ sql: String) {
        entries.withLock { entries in entries[sql]?.slowSkips = Self.skipsAfterSlow }
    }

    /// `sql`'s answer on the batcher came, for a request whose page may
    /// have more rows than the batcher reads or for `attempt`: `long` if
    /// it had (the next requests whose page may too take a worker); `nil`
    /// if it failed (the next request tries again). The answer to an
    /// attempt other than the one under way leaves that one running, and
    /// counts only if long.
    func answered(_ sql: String, long: Bool?, attempt: Attempt? = nil) {
        entries.withLock { entries in
            guard var entry = entries[sql] else { return }
            if let attempt {
                if entry.attempt?.0 == attempt {
                    entry.attempt = nil
                } else if long != true {
                    return
                }
            }
            if let long {
                entry.mayBeLong = long
                if long { entry.longSkips = Self.skipsAfterLong }
            }
            entries[sql] = entry
        }
    }

    /// Whether `error`, from a statement's description, says that its SQL
    /// cannot run as a subquery (a syntax error, a data-modifying `WITH`,
    /// a feature not supported there), not that the caller may not run it.
    static func cannotBeWrapped(_ error: DatabaseError) -> Bool {
        let code = error.code.rawValue
        return (code.hasPrefix("42") && code != "42501") || code.hasPrefix("0A")
    }

    /// The rows at most for a result whose description is `described`.
    static func rowLimit(describedBy described: QueryResult) -> Int {
        guard let width = described.maximumJSONRowBytes() else { return 0 }
        return min(maximumRows, maximumBytes / width)
    }
}

extension Query {
    /// The answer to a read of this list from the batcher of the request's
    /// event loop, without a worker or a connection of its own: for a list
    /// without embeds asked for as JSON, without a count, whose rows have a
    /// bounded width (``ShortLists``). `nil`: it runs on a worker.
    ///
    /// The batcher reads one row more than the limit: a list that has it
    /// is answered on a worker after all, streamed, as is one that fails
    /// (whose problem the worker's run reports as it always does). The
    /// batcher's answer is the streaming one's: the same body, status and
    /// header fields, and, being whole, an `ETag`.
    func shortList(runner: QueryRunner, request: RoutedRequest, access: Access, pool: ConnectionPool) -> HTTPResponse? {
        guard request.isRead, case .list = shape, embeds.isEmpty, members.isEmpty,
            let preferences = try? ReadPreferences(request.headers, method: request.method),
            preferences.representation == .json, preferences.count == nil,
            let page = try? listPage(runner: runner, request: request, preferences: preferences, access: access, connection: nil)
        else { return nil }
        switch runner.shortLists.decision(for: page.sql, pageLimit: page.limit) {
        case .worker:
            return nil
        case .unknown:
            describeShortList(page: page, runner: runner, request: request, access: access, pool: pool)
            return nil
        case .batcher(let rowLimit, let statement, let attempt):
            return HTTPResponse.later { promise in
                shortList(
                    page: page, statement: statement, rowLimit: rowLimit, attempt: attempt, runner: runner, request: request,
                    access: access, pool: pool, promise: promise)
            }
        }
    }

    /// Learns, on `pool`'s batcher and without holding up the request, how
    /// many rows of `page`'s statement the batcher may read at once.
    private func describeShortList(page: ListPage, runner: QueryRunner, request: RoutedRequest, access: Access, pool: ConnectionPool) {
        guard let batcher = try? pool.batcher(on: request.request.eventLoop) else { return runner.shortLists.forget(page.sql) }
        let statement = Self.limited(page.sql, as: "short", limit: ":shortLimit")
        batcher.submit(
            Self.shortListJob(page: page, statement: statement, rows: 0, access: access) { outcome in
                switch outcome {
                case .success((let description, _)):
                    runner.shortLists.learn(page.sql, rowLimit: ShortLists.rowLimit(describedBy: description), statement: statement)
                case .failure(let error as DatabaseError) where ShortLists.cannotBeWrapped(error):
                    // SQL that is no query once wrapped: streamed on workers from now on.
                    runner.shortLists.learn(page.sql, rowLimit: 0)
                case .failure:
                    // A role without the privilege, a lost connection: the next request tries again.
                    runner.shortLists.forget(page.sql)
                }
            })
    }

    /// On the request's event loop: `page` read on `pool`'s batcher, at
    /// most `rowLimit` rows, else streamed on a worker.
    private func shortList(
        page: ListPage, statement: String, rowLimit: Int, attempt: ShortLists.Attempt?, runner: QueryRunner,
        request: RoutedRequest, access: Access, pool: ConnectionPool, promise: ResponsePromise
    ) {
        // Streamed on a worker after all. `long`: the batcher found more
        // rows than it reads; `nil`: it found nothing (it failed or was not
        // reached), which ends a try without a verdict.
        func onWorker(long: Bool?) {
            if attempt != nil || long == true { runner.shortLists.answered(page.sql, long: long, attempt: attempt) }
            promise.succeed(HTTPResponse.blocking { response(onWorker: runner, request: request, access: access, pool: pool) })
        }
        let batcher: StatementBatcher
        do {
            batcher = try pool.batcher(on: request.request.eventLoop)
        } catch {
            return onWorker(long: nil)
        }
        let submitted = ContinuousClock.now
        // One row more than the limit tells a list that has more.
        batcher.submit(
            Self.shortListJob(page: page, statement: statement, rows: rowLimit + 1, access: access) { outcome in
                // Slow whether it succeeded or not: a statement timeout held the connection too.
                if ContinuousClock.now - submitted > ShortLists.slow { runner.shortLists.answeredSlowly(page.sql) }
                switch outcome {
                case .success((let answer, let prepared)):
                    // The columns' types may have changed since the description (a column made `text`).
                    let current = ShortLists.rowLimit(describedBy: answer)
                    let relearned = current != rowLimit
                    if relearned { runner.shortLists.learn(page.sql, rowLimit: current, statement: statement) }
                    guard answer.rowCount <= min(rowLimit, current) else { return onWorker(long: true) }
                    // Learned again, the entry's try (if any) was dropped with it: the answer
                    // counts as short for the new types, whichever request read it.
                    if attempt != nil || relearned {
                        runner.shortLists.answered(page.sql, long: false, attempt: relearned ? nil : attempt)
                    }
                    promise.succeed(Self.shortListResponse(answer, statement: prepared, page: page, runner: runner, request: request))
                case .failure(let error) where runner.readsAgain(after: error, on: pool):
                    shortList(
                        page: page, statement: statement, rowLimit: rowLimit, attempt: attempt, runner: runner,
                        request: request, access: access, pool: runner.pool, promise: promise)
                case .failure:
                    onWorker(long: nil)
                }
            })
    }

    /// The batcher's job reading at most `rows` rows of `page` by `sql`
    /// (none: its description alone) with `access`; `completion` gets, on
    /// the batcher's loop, the result and its statement, or the failure
    /// (the statement's own included).
    private static func shortListJob(
        page: ListPage, statement sql: String, rows: Int, access: Access,
        completion: @escaping (Result<(QueryResult, PreparedStatement), any Error>) -> Void
    ) -> StatementBatcher.Job {
        var arguments = page.arguments
        arguments["shortLimit"] = rows
        // Set and read on the batcher's loop only.
        var statement: PreparedStatement?
        return StatementBatcher.Job(
            access: access,
            statements: { prepared in
                let prepared = prepared(sql)
                statement = prepared
                return [PipelinedStatement(prepared, values: try prepared.parameters.textValues { arguments[value: $0] })]
            },
            completion: { outcome in
                completion(
                    Result {
                        let result = try succeeded(try outcome.get().first ?? nil)
                        guard let statement else { throw DatabaseError(code: .internalError, message: "a batched statement was not built") }
                        return (result, statement)
                    })
            })
    }

    /// The rows of `result` as the streaming path writes a whole list, and its header fields.
    private static func shortListResponse(
        _ result: QueryResult, statement: PreparedStatement, page: ListPage, runner: QueryRunner, request: RoutedRequest
    ) -> HTTPResponse {
        let layout = statement.layout(of: result)
        let template = layout.objectTemplate
        var writer = ByteWriter(capacity: 4 << 10)
        writer.append(UInt8(ascii: "["))
        for index in 0..<result.rowCount {
            if index > 0 { writer.append(UInt8(ascii: ",")) }
            template.write(Row(result: result, index: index, layout: layout), options: runner.options, to: &writer) { _, _ in }
        }
        writer.append(UInt8(ascii: "]"))
        var headers: HTTPHeaders = ["Content-Type": HTTPResponse.jsonContentType]
        if let links = page.links { headers.add("Link", links) }
        headers.add("Content-Range", page.contentRange(shown: Int(result.rowCount)))
        return request.validated(HTTPResponse(status: .ok, headers: headers, body: .bytes(Array(writer.bytes))))
    }
}
