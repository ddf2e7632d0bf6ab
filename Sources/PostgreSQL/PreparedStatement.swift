/// A statement prepared on one connection. A class: handed around on every
/// run, it costs one retain where a struct of its fields costs five.
package final class PreparedStatement {
    /// The server-side name (`s1`, `s2`, ...).
    let name: String
    /// The positional SQL and the parameter names in `$n` order.
    package let parameters: Parameters
    /// Lower-cased `AS` aliases → their spelling in the SQL text.
    package let labelSpelling: [String: String]
    /// Whether the server has it, or has it sent before its next execution:
    /// `false` until the connection prepares it, and again after a
    /// preparation sent in a pipeline failed.
    package var isPrepared = false
    /// The columns of its results, once one was read (see ``layout(of:)``).
    private var layout: ColumnLayout?

    /// The statement for `sql` (named or positional parameters), parsed.
    init(name: String, sql: String) {
        self.name = name
        self.parameters = Parameters.parse(sql)
        self.labelSpelling = SQLTokens.aliases(in: parameters.sql)
    }

    /// The column layout of `result`, a result of this statement, worked
    /// out once: its result columns do not change between runs.
    package func layout(of result: QueryResult) -> ColumnLayout {
        if let layout { return layout }
        return layout(of: result.columns)
    }

    /// The column layout of this statement's results, whose columns are
    /// `columns` as the server names them; worked out once.
    func layout(of columns: [Column]) -> ColumnLayout {
        if let layout { return layout }
        let layout = ColumnLayout(spelled(columns))
        self.layout = layout
        return layout
    }

    /// The layout, once a result has told it.
    var knownLayout: ColumnLayout? { layout }
}

/// A statement is used by its connection's thread only.
@available(*, unavailable)
extension PreparedStatement: Sendable {}

// MARK: - The statements of a connection

/// The statements of one connection by SQL text, each parsed and named once.
///
/// A blocking ``Connection`` prepares a statement before caching it; the
/// connections of a ``StatementBatcher`` cache it first and send its
/// preparation in the pipeline of its first execution. A full cache is
/// emptied, and its statements deallocated on the server, before another
/// is added (on a loop's connection, once no job is in flight there), so
/// that SQL built on the fly grows neither the cache nor the server's
/// statements without end. Names are not reused, so a name dropped with
/// the cache never comes back meaning another statement.
struct PreparedStatementCache {
    /// How many statements make the cache full.
    static let limit = 1000

    /// How many statements `recentSQL` holds.
    static let recentLimit = 8

    /// SQL text as written → its statement.
    private var statementsBySQL: [String: PreparedStatement] = [:]

    /// The SQL texts of the statements used last (`recentStatements[i]` is
    /// the statement of `recentSQL[i]`), looked through before hashing the
    /// SQL text: a request's SQL is usually the same string object as the
    /// last time, which `==` recognises without reading the text, and a
    /// text of another length at once.
    private var recentSQL: [String] = []
    private var recentStatements: [PreparedStatement] = []
    /// Where the next statement goes in `recentSQL` once it is full.
    private var nextRecentSlot = 0

    /// How many statements were ever named here; names the next one.
    private var statementCount = 0

    /// How many statements are cached.
    var count: Int { statementsBySQL.count }

    /// Whether the connection is to deallocate all and call ``removeAll()`` before adding a statement.
    var isFull: Bool { statementsBySQL.count >= Self.limit }

    /// The statement cached for `sql`, if any.
    mutating func statement(for sql: String) -> PreparedStatement? {
        if let index = recentSQL.firstIndex(of: sql) { return recentStatements[index] }
        guard let statement = statementsBySQL[sql] else { return nil }
        remember(statement, for: sql)
        return statement
    }

    /// The statement cached for `sql`, else a new one, cached at once and
    /// not prepared yet (see ``PreparedStatement/isPrepared``).
    mutating func statementPreparedLater(for sql: String) -> PreparedStatement {
        if let statement = statement(for: sql) { return statement }
        let statement = makeStatement(for: sql)
        add(statement, for: sql)
        return statement
    }

    /// A new statement for `sql`, parsed and named, not cached yet.
    mutating func makeStatement(for sql: String) -> PreparedStatement {
        statementCount += 1
        return PreparedStatement(name: "s\(statementCount)", sql: sql)
    }

    /// Caches `statement`, made by ``makeStatement(for:)`` for `sql`.
    mutating func add(_ statement: PreparedStatement, for sql: String) {
        statementsBySQL[sql] = statement
        remember(statement, for: sql)
    }

    /// Forgets every statement (the connection deallocated them, or is
    /// closed); one still held elsewhere is no longer ``PreparedStatement/isPrepared``.
    mutating func removeAll() {
        for statement in statementsBySQL.values { statement.isPrepared = false }
        statementsBySQL = [:]
        recentSQL = []
        recentStatements = []
        nextRecentSlot = 0
    }

    private mutating func remember(_ statement: PreparedStatement, for sql: String) {
        if recentSQL.count < Self.recentLimit {
            recentSQL.append(sql)
            recentStatements.append(statement)
        } else {
            recentSQL[nextRecentSlot] = sql
            recentStatements[nextRecentSlot] = statement
            nextRecentSlot = (nextRecentSlot + 1) % Self.recentLimit
        }
    }
}
