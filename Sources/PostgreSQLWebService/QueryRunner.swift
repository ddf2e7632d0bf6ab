import HTTPServer
import JSONStreaming
import PostgreSQL
import WebService

/// Runs the ``Query`` values that routes return, on a pool, and writes
/// their rows as JSON in the given rendering. The router is given one:
///
/// ```swift
/// let router = try WebServiceRouter(services: [ProductsService()], runners: [QueryRunner(pool: pool)])
/// ```
///
/// How a query runs is chosen here, from its shape:
/// - an object without nested attachments (a row by key, with its
///   details) goes on the pool's pipeline on the request's event loop,
///   which sends the statements of many requests together, without a
///   thread per request (a `GET` or `HEAD` as a read: see
///   ``ResultSetAdapter/isReadOnly``);
/// - a list runs on a worker thread, streamed from the database as the
///   client reads it (a server-side cursor when it has attachments);
/// - anything else (nested attachments, streamed members, statements)
///   runs on a worker thread too.
///
/// Errors, before the first byte, become problem documents through the
/// SQLSTATE mapping, logged with the request's real path.
///
/// With ``replicas``, the reads (a list or an object answering a `GET` or
/// a `HEAD`) run on a healthy replica, each in turn, and everything else
/// (statements, transactions, any other method) on ``pool``, the primary.
/// A read whose replica turns out to be gone before the response started
/// runs again on the primary, and the replica is taken out.
///
/// A request with a role (`WebService/RunRequest/role`, which
/// authentication sets) runs its statements as that role, in a transaction
/// that sets it (`SET LOCAL ROLE`): PostgreSQL's grants and row-level
/// security decide what it reads and writes, a denial is a 403. Without
/// one, nothing is added to the statements.
public final class QueryRunner: Sendable {
    /// Where the queries run: the primary.
    public let pool: ConnectionPool
    /// Where reads run when one of them is healthy; `nil`: on ``pool``.
    public let replicas: ReplicaSet?
    /// How values are written (dates as ISO strings or epoch milliseconds).
    public let options: JSONRenderingOptions
    /// At most this many rows in any list (a page's `limit` included); `nil`: no cap.
    public let maxRows: Int?

    /// A runner for queries on `pool`, rendered with `options`.
    ///
    /// ```swift
    /// QueryRunner(pool: pool, options: JSONRenderingOptions(dateFormat: .epochMilliseconds), maxRows: 1000)
    /// QueryRunner(pool: primary, replicas: ReplicaSet([replicaPool]))
    /// ```
    public init(
        pool: ConnectionPool, replicas: ReplicaSet? = nil, options: JSONRenderingOptions = JSONRenderingOptions(),
        maxRows: Int? = nil
    ) {
        // `--max-rows` below 1 is a usage error before any runner is made: only code passes a negative one.
        precondition(maxRows.map { $0 >= 0 } ?? true, "maxRows must be 0 or more")
        self.pool = pool
        self.replicas = replicas.flatMap { $0.pools.isEmpty ? nil : $0 }
        self.options = options
        self.maxRows = maxRows
    }

    /// Every pool by name, the primary first: `primary`, then `replica-1`,
    /// `replica-2`, ... in the order of the replicas (for metrics, say).
    ///
    /// ```swift
    /// for (name, pool) in runner.pools { print(name, pool.openConnectionCount) }
    /// ```
    public var pools: [(name: String, pool: ConnectionPool)] {
        [("primary", pool)] + (replicas?.pools ?? []).enumerated().map { ("replica-\($0.offset + 1)", $0.element) }
    }

    /// The pool for `query` answering `request`: a healthy replica for a
    /// read, else the primary.
    func pool(for query: Query, request: RunRequest) -> ConnectionPool {
        guard let replicas, request.isRead else { return pool }
        switch query.shape {
        case .list, .object: return replicas.next() ?? pool
        case .execute, .write: return pool
        }
    }

    /// Whether a read that failed with `error` on `used` runs again on the
    /// primary: `used` is a replica, and the error says that it is gone
    /// (which takes it out), not that the query is wrong.
    func readsAgain(after error: any Error, on used: ConnectionPool) -> Bool {
        guard used !== pool, let replicas, let error = error as? DatabaseError, error.isConnectionFailure else { return false }
        replicas.reportFailure(of: used)
        return true
    }
}

extension Query: RunnableResult {
    public func response(runner: QueryRunner, request: RunRequest) -> HTTPResponse {
        if chosen != nil {
            do {
                return try resolvingChoices(limits: request.limits).response(runner: runner, request: request)
            } catch {
                return request.response(for: error)
            }
        }
        let pool = runner.pool(for: self, request: request)
        // A closure, not the key path `\.attachments.isEmpty`, which is
        // instantiated at run time on every call (a compound path through
        // a generic property is not turned into a closure by the compiler).
        if case .object(let notFound) = shape, members.isEmpty, attachments.allSatisfy({ $0.attachments.isEmpty }) {
            return HTTPResponse.later { promise in
                pipelinedObject(runner: runner, request: request, notFound: notFound, pool: pool, promise: promise)
            }
        }
        return HTTPResponse.blocking {
            do {
                return try self.run(runner: runner, request: request, pool: pool)
            } catch  where runner.readsAgain(after: error, on: pool) {
                do {
                    return try self.run(runner: runner, request: request, pool: runner.pool)
                } catch {
                    return request.response(for: error)
                }
            } catch {
                return request.response(for: error)
            }
        }
    }

    /// On `pool`'s pipeline, on this event loop: the object is written
    /// there, and the response completed there (on the primary's pipeline,
    /// when a replica was gone).
    private func pipelinedObject(
        runner: QueryRunner, request: RunRequest, notFound: @escaping @Sendable () -> HTTPError, pool: ConnectionPool,
        promise: ResponsePromise
    ) {
        let adapter = self.adapter(runner: runner, pool: pool, role: request.role)
        adapter.isReadOnly = request.isRead
        adapter.start { outcome in
            defer { adapter.close() }
            do {
                guard try outcome.get() else { return promise.succeed(notFound().response) }
                var object: [UInt8] = []
                _ = try adapter.write(into: &object)
                promise.succeed(request.validated(HTTPResponse(json: object)))
            } catch  where runner.readsAgain(after: error, on: pool) {
                pipelinedObject(runner: runner, request: request, notFound: notFound, pool: runner.pool, promise: promise)
            } catch {
                promise.succeed(request.response(for: error))
            }
        }
    }

    /// On a worker thread, which may block: runs the query on `pool` up to
    /// its first row, so that its errors (and a missing object) are known
    /// before the response starts.
    private func run(runner: QueryRunner, request: RunRequest, pool: ConnectionPool) throws -> HTTPResponse {
        switch shape {
        case .execute:
            _ = try pool.withConnection { connection in
                guard let role = request.role else { return try connection.execute(sql, arguments) }
                return try connection.transaction(role: role) { try $0.execute(sql, arguments) }
            }
            return HTTPResponse(status: .noContent)
        case .write(let earlier, let returning, let location):
            return try pool.withConnection { connection in
                try write(earlier: earlier, returning: returning, location: location, on: connection, runner: runner, request: request)
            }
        case .list:
            let csv = Self.asksForCSV(request.headers)
            if csv, !attachments.isEmpty {
                throw HTTPError(
                    .notAcceptable,
                    detail: "CSV cannot hold the nested \(attachments.map(\.key).joined(separator: ", ")): "
                        + "ask for application/json, or leave out the details.",
                    parameter: request.detailParameters.first)
            }
            var list = try listStatement(runner: runner, request: request, pool: pool)
            let adapter = self.adapter(runner: runner, pool: pool, sql: list.sql, arguments: list.arguments, role: request.role)
            if csv {
                adapter.format = .csv
                list.headers["Content-Type"] = "text/csv; charset=utf-8; header=present"
            }
            try adapter.start()
            // A HEAD too: the server pulls its first block for the GET's framing, and sends no body.
            return request.validated(HTTPResponse(status: .ok, headers: list.headers, body: .stream(adapter)))
        case .object(let notFound):
            let adapter = self.adapter(runner: runner, pool: pool, role: request.role)
            guard try adapter.start() else {
                adapter.close()
                throw notFound()
            }
            guard !members.isEmpty else {
                // An object is written whole (its nested arrays hold one row's
                // children), so that it carries an ETag as the pipelined ones do.
                defer { adapter.close() }
                var object: [UInt8] = []
                while try adapter.write(into: &object) {}
                return request.validated(HTTPResponse(json: object))
            }
            let members = members.map { ($0.key, $0.query.adapter(runner: runner, pool: pool, role: request.role)) }
            return HTTPResponse(status: .ok, headers: Self.jsonHeaders, body: .stream(ObjectWithMembers(adapter, members)))
        }
    }

    private static let jsonHeaders: HTTPHeaders = ["Content-Type": "application/json"]

    /// Whether `Accept` prefers CSV to JSON: `text/csv` is named, and
    /// before any JSON type (a list is JSON otherwise, whatever `Accept` says).
    static func asksForCSV(_ headers: HTTPHeaders) -> Bool {
        for value in headers.values(for: "Accept") {
            for range in value.split(separator: ",") {
                let type = range.prefix { $0 != ";" }.filter { $0 != " " && $0 != "\t" }.lowercased()
                if type == "text/csv" { return true }
                if type == "application/json" { return false }
            }
        }
        return false
    }

    /// The adapter that runs this query (or the given form of its SQL) on
    /// `pool` as `role` and writes its rows.
    private func adapter(
        runner: QueryRunner, pool: ConnectionPool, sql: String? = nil, arguments: SQLArguments? = nil, role: String?
    ) -> ResultSetAdapter {
        let adapter = ResultSetAdapter(
            pool, sql: sql ?? self.sql, arguments: arguments ?? self.arguments, shape: isList ? .array : .object,
            options: runner.options)
        adapter.role = role
        for attachment in attachments { attach(attachment, to: adapter.attach(attachment.key, attachment.sql)) }
        return adapter
    }

    private func attach(_ attached: Attached, to attachment: Attachment) {
        for child in attached.attachments { attach(child, to: attachment.attach(child.key, child.sql)) }
    }
}

/// An object followed by array members streamed from their own queries:
/// `{"departmentNumber":"d005",…,"employees":[…]}`. The object is written
/// first (and its connection given back), without its closing brace; each
/// member's query starts when its turn comes.
private final class ObjectWithMembers: StreamingBody {
    private let object: ResultSetAdapter
    private let members: [(key: String, rows: ResultSetAdapter)]
    /// The member being written; `nil` while the object is.
    private var current: Int?

    init(_ object: ResultSetAdapter, _ members: [(key: String, rows: ResultSetAdapter)]) {
        self.object = object
        self.members = members
    }

    func write(into output: inout [UInt8]) throws -> Bool {
        guard let index = current else {
            while try object.write(into: &output) {}
            object.close()
            // An object adapter writes one whole `{…}`: its brace closes the members instead.
            precondition(output.last == UInt8(ascii: "}"), "an object adapter writes a JSON object")
            output.removeLast()
            return startMember(0, into: &output)
        }
        guard index < members.count else { return false }
        if try members[index].rows.write(into: &output) { return true }
        members[index].rows.close()
        return startMember(index + 1, into: &output)
    }

    private func startMember(_ index: Int, into output: inout [UInt8]) -> Bool {
        guard index < members.count else {
            output.append(UInt8(ascii: "}"))
            current = members.count
            return false
        }
        current = index
        if output.last != UInt8(ascii: "{") { output.append(UInt8(ascii: ",")) }
        JSONWriter.appendString(members[index].key, to: &output)
        output.append(UInt8(ascii: ":"))
        return true
    }

    func close() {
        object.close()
        for member in members { member.rows.close() }
    }
}
