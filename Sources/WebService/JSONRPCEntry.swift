import JSONStreaming

/// A JSON-RPC error object.
struct JSONRPCError: Error, Sendable {
    let code: Int
    let message: String
    /// The `data` member, as JSON.
    let data: [UInt8]?

    init(code: Int, message: String, data: [UInt8]?) {
        self.code = code
        self.message = message
        self.data = data
    }

    /// An error whose `data` is `{"detail": detail}`.
    init(code: Int, message: String, detail: String) {
        self.init(code: code, message: message, data: (["detail": .string(detail)] as JSONValue).jsonBytes)
    }
}

/// One member of a request (or batch), as parsed.
enum JSONRPCEntry: Sendable {
    /// Not a valid request: answered with `id: null`.
    case invalid(JSONRPCError)
    /// A call; `id` is `nil` for a notification.
    case call(method: String, params: JSONValue?, id: JSONValue?)

    var isNotification: Bool {
        if case .call(_, _, nil) = self { true } else { false }
    }

    /// The entries of a request body, and whether it was a batch.
    static func parse(_ body: [UInt8]) -> (entries: [JSONRPCEntry], isBatch: Bool) {
        let document: JSONValue
        do {
            document = try JSONValue.parse(body)
        } catch {
            return (
                [.invalid(JSONRPCError(code: -32700, message: "Parse error", detail: "The request is not valid JSON: \(error)."))], false
            )
        }
        switch document {
        case .array(let elements):
            if elements.isEmpty {
                return (
                    [.invalid(JSONRPCError(code: -32600, message: "Invalid Request", detail: "A batch holds at least one call."))], false
                )
            }
            return (elements.map(entry), true)
        default:
            return ([entry(document)], false)
        }
    }

    private static func entry(_ value: JSONValue) -> JSONRPCEntry {
        func invalid(_ detail: String) -> JSONRPCEntry {
            .invalid(JSONRPCError(code: -32600, message: "Invalid Request", detail: detail))
        }
        guard case .object(let members) = value else { return invalid("A call is a JSON object.") }
        guard members["jsonrpc"] == .string("2.0") else { return invalid("\"jsonrpc\" must be \"2.0\".") }
        guard case .string(let method)? = members["method"] else { return invalid("\"method\" must be a string.") }
        switch members["id"] {
        case nil, .null?, .string?, .integer?, .number?: break
        default: return invalid("\"id\" must be a string, a number or null.")
        }
        switch members["params"] {
        case nil, .object?, .array?: break
        default: return invalid("\"params\" must be an object or an array.")
        }
        return .call(method: method, params: members["params"], id: members["id"])
    }

    /// A whole error response.
    static func envelope(id: JSONValue, error: JSONRPCError) -> [UInt8] {
        var out: [UInt8] = []
        out.append(contentsOf: #"{"jsonrpc":"2.0","id":"#.utf8)
        id.append(to: &out)
        out.append(contentsOf: #","error":{"code":"#.utf8)
        JSONWriter.appendInteger(error.code, to: &out)
        out.append(contentsOf: #","message":"#.utf8)
        JSONWriter.appendString(error.message, to: &out)
        if let data = error.data {
            out.append(contentsOf: #","data":"#.utf8)
            out.append(contentsOf: data)
        }
        out.append(contentsOf: "}}".utf8)
        return out
    }
}
