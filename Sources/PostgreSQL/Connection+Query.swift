// MARK: - Statements with named parameters

extension Connection {
    /// Runs a statement and returns the number of rows it changed.
    ///
    /// `:name` parameters are bound from `arguments` and sent separately from
    /// the SQL text. The statement is prepared on first use and reused.
    ///
    /// ```swift
    /// let changed = try connection.execute(
    ///     "UPDATE employees SET last_name = :name WHERE emp_no = :id", ["name": "Ada", "id": 10001])
    /// ```
    @discardableResult
    public func execute(_ sql: String, _ arguments: SQLArguments = [:]) throws -> Int {
        let statement = try preparedStatement(for: sql)
        return try run(statement, values: arguments.textValues(for: statement.parameters)).affectedRowCount
    }

    /// Runs SQL text that takes no parameters and may hold several
    /// statements separated by semicolons (schema scripts, `SET`, `BEGIN`).
    /// Nothing is prepared or cached.
    ///
    /// ```swift
    /// try connection.executeScript("CREATE TABLE t(id int); INSERT INTO t VALUES (1)")
    /// ```
    public func executeScript(_ sql: String) throws {
        try runSimple(sql)
    }

    /// Starts a query and returns a cursor that reads its rows one at a time.
    ///
    /// Until the cursor has reached the end or is closed, the connection
    /// runs nothing else; any other call on it closes the cursor first.
    /// With `access`, the query runs as its role and, when it only reads,
    /// in a read-only transaction (``Access``).
    ///
    /// ```swift
    /// let rows = try connection.query("SELECT title FROM titles WHERE emp_no = :id", ["id": 10001])
    /// while let row = try rows.next() { print(row["title"]!) }
    /// ```
    public func query(_ sql: String, _ arguments: SQLArguments = [:], access: Access = .unrestricted) throws -> RowCursor {
        let statement = try preparedStatement(for: sql)
        return try stream(statement, values: arguments.textValues(for: statement.parameters), access: access)
    }

    /// Every row of a query decoded as `T`, keyed by column label.
    ///
    /// ```swift
    /// struct Title: Decodable { var title: String; var fromDate: Date }
    /// let titles = try connection.fetchAll(Title.self,
    ///     "SELECT title, from_date AS fromDate FROM titles WHERE emp_no = :id", ["id": 10001])
    /// ```
    public func fetchAll<T: Decodable>(_ type: T.Type, _ sql: String, _ arguments: SQLArguments = [:]) throws -> [T] {
        let statement = try preparedStatement(for: sql)
        let result = try run(statement, values: arguments.textValues(for: statement.parameters))
        let layout = ColumnLayout(statement.spelled(result.columns))
        return try (0..<result.rowCount).map { index in
            try Row(result: result, index: index, layout: layout).decode(T.self)
        }
    }

    /// The first row of a query decoded as `T`, or `nil` when there is none.
    ///
    /// ```swift
    /// struct Employee: Decodable { var employeeNumber: Int; var firstName: String }
    /// let employee = try connection.fetchOne(Employee.self,
    ///     "SELECT emp_no AS employeeNumber, first_name AS firstName FROM employees WHERE emp_no = :id",
    ///     ["id": 10001])
    /// ```
    public func fetchOne<T: Decodable>(_ type: T.Type, _ sql: String, _ arguments: SQLArguments = [:]) throws -> T? {
        let rows = try query(sql, arguments)
        defer { rows.close() }
        return try rows.next()?.decode(T.self)
    }
}

// MARK: - Transactions

extension Connection {
    /// Runs `body` in a transaction: committed when `body` returns, rolled
    /// back when it throws (the error is rethrown).
    ///
    /// - Parameter readOnly: starts the transaction `READ ONLY`; a write then
    ///   fails with ``SQLState/readOnlySQLTransaction`` (`25006`).
    /// - Parameter role: the role the statements run as (see
    ///   ``beginTransaction(role:readOnly:repeatableRead:)``); `nil`: the connection's own.
    /// - Parameter body: the work, given this connection; its result is returned.
    ///
    /// ```swift
    /// try connection.transaction(role: "payroll") { connection in
    ///     try connection.execute("INSERT INTO titles VALUES (:id, 'Engineer', now(), NULL)", ["id": 10001])
    /// }
    /// ```
    @discardableResult
    public func transaction<Result>(readOnly: Bool = false, role: String? = nil, _ body: (Connection) throws -> Result) throws -> Result {
        try begin(Access(role: role, isReadOnly: readOnly))
        let result: Result
        do {
            result = try body(self)
        } catch {
            rollBackQuietly()
            throw error
        }
        if isInFailedTransaction {
            rollBackQuietly()
            throw DatabaseError(
                code: .inFailedSQLTransaction,
                message: "the transaction was rolled back because a statement in it failed")
        }
        try runSimple("COMMIT")
        return result
    }

    /// Runs `body` with `access`: in a transaction begun for it
    /// (``begin(_:repeatableRead:)``) when it is restricted, committed
    /// when `body` returns and rolled back when it throws; as it comes,
    /// with no transaction added, when it is ``Access/unrestricted``.
    @discardableResult
    package func transaction<Result>(access: Access, _ body: (Connection) throws -> Result) throws -> Result {
        guard access != .unrestricted else { return try body(self) }
        return try transaction(readOnly: access.isReadOnly, role: access.role, body)
    }

    /// Rolls back the open transaction, if any, when the connection still works.
    package func rollBackQuietly() {
        guard !isBroken, isInTransaction else { return }
        _ = try? runSimple("ROLLBACK")
    }
}

// MARK: - Binding

extension PreparedStatement {
    /// `columns` with the labels spelled as the SQL text's aliases.
    func spelled(_ columns: [Column]) -> [Column] {
        columns.map { $0.respelled(labelSpelling) }
    }
}

extension SQLArguments {
    /// The text-format values for the statement's `$1`, `$2`, ... in order;
    /// throws what `parameters.bind(self)` throws.
    package func textValues(for parameters: Parameters) throws -> [String?] {
        try parameters.boundValues(self) { $0.text }
    }
}

extension Parameters {
    /// What `bind(_:)` with `lookup` gives, as text-format values (`nil`
    /// for NULL), without the intermediate array.
    package func textValues(_ lookup: (String) throws(ParameterError) -> SQLValue?) throws(ParameterError) -> [String?] {
        try boundValues(lookup) { $0.text }
    }
}
