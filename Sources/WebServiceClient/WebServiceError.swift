import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why a call failed: the server's answer (an RFC 9457 problem document
/// when it sent one), or a failure to get one at all.
///
/// ```swift
/// do {
///     let employee = try await client.get("/employees/{n}", arguments: ["n": 1], as: Employee.self)
/// } catch let error as WebServiceError where error.code == .server && error.status == 404 {
///     print(error.detail ?? "not found")
/// } catch let error as WebServiceError where error.code == .transport {
///     print("offline:", error)
/// }
/// ```
public struct WebServiceError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The server answered with an error status (4xx, 5xx).
        public static let server = Code(rawValue: "server")
        /// The server could not be reached, or the connection broke.
        public static let transport = Code(rawValue: "transport")
        /// No progress within the timeout.
        public static let timedOut = Code(rawValue: "timedOut")
        /// The calling task was cancelled.
        public static let cancelled = Code(rawValue: "cancelled")
        /// The answer could not be read as the type asked for.
        public static let decoding = Code(rawValue: "decoding")
        /// The call could not be made as written (a path variable without its argument, say).
        public static let invalidRequest = Code(rawValue: "invalidRequest")
        /// The server redirected an https call to http: the call is refused
        /// rather than sent, with its credentials, in clear.
        public static let insecureRedirect = Code(rawValue: "insecureRedirect")

        public var description: String { rawValue }
    }

    public var code: Code
    /// The HTTP status, for `.server`.
    public var status: Int?
    /// The problem's title (the status's reason phrase).
    public var title: String?
    /// What went wrong in this occurrence.
    public var detail: String?
    /// The argument at fault, when the problem is one argument.
    public var parameter: String?
    /// The id under which the server logged the error (`X-Request-ID`, else the problem's `errorId`).
    public var requestID: String?
    /// The response's header fields, for `.server`.
    public var headers: [String: String]
    /// The response's body as received, for `.server`.
    public var body: Data?
    /// The error underneath (a `URLError`, a `DecodingError`).
    public var underlying: (any Error & Sendable)?

    public init(
        _ code: Code, status: Int? = nil, title: String? = nil, detail: String? = nil, parameter: String? = nil,
        requestID: String? = nil, headers: [String: String] = [:], body: Data? = nil, underlying: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.status = status
        self.title = title
        self.detail = detail
        self.parameter = parameter
        self.requestID = requestID
        self.headers = headers
        self.body = body
        self.underlying = underlying
    }

    public var description: String {
        var text = code.rawValue
        if let status { text += " \(status)" }
        if let title { text += " \(title)" }
        if let detail { text += ": \(detail)" }
        if let parameter { text += " (parameter \(parameter))" }
        if let requestID { text += " [request \(requestID)]" }
        if detail == nil, let underlying { text += ": \(underlying)" }
        return text
    }

    /// The error of an answer with an error status, from its problem document when it is one.
    init(status: Int, headers: [String: String], body: Data) {
        self.init(.server, status: status, headers: headers, body: body)
        let problem = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        title = problem?["title"] as? String ?? HTTPURLResponse.localizedString(forStatusCode: status).capitalized
        detail =
            problem?["detail"] as? String
            ?? (problem == nil && !body.isEmpty ? String(decoding: body.prefix(1000), as: UTF8.self) : nil)
        parameter = problem?["parameter"] as? String
        requestID = headers.first { $0.key.lowercased() == "x-request-id" }?.value ?? problem?["errorId"] as? String
    }

    /// The error for a failure of the transfer itself.
    static func transfer(_ error: any Error) -> WebServiceError {
        if let error = error as? WebServiceError { return error }
        if error is CancellationError {
            return WebServiceError(.cancelled, detail: "The call was cancelled.", underlying: error)
        }
        guard let urlError = error as? URLError else {
            return WebServiceError(.transport, detail: "\(error)", underlying: error)
        }
        switch urlError.code {
        case .timedOut:
            return WebServiceError(.timedOut, detail: "The server did not answer in time.", underlying: urlError)
        case .cancelled:
            return WebServiceError(.cancelled, detail: "The call was cancelled.", underlying: urlError)
        default:
            return WebServiceError(.transport, detail: urlError.localizedDescription, underlying: urlError)
        }
    }

    /// Whether the server could not be reached or did not answer in time (the
    /// cache then falls back on what it holds); also 502, 503 and 504, a
    /// server that is there but cannot serve.
    var isUnreachable: Bool {
        switch code {
        case .transport, .timedOut: true
        case .server: Self.unavailableStatuses.contains(status ?? 0)
        default: false
        }
    }

    /// Statuses of a server that is there but cannot serve: a stored answer is better.
    static let unavailableStatuses: Set<Int> = [502, 503, 504]
}
