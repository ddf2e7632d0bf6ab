import PrometheusMetrics
import PostgreSQL
import WebService

// The SQL layer knows nothing of HTTP and the dispatcher nothing of SQL;
// this module is where the two meet, so the conformances are declared here.

/// Database errors become HTTP errors with a status chosen by SQLSTATE,
/// as PostgREST chooses it, the SQLSTATE as the problem's `code`.
///
/// | SQLSTATE | status |
/// | --- | --- |
/// | class `22` (data exceptions: invalid input, out of range, division by zero) | 400 |
/// | `23505`, `23503`, `23P01` (unique, foreign key, exclusion) | 409, naming the `constraint` |
/// | `23502`, `23514` (not null, check) | 400, naming the `column` or the `constraint` |
/// | `25006` (a write in a read-only transaction: a `GET` that writes) | 405 |
/// | `42501` (insufficient privilege), a role the request cannot take on (``RoleError``), classes `28`, `0L`, `0P` | 403 |
/// | `42883` (no such function or operator), `42P01` (no such table) | 404 |
/// | class `42` otherwise (an unknown column, a type cast to that does not exist) | 400 |
/// | `P0001` (`RAISE EXCEPTION`) | 400, with the function's message, detail and hint |
/// | `PTxyz` (`RAISE SQLSTATE 'PT404'`) | xyz, with the function's message |
/// | `08*`, `57P01`, `57P02`, `57P03`, class `53` but `53400` (connection lost, resources) | 503 with `Retry-After` |
/// | `57014` (statement timeout) | 504 |
/// | classes `09`, `25`, `2D`, `38`, `39`, `3B`, `40`, `54`, `55`, `57`, `58`, `F0`, `HV`, `P0`, `XX` otherwise, `53400`, `42P17` | 500 with an error id, logged by the router |
/// | anything else (`21000`, `0A000`, `44000`…) | 400, as PostgREST answers it |
///
/// The detail sent to the client is a fixed sentence per case, never the
/// server's message or detail, with three exceptions whose text is meant
/// for callers or names only the schema's objects: a function's own
/// `RAISE` (`P0001`, `PTxyz`), and class `42` (`column people.agee does
/// not exist`). Other messages can quote stored or bound values
/// (`invalid input syntax for type integer: "abc"`), which must not be
/// echoed. The constraint's or the column's name, the schema's, goes in
/// `constraint` or `column`.
///
/// ```swift
/// Route(.get, "/?:id", Parameter<Int>("id")) { id in
///     try pool.withConnection { try $0.execute("...") }   // a 23505 answers 409
/// }
/// ```
extension DatabaseError: HTTPErrorConvertible {
    public var httpError: HTTPError? {
        Self.answeredByClass.add(code.class)
        var status: HTTPStatus
        var detail: String
        var headers = HTTPHeaders()
        var details: ProblemValue?
        var hint: String?
        var extensions: [(name: String, value: ProblemValue)] = [("sqlState", .string(code.rawValue))]
        let constraintNote = constraint.map { " (constraint \"\($0)\")" } ?? ""
        switch code {
        case .uniqueViolation, .foreignKeyViolation, .exclusionViolation:
            status = .conflict
            detail =
                (code == .foreignKeyViolation
                    ? "The request refers to a record that does not exist or is still referenced"
                    : "The request conflicts with an existing record") + constraintNote + "."
            if let constraint { extensions.append(("constraint", .string(constraint))) }
        case .notNullViolation:
            status = .badRequest
            detail = "A required value is missing" + (column.map { " (column \"\($0)\")" } ?? "") + "."
            if let column { extensions.append(("column", .string(column))) }
        case .checkViolation:
            status = .badRequest
            detail = "A value in the request breaks a rule of the database" + constraintNote + "."
            if let constraint { extensions.append(("constraint", .string(constraint))) }
        case .stringDataRightTruncation:
            status = .badRequest
            detail = "A value in the request is too long for the database."
        case .readOnlySQLTransaction:
            status = .methodNotAllowed
            detail = "The statement writes, and this request may only read (a GET or a HEAD runs read-only)."
        case .insufficientPrivilege:
            status = .forbidden
            detail = "The service is not allowed to perform this operation."
        case .queryCanceled:
            status = .gatewayTimeout
            detail = "The database did not answer in time."
        case SQLState(rawValue: "42883"), .undefinedTable:
            status = .notFound
            detail = message
        case SQLState(rawValue: "P0001"):
            status = .badRequest
            detail = message
            details = self.detail.map(ProblemValue.string)
            hint = self.hint
        case _ where code.rawValue.hasPrefix("PT"):
            // `RAISE SQLSTATE 'PT402'`: the status the function asks for.
            guard let asked = Int(code.rawValue.dropFirst(2)), (100...599).contains(asked) else { return nil }
            status = HTTPStatus(asked)
            detail = message
            details = self.detail.map(ProblemValue.string)
            hint = self.hint
        case _ where isConnectionFailure || (code.class == "53" && code.rawValue != "53400"):
            status = .serviceUnavailable
            detail = "The database is unavailable; try again shortly."
            headers["Retry-After"] = "1"
        case _ where Self.leftToTheServer(code):
            return nil
        case _ where code.class == "22":
            status = .badRequest
            detail = "A value in the request is not valid for the database."
        case .syntaxError:
            status = .badRequest
            detail = "The request makes a statement the database cannot read."
        case _ where code.class == "42":
            status = .badRequest
            detail = message
        case _ where ["28", "0L", "0P"].contains(code.class):
            status = .forbidden
            detail = "The service is not allowed to perform this operation."
        default:
            // PostgREST's default: what the database refused of the request.
            status = .badRequest
            detail = "The database refused the request."
        }
        return HTTPError(
            status, detail: detail, code: code.rawValue, details: details, hint: hint, headers: headers, extensions: extensions)
    }
}

extension DatabaseError {
    /// Whether `code` is the server's own failure, a 500 the router logs
    /// with an error id, as PostgREST answers it: classes `09`, `25` (but
    /// `25006`), `2D`, `38`, `39`, `3B`, `40`, `54`, `55`, `57` (but those
    /// answered above), `58`, `F0`, `HV`, `P0` (but `P0001`), `XX`, and
    /// `53400`, `42P17`.
    static func leftToTheServer(_ code: SQLState) -> Bool {
        switch code.class {
        case "09", "25", "2D", "38", "39", "3B", "40", "54", "55", "57", "58", "F0", "HV", "P0", "XX": true
        default: code.rawValue == "53400" || code.rawValue == "42P17"
        }
    }

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
