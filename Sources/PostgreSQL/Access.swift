import RequestTracing

/// How a unit of work on a connection runs: as which role, and whether it
/// may write. A request's statements carry the request's access, so that a
/// `GET` cannot write whatever its SQL says, and row-level security sees
/// the caller's role.
///
/// Set for a transaction, never for the session: an implicit transaction
/// (the statements up to one synchronization point) begins with the
/// statements of `preliminaries`, an explicit one with `BEGIN … READ
/// ONLY` and the role's (`Connection.begin(_:repeatableRead:)`). Either
/// way the access ends with the transaction.
///
/// ```swift
/// let rows = try connection.query("SELECT * FROM salaries", access: Access(role: "payroll", isReadOnly: true))
/// ```
///
/// It also carries the ``trace`` of the request the work is for, which
/// says how the work is observed, not what it may do: two accesses that
/// differ only by their trace are equal.
public struct Access: Sendable, Hashable {
    /// The role the statements run as (`SET LOCAL ROLE`, the name bound);
    /// `nil`: the connection's own login role.
    public var role: String?
    /// Whether the transaction is `READ ONLY`: a statement that writes
    /// fails with `25006`, whatever it is (a data-modifying `WITH`, a
    /// function that writes).
    public var isReadOnly: Bool
    /// The request the work is for, when its span records: each statement
    /// gets a span under it (`StatementSpan`).
    public var trace: RequestTrace?

    /// An access; by default the connection's role, reads and writes, no trace.
    ///
    /// ```swift
    /// Access(role: "web_anon", isReadOnly: true)
    /// ```
    public init(role: String? = nil, isReadOnly: Bool = false, trace: RequestTrace? = nil) {
        self.role = role
        self.isReadOnly = isReadOnly
        self.trace = trace
    }

    public static func == (left: Access, right: Access) -> Bool {
        left.role == right.role && left.isReadOnly == right.isReadOnly
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(role)
        hasher.combine(isReadOnly)
    }

    /// The connection's own role, reads and writes: nothing is added to the statements.
    public static let unrestricted = Access()

    /// Makes the current transaction read-only. Always allowed first in a
    /// transaction, and never undone: PostgreSQL refuses to make a
    /// transaction writable again once a statement has run in it.
    static let readOnlySQL = "SELECT set_config('transaction_read_only', 'on', true)"

    /// The statements (SQL, values) that give an implicit transaction this
    /// access, in order: none for ``unrestricted``.
    var preliminaries: [(sql: String, values: [String?])] {
        var statements: [(sql: String, values: [String?])] = []
        if isReadOnly { statements.append((Self.readOnlySQL, [])) }
        if let role { statements.append((Connection.setLocalRoleSQL, [role])) }
        return statements
    }
}
