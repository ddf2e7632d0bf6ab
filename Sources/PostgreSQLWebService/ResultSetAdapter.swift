import JSONStreaming
import PostgreSQL

/// Streams a query's rows into a response body as JSON objects keyed by
/// column label, pulling rows from the database only as the client reads.
///
/// Values are written according to their PostgreSQL type (numbers, booleans,
/// embedded `json`, ISO dates, arrays, ...). A dotted label (`"name.first"`)
/// makes a nested object. ``attach(_:_:)`` nests the rows of a subquery in
/// each row as an array.
///
/// Without attachments the rows stream as the server sends them (a
/// `RowCursor`, one row at a time). With attachments
/// and ``Shape/object``, the row and its attachments take one or two round
/// trips of prepared statements (see `ObjectWithAttachments`). With attachments and
/// ``Shape/array``, the parent query runs as a server-side cursor, fetched in blocks of
/// ``blockSize`` rows; each attachment then runs once per block for all its
/// parent rows (never once per row), and its own attachments once per block
/// of its rows. The cursor lives in a read-only, repeatable read transaction
/// of the adapter's own (one snapshot for parents and children), or in the
/// caller's transaction when the connection is already in one. Memory holds
/// one block of parents and their children at a time.
///
/// ```swift
/// let adapter = ResultSetAdapter(pool, sql: """
///     SELECT emp_no AS employeeNumber, first_name AS "name.first", last_name AS "name.last"
///     FROM employees WHERE hire_date >= :since ORDER BY emp_no
///     """, arguments: ["since": "1999-01-01"])
/// adapter.attach("titles", "SELECT title, from_date AS fromDate FROM titles WHERE emp_no = :employeeNumber")
/// return HTTPResponse(status: .ok, body: .stream(adapter))
/// ```
///
/// ``close()`` (which the server calls once at the end) cancels an
/// unfinished query and gives the connection back to its pool, clean.
public final class ResultSetAdapter: StreamingBody {
    /// Whether the body is an array of all rows or the first row alone.
    ///
    /// ```swift
    /// let adapter = ResultSetAdapter(pool, sql: "SELECT ... WHERE emp_no = :id", arguments: ["id": 1], shape: .object)
    /// ```
    public enum Shape: Sendable {
        /// `[{...},{...}]`, `[]` when there are no rows.
        case array
        /// `{...}` for the first row; call ``start()`` first to answer 404 when there is none.
        case object
    }

    private enum Source {
        case pool(ConnectionPool)
        case connection(Connection)
    }

    private let source: Source
    private let sql: String
    private let arguments: SQLArguments
    private let shape: Shape
    /// How values are rendered (date format, ...).
    public let options: JSONRenderingOptions
    /// How many parent rows are fetched at once when subqueries are attached;
    /// `nil` (the default): larger blocks while few such streams run, and
    /// smaller ones when many do (`BlockRows.blockSize`).
    public var blockSize: Int?
    /// How an ``Shape/array`` adapter without attachments writes its rows;
    /// set before it starts.
    public var format = Format.json

    /// How rows are written.
    ///
    /// ```swift
    /// adapter.format = .csv
    /// ```
    public enum Format: Sendable {
        /// A JSON array of objects keyed by column label.
        case json
        /// RFC 4180 CSV: a header row of column labels, then a line per
        /// row, each ended by CRLF; NULL is an empty field. For an
        /// ``Shape/array`` adapter without attachments (CSV has no nesting).
        case csv
    }
    /// The subqueries attached to the rows, in order.
    public private(set) var attachments: [Attachment] = []
    /// The role the query runs as, set before the adapter starts; `nil`:
    /// the connection's own. On a pool, the adapter then runs in a
    /// transaction of its own that sets the role (`SET LOCAL ROLE`), and
    /// commits it in ``close()``; a connection the caller owns keeps its role.
    ///
    /// ```swift
    /// adapter.role = "payroll"
    /// ```
    public var role: String?
    /// Whether the query only reads (it answers a `GET` or a `HEAD`), set
    /// before the adapter starts. Started on the pipeline
    /// (`start(completion:)`) without a role, it then shares a
    /// transaction, made read-only, with the reads sent beside it: a
    /// statement that writes fails (SQLSTATE `25006`), as on a replica.
    ///
    /// ```swift
    /// adapter.isReadOnly = request.method == .get
    /// ```
    public var isReadOnly = false
    /// Whether the adapter began a transaction for ``role``, to end in ``close()``.
    private var isInRoleTransaction = false

    private var connection: Connection?
    private var rows: (any RowSource)?
    /// The object written by the pipeline loop (``start(completion:)``), `nil` before.
    private var pipelined: PipelinedOutcome?
    private var rowWriter: ByteWriter?
    private var hasWrittenOpening = false
    private var hasWrittenRow = false
    private var isClosed = false

    /// An adapter that takes a connection from `pool` when it starts and
    /// gives it back in ``close()``.
    ///
    /// ```swift
    /// let adapter = ResultSetAdapter(pool, sql: "SELECT dept_no AS number, dept_name AS name FROM departments")
    /// ```
    public init(
        _ pool: ConnectionPool, sql: String, arguments: SQLArguments = [:], shape: Shape = .array,
        options: JSONRenderingOptions = JSONRenderingOptions()
    ) {
        self.source = .pool(pool)
        self.sql = sql
        self.arguments = arguments
        self.shape = shape
        self.options = options
    }

    /// An adapter that runs on a connection the caller owns (and keeps: it
    /// is not closed or released by the adapter).
    ///
    /// ```swift
    /// let adapter = ResultSetAdapter(connection, sql: "SELECT * FROM departments")
    /// ```
    public init(
        _ connection: Connection, sql: String, arguments: SQLArguments = [:], shape: Shape = .array,
        options: JSONRenderingOptions = JSONRenderingOptions()
    ) {
        self.source = .connection(connection)
        self.sql = sql
        self.arguments = arguments
        self.shape = shape
        self.options = options
    }

    deinit {
        close()
    }

    /// Nests the rows of `sql` in each row under `key`, binding the
    /// subquery's `:name` parameters from the row's columns by label.
    /// Call before the adapter starts.
    ///
    /// ```swift
    /// adapter.attach("salaries", "SELECT salary, from_date AS fromDate FROM salaries WHERE emp_no = :employeeNumber")
    /// ```
    @discardableResult
    public func attach(_ key: String, _ sql: String) -> Attachment {
        let attachment = Attachment(key: key, sql: sql)
        attachments.append(attachment)
        return attachment
    }

    // MARK: - Running

    /// Runs the query now and reads up to the first row, so that errors
    /// (bad input, missing argument, timeout) surface before a response is
    /// sent. Called by the first ``write(into:)`` otherwise.
    ///
    /// - Returns: `true` if there is at least one row.
    ///
    /// ```swift
    /// let adapter = ResultSetAdapter(pool, sql: sql, arguments: ["id": id], shape: .object)
    /// guard try adapter.start() else { throw HTTPError(.notFound) }
    /// return HTTPResponse(status: .ok, body: .stream(adapter))
    /// ```
    @discardableResult
    public func start() throws -> Bool {
        if let rows { return try rows.hasNext() }
        if let pipelined {
            if case .object = pipelined { return true }
            return false
        }
        guard !isClosed else { return false }
        let connection: Connection
        switch source {
        case .pool(let pool):
            connection = try pool.acquire()
            self.connection = connection
            if let role {
                // A list with attachments reads parents and children in one snapshot, as without a role.
                try connection.beginTransaction(role: role, repeatableRead: !attachments.isEmpty && shape == .array)
                isInRoleTransaction = true
            }
        case .connection(let owned):
            connection = owned
            self.connection = connection
        }
        let rows: any RowSource
        if attachments.isEmpty {
            rows = try StreamingRows(connection: connection, sql: sql, arguments: arguments)
        } else if shape == .object {
            rows = try FirstRowWithAttachments(
                connection: connection, sql: sql, arguments: arguments, attachments: attachments)
        } else {
            rows = try BlockRows(
                connection: connection, sql: sql, arguments: arguments, attachments: attachments, blockSize: blockSize)
        }
        self.rows = rows
        return try rows.hasNext()
    }

    /// Runs the query without blocking the calling thread: on the pool's
    /// pipeline (``ConnectionPool``'s, on the calling event loop, else on
    /// a loop of the pool's own), which sends the statements of many such
    /// adapters together (one database round trip serves many requests),
    /// and writes the object there. For a ``Shape/object`` adapter on a pool,
    /// whose row is found by key: the row's result is read whole, and the
    /// attachments may not have attachments of their own. `QueryRunner`
    /// chooses it for such queries.
    ///
    /// `completion` is called once, on the loop's thread (it must not
    /// block), with whether there is a row, or the failure. After it,
    /// ``write(into:)`` only copies the object out; call it (and
    /// ``close()``) from one thread at a time, after `completion` ran.
    package func start(completion: @escaping (Result<Bool, any Error>) -> Void) {
        guard shape == .object, case .pool(let pool) = source, rows == nil, pipelined == nil, !isClosed,
            attachments.allSatisfy({ $0.attachments.isEmpty })  // not a key path: see Query.response(runner:request:)
        else {
            return completion(
                .failure(
                    DatabaseError(
                        code: .internalError,
                        message: "start(completion:) takes an unstarted object adapter on a pool, without nested attachments")))
        }
        let pipeline: StatementBatcher
        do {
            pipeline = try pool.pipeline()
        } catch {
            return completion(.failure(error))
        }
        PipelinedObject.run(
            on: pipeline, sql: sql, arguments: arguments, attachments: attachments, options: options, role: role,
            isReadOnly: isReadOnly
        ) { outcome in
            switch outcome {
            case .success(let object):
                self.pipelined = object.map(PipelinedOutcome.object) ?? .noRow
                completion(.success(object != nil))
            case .failure(let error):
                self.pipelined = .noRow
                completion(.failure(error))
            }
        }
    }

    private enum PipelinedOutcome {
        case object([UInt8])
        case noRow
    }

    /// Appends the next rows (about 16 KB) to `output`.
    ///
    /// ```swift
    /// var body: [UInt8] = []
    /// while try adapter.write(into: &body) {}
    /// adapter.close()
    /// ```
    public func write(into output: inout [UInt8]) throws -> Bool {
        guard !isClosed else { return false }
        if let pipelined {
            switch pipelined {
            case .object(let object) where output.isEmpty: output = object  // no copy
            case .object(let object): output += object
            case .noRow: JSONWriter.appendNull(to: &output)
            }
            close()
            return false
        }
        let hasRow = try start()
        guard let rows else { return false }
        let writer = self.writer
        var bytes = writer
        defer { writer.flush(into: &output) }
        switch shape {
        case .object:
            if hasRow { try rows.writeNext(options: options, to: writer) } else { JSONWriter.appendNull(to: &bytes) }
            rows.close()
            return false
        case .array where format == .csv:
            guard let rows = rows as? StreamingRows else {
                throw DatabaseError(code: .internalError, message: "CSV takes a list without attachments")
            }
            if !hasWrittenOpening {
                CSVWriter.appendHeader(rows.columns, to: &bytes)
                hasWrittenOpening = true
            }
            if try rows.writeRows(as: .csv, options: options, afterRow: &hasWrittenRow, limit: Self.blockLimit, to: writer) {
                return true
            }
            rows.close()
            return false
        case .array:
            if !hasWrittenOpening {
                writer.append(UInt8(ascii: "["))
                hasWrittenOpening = true
            }
            if try rows.writeRows(options: options, afterRow: &hasWrittenRow, limit: Self.blockLimit, to: writer) {
                return true
            }
            writer.append(UInt8(ascii: "]"))
            rows.close()
            return false
        }
    }

    /// About how many bytes of rows one ``write(into:)`` appends.
    static let blockLimit = 16_384

    /// Where rows are written before they go to the caller's array, made on first use.
    private var writer: ByteWriter {
        if let rowWriter { return rowWriter }
        let made = ByteWriter(capacity: 4 << 10)
        rowWriter = made
        return made
    }

    /// Ends the adapter: cancels the query if rows are left, ends the
    /// adapter's transaction, gives a pooled connection back. Safe to call twice.
    ///
    /// ```swift
    /// adapter.close()
    /// ```
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        pipelined = nil
        rows?.close()
        rows = nil
        if isInRoleTransaction { connection?.commitQuietly() }
        if case .pool(let pool) = source, let connection {
            pool.release(connection)
        }
        connection = nil
    }
}

/// An adapter is written by one thread (the HTTP connection's) at a time.
@available(*, unavailable)
extension ResultSetAdapter: Sendable {}
