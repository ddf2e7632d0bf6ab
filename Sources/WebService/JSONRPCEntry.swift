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

    /// The `-32700` entry of a body that is not acceptable JSON.
    static func parseError(_ error: JSONValue.ParseError) -> JSONRPCEntry {
        .invalid(JSONRPCError(code: -32700, message: "Parse error", detail: "The request is not valid JSON: \(error)."))
    }

    static func entry(_ value: JSONValue) -> JSONRPCEntry {
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

/// The calls of one request body, in order, each parsed when it is asked
/// for: a batch is checked whole first (acceptable JSON, at most
/// `maximumCalls` calls, whether any call is answered), one element at a
/// time, then read again one element at a time as its calls run. Neither
/// pass holds more than one element parsed, so a batch costs the memory of
/// its body and of one call, whatever its length.
///
/// ```swift
/// var calls = JSONRPCCalls(body, maximumCalls: 1000)
/// while let entry = calls.next() { ... }
/// ```
struct JSONRPCCalls: Sendable {
    /// Whether the answer is an array (a batch that checked).
    let isBatch: Bool
    /// Whether any call is answered: not every one a notification.
    let answersSomething: Bool
    /// The one entry of a body that is not a batch, or that failed as a whole.
    private var single: JSONRPCEntry?
    /// The elements of a batch that checked.
    private var elements: JSONValue.ArrayElements?

    init(_ body: [UInt8], maximumCalls: Int) {
        switch Self.check(body, maximumCalls: maximumCalls) {
        case .whole(let entry):
            (single, isBatch, answersSomething, elements) = (entry, false, !entry.isNotification, nil)
        case .batch(let answers):
            (single, isBatch, answersSomething, elements) = (nil, true, answers, JSONValue.ArrayElements(body))
        }
    }

    /// What the first reading of a body found.
    private enum Check {
        /// One entry answers the whole body: a single call, or the error of a batch.
        case whole(JSONRPCEntry)
        /// A batch of acceptable JSON and calls within the limit.
        case batch(answersSomething: Bool)
    }

    private static func check(_ body: [UInt8], maximumCalls: Int) -> Check {
        guard var elements = JSONValue.ArrayElements(body) else {
            do {
                return .whole(JSONRPCEntry.entry(try JSONValue.parse(body)))
            } catch {
                return .whole(JSONRPCEntry.parseError(error))
            }
        }
        var count = 0
        var answers = false
        do {
            while let element = try elements.next() {
                count += 1
                guard count <= maximumCalls else { return .whole(.invalid(tooMany(maximumCalls))) }
                if !answers, !JSONRPCEntry.entry(element).isNotification { answers = true }
            }
        } catch {
            return .whole(JSONRPCEntry.parseError(error))
        }
        guard count > 0 else {
            return .whole(.invalid(JSONRPCError(code: -32600, message: "Invalid Request", detail: "A batch holds at least one call.")))
        }
        return .batch(answersSomething: answers)
    }

    /// The next call; `nil` after the last.
    mutating func next() -> JSONRPCEntry? {
        if let entry = single {
            single = nil
            return entry
        }
        // The batch was read whole once already: its elements parse.
        guard let element = try? elements?.next() else { return nil }
        return JSONRPCEntry.entry(element)
    }

    /// The error of a batch of more calls than `limit`: `-32600`, its
    /// `data` the problem document that names the limit.
    private static func tooMany(_ limit: Int) -> JSONRPCError {
        let problem = RequestLimits.exceeded(
            "batchCalls", limit: limit, detail: "A batch holds at most \(limit) calls; this one holds more, and none of them ran.")
        return JSONRPCError(code: -32600, message: "Invalid Request", data: problem.problemJSON)
    }
}
