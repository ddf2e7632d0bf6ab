import HTTPServer
import JSONStreaming
import Locking
import PostgreSQL
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
/// its rows), and fixes how many rows the batcher reads at once: at most
/// ``maximumRows``, and at most ``maximumBytes`` of JSON in the worst case.
/// So a request's memory stays bounded whatever its data, as on the
/// streaming path.
///
/// A statement found to have more rows than that (which then ran again on
/// a worker) takes a worker for its next ``skipsAfterLong`` requests, so
/// that a list that is usually long seldom runs twice; one whose page
/// `limit` fits still takes the batcher.
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
    /// Statements remembered; past it, the memory is emptied (SQL built per
    /// request from filters may have many shapes).
    static let capacity = 1_000

    /// How a list statement is answered.
    enum Decision {
        /// Its rows' width is not known yet: the batcher reads its description first.
        case unknown
        /// Streamed on a worker.
        case worker
        /// Read whole on the batcher, when it has at most this many rows.
        case batcher(rowLimit: Int)
    }

    private struct Entry {
        /// Rows at most; 0: the rows have no bounded width.
        var rowLimit: Int
        /// Requests left that take a worker after a slow answer.
        var slowSkips = 0
        /// Requests left that take a worker after a long answer, unless their page fits.
        var longSkips = 0
    }

    private let entries = Locked<[String: Entry]>([:])

    /// How the list statement `sql`, whose page has at most `pageLimit`
    /// rows (`nil`: no limit), is answered now.
    func decision(for sql: String, pageLimit: Int?) -> Decision {
        entries.withLock { entries in
            guard var entry = entries[sql] else { return .unknown }
            guard entry.rowLimit > 0 else { return .worker }
            if entry.slowSkips > 0 {
                entry.slowSkips -= 1
                entries[sql] = entry
                return .worker
            }
            if let pageLimit, pageLimit <= entry.rowLimit { return .batcher(rowLimit: entry.rowLimit) }
            if entry.longSkips > 0 {
                entry.longSkips -= 1
                entries[sql] = entry
                return .worker
            }
            return .batcher(rowLimit: entry.rowLimit)
        }
    }

    /// `sql`'s rows take at most `rowLimit` at once on the batcher (0: none).
    func learn(_ sql: String, rowLimit: Int) {
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[sql] = Entry(rowLimit: rowLimit)
        }
    }

    /// `sql` answered slowly: the next requests take a worker.
    func answeredSlowly(_ sql: String) {
        entries.withLock { entries in entries[sql]?.slowSkips = Self.skipsAfterSlow }
    }

    /// `sql` had more rows than the batcher reads: the next requests whose page may too take a worker.
    func answeredLong(_ sql: String) {
        entries.withLock { entries in entries[sql]?.longSkips = Self.skipsAfterLong }
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
        let rowLimit: Int?
        switch runner.shortLists.decision(for: page.sql, pageLimit: page.limit) {
        case .worker: return nil
        case .unknown: rowLimit = nil
        case .batcher(let limit): rowLimit = limit
        }
        return HTTPResponse.later { promise in
            shortList(page: page, rowLimit: rowLimit, runner: runner, request: request, access: access, pool: pool, promise: promise)
        }
    }

    /// On the request's event loop: `page` read on `pool`'s batcher, at
    /// most `rowLimit` rows, or, without a limit, its description first.
    private func shortList(
        page: ListPage, rowLimit: Int?, runner: QueryRunner, request: RoutedRequest, access: Access, pool: ConnectionPool,
        promise: ResponsePromise
    ) {
        func onWorker() {
            promise.succeed(HTTPResponse.blocking { response(onWorker: runner, request: request, access: access, pool: pool) })
        }
        let batcher: StatementBatcher
        do {
            batcher = try pool.batcher(on: request.request.eventLoop)
        } catch {
            return onWorker()
        }
        let sql = "SELECT * FROM (\(Self.withoutTrailingSemicolons(page.sql))\n) AS short LIMIT :shortLimit"
        var arguments = page.arguments
        // One row more than the limit tells a list that has more; none, a description alone.
        arguments["shortLimit"] = rowLimit.map { $0 + 1 } ?? 0
        // Set and read on the batcher's loop only.
        var statement: PreparedStatement?
        let submitted = ContinuousClock.now
        let job = StatementBatcher.Job(
            access: access,
            statements: { prepared in
                let prepared = prepared(sql)
                statement = prepared
                return [PipelinedStatement(prepared, values: try prepared.parameters.textValues { arguments[value: $0] })]
            },
            completion: { outcome in
                let answer: QueryResult
                switch outcome {
                case .success(let results):
                    guard let first = results.first, let result = first, result.error == nil, statement != nil else { return onWorker() }
                    answer = result
                case .failure(let error) where runner.readsAgain(after: error, on: pool):
                    return shortList(
                        page: page, rowLimit: rowLimit, runner: runner, request: request, access: access, pool: runner.pool,
                        promise: promise)
                case .failure:
                    return onWorker()
                }
                guard let rowLimit else {
                    let learned = ShortLists.rowLimit(describedBy: answer)
                    runner.shortLists.learn(page.sql, rowLimit: learned)
                    guard learned > 0 else { return onWorker() }
                    return shortList(
                        page: page, rowLimit: learned, runner: runner, request: request, access: access, pool: pool, promise: promise)
                }
                if ContinuousClock.now - submitted > ShortLists.slow { runner.shortLists.answeredSlowly(page.sql) }
                guard answer.rowCount <= rowLimit, let statement else {
                    runner.shortLists.answeredLong(page.sql)
                    return onWorker()
                }
                promise.succeed(Self.shortListResponse(answer, statement: statement, page: page, runner: runner, request: request))
            })
        batcher.submit(job)
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
