import JSONStreaming

/// An error that carries the HTTP response it should become, written as an
/// RFC 9457 problem-details document (`application/problem+json`).
///
/// ```swift
/// throw HTTPError(.notFound, detail: "No employee with number 99.")
/// throw HTTPError(.badRequest, detail: "Expected an integer, got \"abc\".", parameter: "employeeNumber")
/// ```
///
/// The body is
/// `{"type":"about:blank","title":"Not Found","status":404,"detail":"...","parameter":"...",
/// "code":"HTTP404","message":"...","details":null,"hint":null}`:
/// RFC 9457's members, `parameter` only where the problem is one
/// argument, then the members PostgREST's clients read (`code`, `message`,
/// the detail again, `details`, `hint`; docs/SQL-SERVICES.md lists the codes).
public struct HTTPError: Error, Sendable, CustomStringConvertible {
    public var status: HTTPStatus
    /// A human-readable explanation specific to this occurrence.
    public var detail: String
    /// The request argument at fault, if the problem is one argument.
    public var parameter: String?
    /// A stable code for the kind of problem: PostgREST's (`PGRST100`)
    /// where the problem is one it names, a SQLSTATE for a database's
    /// refusal, else `HTTP` and the status (`HTTP404`).
    public var code: String
    /// More about the problem, for a client to show (PostgREST's `details`):
    /// a sentence, or a list of the choices a request has.
    public var details: ProblemValue?
    /// What the client may do about it (PostgREST's `hint`).
    public var hint: String?
    /// Extra header fields for the response (`Allow`, `Retry-After`).
    public var headers: HTTPHeaders
    /// Further members of the problem document, written after the standard
    /// ones (an error id, the allowed values).
    public var extensions: [(name: String, value: ProblemValue)]

    public init(
        _ status: HTTPStatus,
        detail: String,
        parameter: String? = nil,
        code: String? = nil,
        details: ProblemValue? = nil,
        hint: String? = nil,
        headers: HTTPHeaders = HTTPHeaders(),
        extensions: [(name: String, value: ProblemValue)] = []
    ) {
        self.status = status
        self.detail = detail
        self.parameter = parameter
        self.code = code ?? "HTTP\(status.code)"
        self.details = details
        self.hint = hint
        self.headers = headers
        self.extensions = extensions
    }

    public var description: String {
        "\(status): \(detail)" + (parameter.map { " (parameter \($0))" } ?? "")
    }

    /// The problem-details document for this error.
    public var problemJSON: [UInt8] {
        var out: [UInt8] = []
        out.append(contentsOf: #"{"type":"about:blank","title":"#.utf8)
        JSONWriter.appendString(status.reasonPhrase, to: &out)
        out.append(contentsOf: #","status":"#.utf8)
        JSONWriter.appendInteger(status.code, to: &out)
        out.append(contentsOf: #","detail":"#.utf8)
        JSONWriter.appendString(detail, to: &out)
        if let parameter {
            out.append(contentsOf: #","parameter":"#.utf8)
            JSONWriter.appendString(parameter, to: &out)
        }
        out.append(contentsOf: #","code":"#.utf8)
        JSONWriter.appendString(code, to: &out)
        out.append(contentsOf: #","message":"#.utf8)
        JSONWriter.appendString(detail, to: &out)
        out.append(contentsOf: #","details":"#.utf8)
        if let details { details.appendJSON(to: &out) } else { JSONWriter.appendNull(to: &out) }
        out.append(contentsOf: #","hint":"#.utf8)
        if let hint { JSONWriter.appendString(hint, to: &out) } else { JSONWriter.appendNull(to: &out) }
        for (name, value) in extensions {
            out.append(UInt8(ascii: ","))
            JSONWriter.appendString(name, to: &out)
            out.append(UInt8(ascii: ":"))
            value.appendJSON(to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The response that reports this error.
    public var response: HTTPResponse {
        var headers = self.headers
        headers["Content-Type"] = "application/problem+json"
        return HTTPResponse(status: status, headers: headers, body: .bytes(problemJSON))
    }
}

/// The value of an extension member of a problem-details document.
///
/// ```swift
/// let details: ProblemValue = .array([.object([("cardinality", "many-to-one")])])
/// ```
public enum ProblemValue: Sendable, ExpressibleByStringLiteral, ExpressibleByStringInterpolation {
    case string(String)
    case strings([String])
    case integer(Int)
    case array([ProblemValue])
    /// Members in order.
    case object([(name: String, value: ProblemValue)])
    case null

    public init(stringLiteral value: String) {
        self = .string(value)
    }

    func appendJSON(to out: inout [UInt8]) {
        switch self {
        case .array(let values):
            out.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                value.appendJSON(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, member) in members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONWriter.appendString(member.name, to: &out)
                out.append(UInt8(ascii: ":"))
                member.value.appendJSON(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        case .null:
            JSONWriter.appendNull(to: &out)
        case .string(let value):
            JSONWriter.appendString(value, to: &out)
        case .strings(let values):
            out.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONWriter.appendString(value, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .integer(let value):
            JSONWriter.appendInteger(value, to: &out)
        }
    }
}
