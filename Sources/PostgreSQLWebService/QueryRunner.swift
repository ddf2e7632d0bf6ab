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
/// How a query runs is chosen here, from its shape (Query+Running.swift):
/// - an object whose embeds have none of their own (a row by key, with
///   its details) goes to the pool's batcher on the request's event loop,
///   which sends the statements of many requests together, without a
///   thread per request, and completes the response there;
/// - a short list read as JSON (no embeds, no count, rows whose types
///   bound their width: `ShortLists`) goes to the batcher too, and is
///   answered whole from there, at most 1,000 rows and 256 KiB;
/// - any other list (or a short one found longer, slow or failing) runs
///   on a worker thread, streamed from the database as the client reads
///   it (a server-side cursor when it has embeds);
/// - anything else (nested embeds, streamed members, statements) runs on
///   a worker thread too;
/// - a list asked for as `text/event-stream` joins the ``live`` feed, on
///   the primary: its snapshot on a worker, its events then written on
///   the event loop as they come.
///
/// Every statement of a `GET` or `HEAD` runs in a read-only transaction
/// (`Access`): a write hidden in a read's SQL fails in PostgreSQL
/// (`25006`, answered 405), whatever a check at load thought of it.
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
/// A request with a role (`WebService/RoutedRequest/role`, which
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
    /// What follows lists for callers who ask for `text/event-stream`
    /// (docs/LIVE.md); `nil`: they are answered 406.
    public let live: LiveFeed?
    /// Which lists are read whole on the event loop's batcher.
    let shortLists = ShortLists()

    /// A runner for queries on `pool`, rendered with `options`.
    ///
    /// ```swift
    /// QueryRunner(pool: pool, options: JSONRenderingOptions(dateFormat: .epochMilliseconds), maxRows: 1000)
    /// QueryRunner(pool: primary, replicas: ReplicaSet([replicaPool]))
    /// QueryRunner(pool: pool, live: LiveFeed(pool: pool, logger: logger))
    /// ```
    public init(
        pool: ConnectionPool, replicas: ReplicaSet? = nil, options: JSONRenderingOptions = JSONRenderingOptions(),
        maxRows: Int? = nil, live: LiveFeed? = nil
    ) {
        // `--max-rows` below 1 is a usage error before any runner is made: only code passes a negative one.
        precondition(maxRows.map { $0 >= 0 } ?? true, "maxRows must be 0 or more")
        self.pool = pool
        self.replicas = replicas.flatMap { $0.pools.isEmpty ? nil : $0 }
        self.options = options
        self.maxRows = maxRows
        self.live = live
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
    func pool(for query: Query, request: RoutedRequest) -> ConnectionPool {
        guard let replicas, request.isRead else { return pool }
        switch query.shape {
        case .list, .object: return replicas.next() ?? pool
        case .execute, .write, .tableWrite: return pool
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
