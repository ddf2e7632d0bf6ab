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
/// `{"type":"about:blank","title":"Not Found","status":404,"detail":"...","parameter":"..."}`;
/// `parameter` appears only where the problem is one argument.
public struct HTTPError: Error, Sendable, CustomStringConvertible {
    public var status: HTTPStatus
    /// A human-readable explanation specific to this occurrence.
    public var detail: String
    /// The request argument at fault, if the problem is one argument.
    public var parameter: String?
    /// Extra header fields for the response (`Allow`, `Retry-After`).
    public var headers: HTTPHeaders
    /// Further members of the problem document, written after the standard
    /// ones (an error id, the allowed values).
    public var extensions: [(name: String, value: ProblemValue)]

    public init(
        _ status: HTTPStatus,
        detail: String,
        parameter: String? = nil,
        headers: HTTPHeaders = HTTPHeaders(),
        extensions: [(name: String, value: ProblemValue)] = []
    ) {
        self.status = status
        self.detail = detail
        self.parameter = parameter
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
public enum ProblemValue: Sendable {
    case string(String)
    case strings([String])
    case integer(Int)

    func appendJSON(to out: inout [UInt8]) {
        switch self {
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
