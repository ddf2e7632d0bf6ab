import PrometheusMetrics
import PostgreSQL
import WebService

// The SQL layer knows nothing of HTTP and the dispatcher nothing of SQL;
// this module is where the two meet, so the conformances are declared here.

/// Database errors become HTTP errors with a status chosen by SQLSTATE.
///
/// | SQLSTATE | status |
/// | --- | --- |
/// | `22P02`, `22003`, `22007`, `22008`, `22001` (invalid input) | 400 |
/// | `42883`, `42725`, `42704`, `42804`, `42846`, `2201B`, `22025`, `42601` of a text search query (a filter, cast or pattern that does not apply to the column: the read language's) | 400 |
/// | `42501` (insufficient privilege), and a role the request cannot take on (``RoleError``) | 403 |
/// | `23505`, `23503`, `23P01` (unique, foreign key, exclusion) | 409, naming the `constraint` |
/// | `23502`, `23514` (not null, check) | 422, naming the `column` or the `constraint` |
/// | `08*`, `57P01`, `57P02`, `57P03` (connection lost) | 503 with `Retry-After` |
/// | `57014` (statement timeout) | 504 |
/// | anything else | 500 with an error id, logged by the router |
///
/// The detail sent to the client is a fixed sentence per case plus the
/// SQLSTATE as its `code` and in a `sqlState` member (and the constraint's or the column's
/// name, which are the schema's, in `constraint` or `column`), never the
/// server's message or detail: PostgreSQL
/// messages can quote the offending input (`invalid input syntax for type
/// integer: "abc"`), and bound values must not be echoed.
///
/// ```swift
/// Route(.get, "/?:id", Parameter<Int>("id")) { id in
///     try pool.withConnection { try $0.execute("...") }   // a 23505 answers 409
/// }
/// ```
extension DatabaseError: HTTPErrorConvertible {
    public var httpError: HTTPError? {
        Self.answeredByClass.add(code.class)
        let status: HTTPStatus
        let detail: String
        var headers = HTTPHeaders()
        var extensions: [(name: String, value: ProblemValue)] = [("sqlState", .string(code.rawValue))]
        let constraintNote = constraint.map { " (constraint \"\($0)\")" } ?? ""
        switch code {
        case .invalidTextRepresentation, .numericValueOutOfRange, .invalidDatetimeFormat, .datetimeFieldOverflow:
            status = .badRequest
            detail = "A value in the request is not valid for the database."
        case .stringDataRightTruncation:
            status = .badRequest
            detail = "A value in the request is too long for the database."
        case .undefinedFunction, .ambiguousFunction, .undefinedObject, .datatypeMismatch, .cannotCoerce, .invalidRegularExpression,
            .invalidEscapeSequence:
            // What a read request asks of a statement: a filter, cast or pattern that does not apply to the column.
            status = .badRequest
            detail = Self.notApplicable
        case .syntaxError where message.hasPrefix("syntax error in tsquery"):
            status = .badRequest
            detail = Self.notApplicable
        case .insufficientPrivilege:
            status = .forbidden
            detail = "The service is not allowed to perform this operation."
        case .uniqueViolation, .foreignKeyViolation, .exclusionViolation:
            status = .conflict
            detail =
                (code == .foreignKeyViolation
                    ? "The request refers to a record that does not exist or is still referenced"
                    : "The request conflicts with an existing record") + constraintNote + "."
            if let constraint { extensions.append(("constraint", .string(constraint))) }
        case .notNullViolation:
            status = .unprocessableContent
            detail = "A required value is missing" + (column.map { " (column \"\($0)\")" } ?? "") + "."
            if let column { extensions.append(("column", .string(column))) }
        case .checkViolation:
            status = .unprocessableContent
            detail = "A value in the request breaks a rule of the database" + constraintNote + "."
            if let constraint { extensions.append(("constraint", .string(constraint))) }
        case .queryCanceled:
            status = .gatewayTimeout
            detail = "The database did not answer in time."
        case _ where isConnectionFailure:
            status = .serviceUnavailable
            detail = "The database is unavailable; try again shortly."
            headers["Retry-After"] = "1"
        default:
            return nil
        }
        return HTTPError(status, detail: detail, code: code.rawValue, headers: headers, extensions: extensions)
    }
}

extension DatabaseError {
    /// The detail of a filter, cast or pattern that does not apply to the column it names.
    static let notApplicable =
        "The request compares, casts or matches a value in a way the database cannot (an operator, type or pattern that does not apply)."

    /// The database errors turned into HTTP answers, by SQLSTATE class
    /// (`23` for integrity violations), for `/metrics`; counted where they
    /// become answers, so each failed request once.
    ///
    /// ```swift
    /// DatabaseError.answeredByClass.values   // [("23", 2), ("57", 1)]
    /// ```
    public static let answeredByClass = CounterFamily()
}

/// A connection that could not be had in time answers 503 with `Retry-After`.
extension PoolTimeoutError: HTTPErrorConvertible {
    public var httpError: HTTPError? {
        HTTPError(
            .serviceUnavailable,
            detail: "All database connections are busy; try again shortly.",
            headers: ["Retry-After": "1"]
        )
    }
}

/// A value with a NUL character, which PostgreSQL text cannot hold, is the
/// client's fault: 400. A missing or unknown SQL parameter is the
/// service's own mistake and stays a 500.
extension ParameterError: HTTPErrorConvertible {
    public var httpError: HTTPError? {
        guard reason == .nulCharacter else { return nil }
        return HTTPError(.badRequest, detail: "A value in the request contains a NUL character.")
    }
}

/// A role the request may not act as (it does not exist, or the server's
/// login role may not become it) is a 403, as a denied grant is.
extension RoleError: HTTPErrorConvertible {
    public var httpError: HTTPError? {
        HTTPError(
            .forbidden, detail: "The request's role cannot be taken on by this server.", code: reason.code.rawValue,
            extensions: [("sqlState", .string(reason.code.rawValue))])
    }
}
