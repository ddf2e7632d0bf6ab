/// An error reported by PostgreSQL or by libpq, with its SQLSTATE code.
///
/// The message, detail and hint are the server's own fields; they may quote
/// input values (a detail like `Key (name)=(ada) already exists.`), so show
/// them to the caller who sent the values, not to logs. The `description`
/// leaves out whatever may quote a bound value.
///
/// ```swift
/// do {
///     try connection.execute("INSERT INTO users(name) VALUES (:name)", ["name": "ada"])
/// } catch let error as DatabaseError where error.code == .uniqueViolation {
///     // 409 Conflict
/// }
/// ```
public struct DatabaseError: Error, Sendable, CustomStringConvertible {
    /// The SQLSTATE code (`23505`, `57014`, ...).
    public var code: SQLState
    /// The primary, human-readable message (`duplicate key value violates unique constraint "users_name_key"`).
    public var message: String
    /// An optional secondary message with more detail.
    public var detail: String?
    /// An optional suggestion of what to do about the problem.
    public var hint: String?
    /// Where in the statement's text the error is, in characters from 1
    /// (a syntax error, an unknown column), as the server counts them in the
    /// text it was sent (`$1` placeholders in place of `:name` parameters).
    public var position: Int?
    /// The constraint a violation is about (`employees_pkey`); never a value.
    public var constraint: String?
    /// The table and column an error is about (a not-null violation names its column).
    public var table: String?
    public var column: String?

    /// Creates an error value.
    ///
    /// ```swift
    /// let error = DatabaseError(code: .queryCanceled, message: "canceling statement due to statement timeout")
    /// let violation = DatabaseError(code: .uniqueViolation, message: "duplicate key", constraint: "items_name_key")
    /// ```
    public init(
        code: SQLState, message: String, detail: String? = nil, hint: String? = nil,
        position: Int? = nil, constraint: String? = nil, table: String? = nil, column: String? = nil
    ) {
        self.code = code
        self.message = message
        self.detail = detail
        self.hint = hint
        self.position = position
        self.constraint = constraint
        self.table = table
        self.column = column
    }

    /// `true` when the error means the connection can no longer be used
    /// (class `08`, `57P01` administrator shutdown, `57P02`, `57P03`).
    ///
    /// ```swift
    /// if error.isConnectionFailure { /* 503 with Retry-After */ }
    /// ```
    public var isConnectionFailure: Bool {
        code.isConnectionException || code == .adminShutdown || code == .crashShutdown || code == .cannotConnectNow
    }

    /// The code and, unless it may quote input, the message; safe to log.
    ///
    /// The server's message for bad input quotes the input
    /// (`invalid input syntax for type integer: "abc"`), and the detail of
    /// a constraint violation quotes key values, so the description leaves
    /// out the detail always and the message of data exceptions (class `22`).
    public var description: String {
        code.class == "22" ? "SQLSTATE \(code.rawValue) (invalid data)" : "SQLSTATE \(code.rawValue): \(message)"
    }
}

/// A SQLSTATE code: five characters, the first two naming the class.
///
/// A struct with named constants rather than an enum, so that any code the
/// server sends can be represented and compared.
///
/// ```swift
/// if error.code == .invalidTextRepresentation { /* 400 */ }
/// if error.code.class == "23" { /* integrity constraint violation */ }
/// ```
public struct SQLState: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The five-character code, as in `"23505"`.
    public var rawValue: String

    /// Creates a code from its five characters.
    ///
    /// ```swift
    /// let code = SQLState(rawValue: "40001")
    /// ```
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The two-character class (`"08"` for connection exceptions).
    ///
    /// ```swift
    /// SQLState.uniqueViolation.class // "23"
    /// ```
    public var `class`: String {
        String(rawValue.prefix(2))
    }

    /// `true` for class `08` (connection exception).
    ///
    /// ```swift
    /// SQLState.connectionFailure.isConnectionException // true
    /// ```
    public var isConnectionException: Bool {
        self.class == "08"
    }

    public var description: String { rawValue }

    // MARK: - Class 08: connection exception

    /// `08000` connection exception.
    public static let connectionException = SQLState(rawValue: "08000")
    /// `08003` connection does not exist.
    public static let connectionDoesNotExist = SQLState(rawValue: "08003")
    /// `08006` connection failure (also used for libpq's own connection errors).
    public static let connectionFailure = SQLState(rawValue: "08006")
    /// `08001` SQL client unable to establish SQL connection.
    public static let sqlClientUnableToEstablishSQLConnection = SQLState(rawValue: "08001")
    /// `08004` SQL server rejected establishment of SQL connection.
    public static let sqlServerRejectedEstablishmentOfSQLConnection = SQLState(rawValue: "08004")
    /// `08P01` protocol violation.
    public static let protocolViolation = SQLState(rawValue: "08P01")

    // MARK: - Class 0A: feature not supported

    /// `0A000` feature not supported.
    public static let featureNotSupported = SQLState(rawValue: "0A000")

    // MARK: - Class 22: data exception

    /// `22P02` invalid text representation (`'x'::int`).
    public static let invalidTextRepresentation = SQLState(rawValue: "22P02")
    /// `22023` invalid parameter value (a setting given a value it cannot take: `role` a role that does not exist).
    public static let invalidParameterValue = SQLState(rawValue: "22023")
    /// `22003` numeric value out of range.
    public static let numericValueOutOfRange = SQLState(rawValue: "22003")
    /// `22007` invalid datetime format.
    public static let invalidDatetimeFormat = SQLState(rawValue: "22007")
    /// `22008` datetime field overflow.
    public static let datetimeFieldOverflow = SQLState(rawValue: "22008")
    /// `22012` division by zero.
    public static let divisionByZero = SQLState(rawValue: "22012")
    /// `22001` string data right truncation (a value too long for `varchar(n)`).
    public static let stringDataRightTruncation = SQLState(rawValue: "22001")
    /// `22025` invalid escape sequence (a `LIKE` pattern ending with `\`).
    public static let invalidEscapeSequence = SQLState(rawValue: "22025")
    /// `2201B` invalid regular expression.
    public static let invalidRegularExpression = SQLState(rawValue: "2201B")

    // MARK: - Class 23: integrity constraint violation

    /// `23502` not-null violation.
    public static let notNullViolation = SQLState(rawValue: "23502")
    /// `23503` foreign key violation.
    public static let foreignKeyViolation = SQLState(rawValue: "23503")
    /// `23505` unique violation.
    public static let uniqueViolation = SQLState(rawValue: "23505")
    /// `23514` check violation.
    public static let checkViolation = SQLState(rawValue: "23514")
    /// `23P01` exclusion violation.
    public static let exclusionViolation = SQLState(rawValue: "23P01")

    // MARK: - Class 25: invalid transaction state

    /// `25006` read-only SQL transaction (a write inside `transaction(readOnly: true)`).
    public static let readOnlySQLTransaction = SQLState(rawValue: "25006")
    /// `25P02` in failed SQL transaction.
    public static let inFailedSQLTransaction = SQLState(rawValue: "25P02")

    // MARK: - Classes 40 and 42

    /// `40001` serialization failure.
    public static let serializationFailure = SQLState(rawValue: "40001")
    /// `40P01` deadlock detected.
    public static let deadlockDetected = SQLState(rawValue: "40P01")
    /// `42501` insufficient privilege.
    public static let insufficientPrivilege = SQLState(rawValue: "42501")
    /// `42601` syntax error.
    public static let syntaxError = SQLState(rawValue: "42601")
    /// `42703` undefined column.
    public static let undefinedColumn = SQLState(rawValue: "42703")
    /// `42P01` undefined table.
    public static let undefinedTable = SQLState(rawValue: "42P01")
    /// `42P18` indeterminate datatype (a parameter whose type the server cannot infer).
    public static let indeterminateDatatype = SQLState(rawValue: "42P18")
    /// `42883` undefined function (no operator or function for these types).
    public static let undefinedFunction = SQLState(rawValue: "42883")
    /// `42725` ambiguous function (several operators or functions fit).
    public static let ambiguousFunction = SQLState(rawValue: "42725")
    /// `42704` undefined object (a type or text search configuration that does not exist).
    public static let undefinedObject = SQLState(rawValue: "42704")
    /// `42804` datatype mismatch (`IS TRUE` of a number).
    public static let datatypeMismatch = SQLState(rawValue: "42804")
    /// `42846` cannot coerce (a cast between types that have none).
    public static let cannotCoerce = SQLState(rawValue: "42846")

    // MARK: - Class 57: operator intervention

    /// `57014` query canceled (statement timeout or cancel request).
    public static let queryCanceled = SQLState(rawValue: "57014")
    /// `57P01` admin shutdown (`pg_terminate_backend`, server stopping).
    public static let adminShutdown = SQLState(rawValue: "57P01")
    /// `57P02` crash shutdown.
    public static let crashShutdown = SQLState(rawValue: "57P02")
    /// `57P03` cannot connect now (server starting up).
    public static let cannotConnectNow = SQLState(rawValue: "57P03")

    // MARK: - Other

    /// `XX000` internal error; also used when libpq reports no code.
    public static let internalError = SQLState(rawValue: "XX000")
}

/// Acquiring a connection from a ``ConnectionPool`` took longer than the
/// pool's `acquireTimeout`: every connection stayed busy.
///
/// The dispatcher maps it to 503 Service Unavailable with `Retry-After`.
///
/// ```swift
/// do { try pool.withConnection { try $0.execute("SELECT 1") } }
/// catch let error as PoolTimeoutError { print(error.timeout) }
/// ```
public struct PoolTimeoutError: Error, Sendable, CustomStringConvertible {
    /// How long the caller waited.
    public var timeout: Duration
    /// The pool's size, all of whose connections were in use.
    public var poolSize: Int

    /// Creates the error value.
    ///
    /// ```swift
    /// let error = PoolTimeoutError(timeout: .seconds(5), poolSize: 10)
    /// ```
    public init(timeout: Duration, poolSize: Int) {
        self.timeout = timeout
        self.poolSize = poolSize
    }

    public var description: String {
        "no database connection available within \(timeout) (all \(poolSize) in use)"
    }
}
