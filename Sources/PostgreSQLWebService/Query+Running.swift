import EventLoops
import HTTPServer
import JSONStreaming
import PostgreSQL
import WebService

// MARK: - How a query answers a request

extension Query: RunnableResult {
    /// The response to `request`: the query with the request's choices
    /// applied, run as the request's role, read-only for a `GET` or `HEAD`,
    /// on the pool ``QueryRunner`` chooses (see there for which way).
    public func response(runner: QueryRunner, request: RoutedRequest) -> HTTPResponse {
        if request.isRead, Self.asksForEvents(request) { return eventStream(runner: runner, request: request) }
        let query: Query
        do {
            query = try resolvingChoices()
        } catch {
            return request.response(for: error)
        }
        let access = Access(role: request.role, isReadOnly: request.isRead || query.readsOnly, trace: request.request.trace)
        let pool = runner.pool(for: query, request: request)
        if case .object(let notFound) = query.shape, query.members.isEmpty, query.embeds.allSatisfy({ $0.query.embeds.isEmpty }) {
            return HTTPResponse.later { promise in
                query.objectByKey(runner: runner, request: request, access: access, notFound: notFound, pool: pool, promise: promise)
            }
        }
        if let short = query.shortList(runner: runner, request: request, access: access, pool: pool) { return short }
        return HTTPResponse.blocking { query.response(onWorker: runner, request: request, access: access, pool: pool) }
    }

    /// On a worker thread, which may block: the answer of this query, whose
    /// choices are resolved, on `pool`, or, when that is a replica found
    /// gone, on the primary.
    func response(onWorker runner: QueryRunner, request: RoutedRequest, access: Access, pool: ConnectionPool) -> HTTPResponse {
        do {
            return try run(runner: runner, request: request, access: access, pool: pool)
        } catch  where runner.readsAgain(after: error, on: pool) {
            do {
                return try run(runner: runner, request: request, access: access, pool: runner.pool)
            } catch {
                return request.response(for: error)
            }
        } catch {
            return request.response(for: error)
        }
    }

    /// An object by key on `pool`'s batcher for the request's event loop,
    /// answered there: the object, the 404 without one, or the problem. A
    /// read whose replica turns out to be gone runs again on the primary.
    private func objectByKey(
        runner: QueryRunner, request: RoutedRequest, access: Access, notFound: @escaping @Sendable () -> HTTPError,
        pool: ConnectionPool, promise: ResponsePromise
    ) {
        object(on: pool, loop: request.request.eventLoop, access: access, options: runner.options) { outcome in
            switch outcome {
            case .success(let object?):
                promise.succeed(request.validated(HTTPResponse(json: object)))
            case .success(nil):
                promise.succeed(notFound().response)
            case .failure(let error) where runner.readsAgain(after: error, on: pool):
                objectByKey(runner: runner, request: request, access: access, notFound: notFound, pool: runner.pool, promise: promise)
            case .failure(let error):
                promise.succeed(request.response(for: error))
            }
        }
    }

    /// This object query, whose embeds have none of their own, on `pool`'s
    /// batcher for `loop` (the pool's own without one): each round of
    /// ``ObjectByKey`` one job. `completion` gets, on the batcher's loop,
    /// the object's JSON, `nil` when there is no row, or the failure.
    func object(
        on pool: ConnectionPool, loop: EventLoop?, access: Access, options: JSONRenderingOptions,
        completion: @escaping (Result<[UInt8]?, any Error>) -> Void
    ) {
        let batcher: StatementBatcher
        do {
            batcher = try pool.batcher(on: loop)
        } catch {
            return completion(.failure(error))
        }
        // Touched by the jobs' closures, on the batcher's loop only.
        var object = ObjectByKey(self)
        func round() -> StatementBatcher.Job {
            StatementBatcher.Job(
                access: access, statements: { try object.nextRound($0) },
                completion: { outcome in
                    do {
                        let results = try outcome.get()
                        switch try object.receive({ try Self.succeeded(results[$0]) }, connection: nil) {
                        case .noRow:
                            completion(.success(nil))
                        case .secondRound:
                            batcher.submit(round())
                        case .object(let rows):
                            // Written through a writer, then copied into the
                            // body's array once (see `ByteWriter`).
                            var writer = ByteWriter(capacity: 2 << 10)
                            rows.write(options: options, to: &writer)
                            completion(.success(Array(writer.bytes)))
                        }
                    } catch {
                        completion(.failure(error))
                    }
                })
        }
        batcher.submit(round())
    }

    /// The result of a statement that succeeded, else its failure.
    static func succeeded(_ result: QueryResult?) throws -> QueryResult {
        guard let result else {
            throw DatabaseError(code: .internalError, message: "a batched statement was skipped")
        }
        if let error = result.error { throw error }
        return result
    }

    /// On a worker thread, which may block: runs the query on `pool` up to
    /// its first row, so that its errors (and a missing object) are known
    /// before the response starts.
    private func run(runner: QueryRunner, request: RoutedRequest, access: Access, pool: ConnectionPool) throws -> HTTPResponse {
        switch shape {
        case .execute:
            try pool.withConnection(for: access) { connection in
                try connection.transaction(access: access) { _ = try $0.execute(sql, arguments) }
            }
            return HTTPResponse(status: .noContent)
        case .write(let earlier, let returning, let location):
            return try pool.withConnection(for: access) { connection in
                try write(
                    earlier: earlier, returning: returning, location: location, on: connection, access: access, runner: runner,
                    request: request)
            }
        case .tableWrite(let answer):
            return try pool.withConnection { connection in
                try tableWrite(answer, on: connection, access: access, runner: runner, request: request)
            }
        case .list:
            return try list(runner: runner, request: request, access: access, pool: pool)
        case .object(let notFound):
            let object = try rows(on: pool, format: .firstRow, options: runner.options, access: access)
            defer { object.close() }
            guard object.hasRows else { throw notFound() }
            var bytes: [UInt8] = []
            while try object.write(into: &bytes) {}
            guard !members.isEmpty else {
                // Written whole (its nested arrays hold one row's children),
                // so that it carries an ETag as the batched ones do.
                return request.validated(HTTPResponse(json: bytes))
            }
            let streamed = members.map { member in
                (
                    key: member.key,
                    start: {
                        try member.query.rows(on: pool, format: .json, options: runner.options, access: access)
                    }
                )
            }
            return HTTPResponse(status: .ok, headers: Self.jsonHeaders, body: .stream(ObjectWithMembers(object: bytes, members: streamed)))
        }
    }

    private static let jsonHeaders: HTTPHeaders = ["Content-Type": HTTPResponse.jsonContentType]

    /// A list's answer: its rows as `Accept` asks (JSON, CSV, or the one
    /// row as an object), its page, and what the answer says of the page:
    /// `Content-Range` (every list's that can tell its last row before
    /// the body is sent: one that ends within its first block, or one
    /// counted), 206 for a counted page short of the whole, `Link`,
    /// `Preference-Applied` for a count.
    private func list(runner: QueryRunner, request: RoutedRequest, access: Access, pool: ConnectionPool) throws -> HTTPResponse {
        let preferences = try ReadPreferences(request.headers, method: request.method)
        if preferences.representation == .csv, !embeds.isEmpty {
            throw HTTPError(
                .notAcceptable,
                detail: "CSV cannot hold the nested \(embeds.map(\.key).joined(separator: ", ")): "
                    + "ask for application/json, or leave out the details.",
                parameter: request.detailParameters.first, code: "PGRST107")
        }
        let connection = try pool.acquire(for: access)
        do {
            var page = try listPage(runner: runner, request: request, preferences: preferences, access: access, connection: connection)
            if preferences.representation == .singular {
                return try singular(page: &page, runner: runner, request: request, access: access, connection: connection, pool: pool)
            }
            var headers: HTTPHeaders = [
                "Content-Type": preferences.representation == .csv ? "text/csv; charset=utf-8" : HTTPResponse.jsonContentType
            ]
            if let links = page.links { headers.add("Link", links) }
            var status = HTTPStatus.ok
            if let shown = page.shownByCount {
                headers.add("Content-Range", page.contentRange(shown: shown))
                if shown < page.total! { status = .partialContent }
            }
            if let count = page.count { headers.add("Preference-Applied", "count=" + count.rawValue) }
            let rows = try with(sql: page.sql, arguments: page.arguments).rows(
                on: connection, from: pool, format: preferences.representation == .csv ? .csv : .json, options: runner.options,
                access: access)
            if page.total == nil {
                // Known once the rows end within the first block the server pulls before it answers.
                rows.headersForRows = { [page] shown in [("Content-Range", page.contentRange(shown: shown))] }
            }
            // A HEAD too: the server pulls its first block for the GET's framing, and sends no body.
            return request.validated(HTTPResponse(status: status, headers: headers, body: .stream(rows)))
        } catch {
            pool.release(connection)
            throw error
        }
    }

    /// The one row a singular read asks for, as an object; 406 (`PGRST116`)
    /// when there are none or several, counted for the message.
    private func singular(
        page: inout ListPage, runner: QueryRunner, request: RoutedRequest, access: Access, connection: Connection, pool: ConnectionPool
    ) throws -> HTTPResponse {
        defer { pool.release(connection) }
        var twoRows = page
        twoRows.arguments[value: "singularLimit"] = .text("2")
        twoRows.sql = Self.limited(page.sql, as: "singular", limit: ":singularLimit")
        let rows = try with(sql: twoRows.sql, arguments: twoRows.arguments).rows(
            on: connection, from: nil, format: .json, options: runner.options, access: access)
        var body: [UInt8] = []
        defer { rows.close() }
        while try rows.write(into: &body) {}
        let count = rows.rowsWritten
        guard count == 1 else {
            let total =
                count == 0
                ? 0
                : try listPage(
                    runner: runner, request: request, preferences: ReadPreferences(exactCount: ()), access: access, connection: connection
                ).total ?? count
            throw HTTPError(
                .notAcceptable, detail: "JSON object requested, multiple (or no) rows returned.", code: "PGRST116",
                details: "The result contains \(total) rows.")
        }
        // The array's one element: `[{…}]` → `{…}`.
        var headers: HTTPHeaders = ["Content-Type": ReadPreferences.singularType + "; charset=utf-8"]
        headers.add("Content-Range", page.contentRange(shown: 1))
        return request.validated(HTTPResponse(status: .ok, headers: headers, body: .bytes(Array(body.dropFirst().dropLast()))))
    }

    /// This query's rows (with its embeds) on a connection of `pool`, run
    /// up to the first row: a stream that gives the connection back when
    /// it closes, or the failure, with the connection given back.
    /// `blockSize` fixes how many parents a list with embeds reads at once
    /// (by default it depends on the streams open: `BlockRows`).
    func rows(
        on pool: ConnectionPool, format: RowStream.Format, options: JSONRenderingOptions, access: Access, blockSize: Int? = nil
    ) throws -> RowStream {
        let connection = try pool.acquire(for: access)
        do {
            return try rows(on: connection, from: pool, format: format, options: options, access: access, blockSize: blockSize)
        } catch {
            pool.release(connection)
            throw error
        }
    }

    /// ``rows(on:format:options:access:blockSize:)`` on `connection`, which
    /// came from `pool` (given back when the stream closes) or, without
    /// one, stays the caller's.
    func rows(
        on connection: Connection, from pool: ConnectionPool?, format: RowStream.Format, options: JSONRenderingOptions,
        access: Access, blockSize: Int? = nil
    ) throws -> RowStream {
        let rows: any RowSource
        if format == .firstRow, !embeds.isEmpty {
            rows = try FirstRowWithEmbeds(connection: connection, query: self, access: access)
        } else {
            rows = try rowSource(on: connection, access: access, blockSize: blockSize)
        }
        return RowStream(rows, hasRows: try rows.hasNext(), format: format, options: options, connection: connection, pool: pool)
    }

    /// This list's rows (with its embeds) on `connection`, run up to the
    /// first row: streamed as they come, or, with embeds, a server-side
    /// cursor read in blocks.
    func rowSource(on connection: Connection, access: Access, blockSize: Int? = nil) throws -> any RowSource {
        let rows: any RowSource
        if embeds.isEmpty {
            rows = try StreamingRows(connection: connection, sql: sql, arguments: arguments, access: access)
        } else {
            rows = try BlockRows(
                connection: connection, sql: sql, arguments: arguments, embeds: embeds, access: access, blockSize: blockSize)
        }
        _ = try rows.hasNext()
        return rows
    }

}
