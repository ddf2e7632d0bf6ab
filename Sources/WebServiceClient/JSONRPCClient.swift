import Foundation

/// Calls a JSON-RPC 2.0 endpoint (`POST /jsonrpc` on our servers) with
/// typed results, params by name or by position (``JSONRPCParams``);
/// after the seeds' JRPCProxy, with the batches and notifications it left out.
///
/// ```swift
/// let rpc = JSONRPCClient(baseURL: URL(string: "http://localhost:8080")!)
/// let sum = try await rpc.call("math.getSum", params: ["a": 2, "b": 4], as: Double.self)
/// let same = try await rpc.call("math.getSum", params: [2, 4], as: Double.self)
/// let (employee, total) = try await rpc.batch {
///     JSONRPCCall("employees.getByEmployeeNumber", params: ["employeeNumber": 10004], as: Employee.self)
///     JSONRPCCall("math.getSum", params: [[1, 2, 3]], as: Double.self)
/// }
/// print(try employee.get().lastName, try total.get())
/// ```
///
/// The calls travel through a ``WebServiceClient`` (its authentication,
/// header fields and timeout; never its cache). A JSON-RPC error throws
/// ``JSONRPCError``; a failed transfer throws ``WebServiceError``.
public final class JSONRPCClient: Sendable {
    public let client: WebServiceClient
    /// The endpoint's path below the client's base URL.
    public let path: String

    public init(client: WebServiceClient, path: String = "/jsonrpc") {
        self.client = client
        self.path = path
    }

    /// A client of `baseURL`'s endpoint at `path`.
    public convenience init(baseURL: URL, path: String = "/jsonrpc", configuration: WebServiceClient.Configuration = .init()) {
        self.init(client: WebServiceClient(baseURL: baseURL, configuration: configuration), path: path)
    }

    /// Calls `method`; its result decoded as `type` (dates in the server's formats).
    public func call<T: Decodable>(_ method: String, params: JSONRPCParams = [:], as type: T.Type = T.self) async throws -> T {
        let response = try await post(JSONRPCCall<T>(method, params: params, as: T.self).requestJSON(id: 1))
        let envelope: Envelope<T>
        do {
            envelope = try WebServiceDecoding.decoder().decode(Envelope<T>.self, from: response.data)
        } catch {
            throw WebServiceError(
                .decoding, detail: "The answer to \(method) is not a \(T.self): \(error)", body: response.data,
                underlying: error)
        }
        if let error = envelope.error { throw error }
        if let result = envelope.result { return result }
        do {
            return try WebServiceDecoding.decoder().decode(T.self, from: Data("null".utf8))
        } catch {
            throw WebServiceError(
                .decoding, detail: "The result of \(method) is null, not a \(T.self).", body: response.data,
                underlying: error)
        }
    }

    /// Sends `method` as a notification: it runs, and nothing comes back.
    public func notify(_ method: String, params: JSONRPCParams = [:]) async throws {
        _ = try await post(JSONRPCCall<Void>.notification(method, params: params).requestJSON(id: nil))
    }

    /// Sends the calls as one batch; their results in the same order, each
    /// a success or that call's own error (ids are matched, whatever order
    /// the server answers in). A notification's result is `()`.
    public func batch<each T>(
        @JSONRPCBatchBuilder _ calls: () -> (repeat JSONRPCCall<each T>)
    ) async throws -> (repeat Result<each T, any Error>) {
        let calls = calls()
        var requests: [String] = []
        var nextID = 1
        for call in repeat each calls {
            if call.isNotification {
                requests.append(try call.requestJSON(id: nil))
            } else {
                requests.append(try call.requestJSON(id: nextID))
                nextID += 1
            }
        }
        let response = try await post("[" + requests.joined(separator: ",") + "]")
        var answers: [Int: [String: Any]] = [:]
        if nextID > 1 {
            guard let array = try? JSONSerialization.jsonObject(with: response.data) as? [[String: Any]] else {
                throw WebServiceError(.decoding, detail: "The answer to a batch is not an array of responses.", body: response.data)
            }
            for answer in array {
                if let id = (answer["id"] as? NSNumber)?.intValue { answers[id] = answer }
            }
        }
        var id = 0
        func result<R>(_ call: JSONRPCCall<R>) -> Result<R, any Error> {
            if call.isNotification { return Result { try call.decode(Data("null".utf8)) } }
            id += 1
            guard let answer = answers[id] else {
                return .failure(WebServiceError(.decoding, detail: "The batch's answer has no response to call \(id) (\(call.method))."))
            }
            if let error = answer["error"] {
                return .failure(JSONRPCError(object: error))
            }
            return Result {
                let data = try JSONSerialization.data(withJSONObject: answer["result"] ?? NSNull(), options: .fragmentsAllowed)
                do {
                    return try call.decode(data)
                } catch {
                    throw WebServiceError(
                        .decoding, detail: "The result of \(call.method) is not a \(R.self): \(error)", body: data,
                        underlying: error)
                }
            }
        }
        return (repeat result(each calls))
    }

    private func post(_ json: String) async throws -> WebServiceResponse {
        try await client.send(
            WebServiceRequest(
                .post, path, body: WebServiceRequest.Body(data: Data(json.utf8), contentType: "application/json"),
                cachePolicy: .networkOnly))
    }

    private struct Envelope<T: Decodable>: Decodable {
        var result: T?
        var error: JSONRPCError?
    }
}

/// One call of a batch: a method, its params by name or by position,
/// and the type of its result. A batch may mix both kinds of params.
///
/// ```swift
/// JSONRPCCall("math.getSum", params: ["a": 2, "b": 4], as: Double.self)
/// JSONRPCCall("math.getSum", params: [2, 4], as: Double.self)
/// JSONRPCCall.notification("audit.log", params: ["event": "opened"])
/// ```
public struct JSONRPCCall<Result> {
    public let method: String
    public let params: JSONRPCParams
    /// Whether no answer is expected (no `id`).
    public let isNotification: Bool
    let decode: (Data) throws -> Result

    public init(_ method: String, params: JSONRPCParams = [:], as type: Result.Type = Result.self) where Result: Decodable {
        self.method = method
        self.params = params
        isNotification = false
        decode = { data in try WebServiceDecoding.decoder().decode(Result.self, from: data) }
    }

    private init(notification method: String, params: JSONRPCParams) where Result == Void {
        self.method = method
        self.params = params
        isNotification = true
        decode = { _ in () }
    }

    /// A call that expects no answer.
    public static func notification(_ method: String, params: JSONRPCParams = [:]) -> JSONRPCCall<Void> where Result == Void {
        JSONRPCCall<Void>(notification: method, params: params)
    }

    /// The request object; without `id` for a notification. Throws for a
    /// param that cannot be encoded.
    func requestJSON(id: Int?) throws -> String {
        var json = #"{"jsonrpc":"2.0","method":"# + JSONText.quoted(method)
        if !params.isEmpty { json += #","params":"# + (try params.json()) }
        if let id { json += #","id":\#(id)"# }
        return json + "}"
    }
}

/// Gathers the calls of ``JSONRPCClient/batch(_:)``, keeping each one's result type.
@resultBuilder
public enum JSONRPCBatchBuilder {
    public static func buildBlock<each T>(_ calls: repeat JSONRPCCall<each T>) -> (repeat JSONRPCCall<each T>) {
        (repeat each calls)
    }
}

/// A JSON-RPC error response: its code, message and data. On our servers,
/// `data` is the problem document of the route's answer (`status`,
/// `detail`, `parameter`).
///
/// ```swift
/// catch let error as JSONRPCError where error.code == .methodNotFound { ... }
/// ```
public struct JSONRPCError: Error, Sendable, Decodable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable, Decodable, CustomStringConvertible {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(Int.self) }

        public static let parseError = Code(rawValue: -32700)
        public static let invalidRequest = Code(rawValue: -32600)
        public static let methodNotFound = Code(rawValue: -32601)
        public static let invalidParams = Code(rawValue: -32602)
        public static let internalError = Code(rawValue: -32603)
        /// A server-defined error (-32000 to -32099): on our servers, a problem other than 400 and 500.
        public static let serverError = Code(rawValue: -32000)

        public var description: String { String(rawValue) }
    }

    public var code: Code
    public var message: String
    /// The `data` member as JSON, if any.
    public var data: Data?

    public init(code: Code, message: String, data: Data? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    /// `data`'s `status` member: the HTTP status of the route's problem.
    public var status: Int? { dataObject?["status"] as? Int }
    /// `data`'s `detail` member.
    public var detail: String? { dataObject?["detail"] as? String }
    /// `data`'s `parameter` member: the param at fault.
    public var parameter: String? { dataObject?["parameter"] as? String }

    private var dataObject: [String: Any]? {
        data.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
    }

    public var description: String {
        "JSON-RPC error \(code.rawValue) \(message)" + (detail.map { ": \($0)" } ?? "") + (parameter.map { " (parameter \($0))" } ?? "")
    }

    private enum CodingKeys: String, CodingKey {
        case code, message, data
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        code = try container.decode(Code.self, forKey: .code)
        message = try container.decode(String.self, forKey: .message)
        data = nil
        if container.contains(.data), let value = try? container.decode(AnyJSON.self, forKey: .data) {
            data = try? JSONSerialization.data(withJSONObject: value.value, options: .fragmentsAllowed)
        }
    }

    /// The error object of a batch's answer, as `JSONSerialization` read it.
    init(object: Any) {
        let members = object as? [String: Any] ?? [:]
        code = Code(rawValue: (members["code"] as? NSNumber)?.intValue ?? Code.internalError.rawValue)
        message = members["message"] as? String ?? "Unknown error"
        data = members["data"].flatMap { try? JSONSerialization.data(withJSONObject: $0, options: .fragmentsAllowed) }
    }
}

/// Any JSON value, decoded into Foundation's types (for `data`).
private struct AnyJSON: Decodable {
    let value: Any

    init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var values: [Any] = []
            while !array.isAtEnd { values.append(try array.decode(AnyJSON.self).value) }
            value = values
        } else if let object = try? decoder.container(keyedBy: Key.self) {
            var values: [String: Any] = [:]
            for key in object.allKeys { values[key.stringValue] = try object.decode(AnyJSON.self, forKey: key).value }
            value = values
        } else {
            let single = try decoder.singleValueContainer()
            if single.decodeNil() {
                value = NSNull()
            } else if let bool = try? single.decode(Bool.self) {
                value = bool
            } else if let integer = try? single.decode(Int.self) {
                value = integer
            } else if let number = try? single.decode(Double.self) {
                value = number
            } else {
                value = try single.decode(String.self)
            }
        }
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
