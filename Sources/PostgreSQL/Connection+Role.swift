// MARK: - Transactions that run as a role

extension Connection {
    /// Sets the role of the current transaction, the value bound:
    /// `SET LOCAL ROLE` takes no parameter, and `set_config` with
    /// `is_local` does the same. The role ends with the transaction.
    package static let setLocalRoleSQL = "SELECT set_config('role', $1, true)"

    /// Begins a transaction whose statements run as `role` (`SET LOCAL
    /// ROLE`), in one round trip: its grants and row-level security policies
    /// then decide what they may read and write. The role is a value,
    /// bound, never spliced into SQL. End it with `COMMIT` or `ROLLBACK`
    /// (a pool rolls back a connection given back in a transaction).
    ///
    /// The connection's own login role must be allowed to become `role`
    /// (a superuser, or a member of `role`): otherwise, or when `role` does
    /// not exist, this throws a ``RoleError``. `readOnly` and
    /// `repeatableRead` begin a `READ ONLY` or `REPEATABLE READ` transaction.
    ///
    /// ```swift
    /// try connection.beginTransaction(role: "payroll")
    /// let rows = try connection.query("SELECT * FROM salaries")   // as payroll
    /// ```
    public func beginTransaction(role: String, readOnly: Bool = false, repeatableRead: Bool = false) throws {
        try begin(Access(role: role, isReadOnly: readOnly), repeatableRead: repeatableRead)
    }

    /// Begins a transaction with `access`, `READ ONLY` when it only reads,
    /// as its role when it has one, in one round trip; `repeatableRead`
    /// begins it `REPEATABLE READ` (one snapshot for all its statements).
    /// Throws a ``RoleError`` when the role cannot be taken.
    ///
    /// ```swift
    /// try connection.begin(Access(role: "payroll", isReadOnly: true), repeatableRead: true)
    /// ```
    package func begin(_ access: Access, repeatableRead: Bool = false) throws {
        let begin = "BEGIN" + (repeatableRead ? " ISOLATION LEVEL REPEATABLE READ" : "") + (access.isReadOnly ? " READ ONLY" : "")
        guard let role = access.role else {
            try runSimple(begin)
            return
        }
        let results = try sendPipeline([
            PipelinedStatement(sql: begin),
            PipelinedStatement(sql: Self.setLocalRoleSQL, values: [role]),
        ])
        do {
            try check(results[0])
            try RoleError.check(results[1], role: role, on: self)
        } catch {
            rollBackQuietly()
            throw error
        }
    }

    /// Ends the transaction of ``beginTransaction(role:readOnly:)`` with
    /// `COMMIT` when it is still going, and none of its statements failed.
    package func commitQuietly() {
        guard !isBroken, isInTransaction, !isInFailedTransaction else { return }
        _ = try? runSimple("COMMIT")
    }
}

/// The role a request was to run as could not be taken: it does not
/// exist (`22023`), or the server's login role may not become it (`42501`).
///
/// ```swift
/// do { try connection.beginTransaction(role: "payroll") } catch let error as RoleError { print(error.role) }
/// ```
public struct RoleError: Error, Sendable, CustomStringConvertible {
    /// The role asked for.
    public let role: String
    /// PostgreSQL's error.
    public let reason: DatabaseError

    public var description: String {
        "cannot act as role \(role): \(reason.message)"
    }

    /// Throws `result`'s failure, as a ``RoleError`` when it is about the role.
    package static func check(_ result: QueryResult, role: String, on connection: Connection) throws {
        guard let error = result.error else { return }
        if isAboutRole(error) { throw RoleError(role: role, reason: error) }
        try connection.check(result)
    }

    /// The failure of setting `role`: a ``RoleError`` when it is about the
    /// role, else `error` itself (a lost connection, say).
    package static func failure(_ error: DatabaseError, role: String) -> any Error {
        isAboutRole(error) ? RoleError(role: role, reason: error) : error
    }

    private static func isAboutRole(_ error: DatabaseError) -> Bool {
        error.code == .invalidParameterValue || error.code == .insufficientPrivilege
    }
}
