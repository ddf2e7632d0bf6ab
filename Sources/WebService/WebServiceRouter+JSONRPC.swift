import HTTPServer
import JSONStreaming

/// JSON-RPC 2.0 at `POST /jsonrpc`: every operation of every mounted
/// service is a method named by its OpenAPI `operationId`
/// (`employees.getByEmployeeNumber`, `math.getSum`), its params by name
/// or by position: an array's elements are bound to the operation's
/// params in their declared order (``JSONRPCMethods/Method/params(byPosition:methodName:)``),
/// and then handled as the same params by name would be, so that a
/// required param left out is the same -32602 naming it.
///
/// A call becomes the request its route would get (path variables in the
/// path, the other params as the members of a JSON object body, or the
/// `body` param as the body of a route that takes one) and goes through
/// the same dispatch, overload choice, conversion and handler, so that it
/// behaves exactly as REST does. A 2xx answer is the `result`; a problem
/// is an error whose `data` is the problem document (`status`, `detail`,
/// `parameter`): 400 is -32602, 500 is -32603, any other status -32000.
///
/// Calls are parsed, run and answered one after the other while the
/// response is written (``JSONRPCCalls``), and a streamed list is written
/// into the response as its rows arrive, so a batch holds at most one
/// database connection, and its memory is its body's and one call's,
/// whatever its length and however slowly its client reads. Its limits
/// (``RequestLimits``): a body over `jsonRPCBytes` is answered 413 (before
/// it is read, by a server configured with ``maximumBodySizeByPath``); a
/// batch of more than `batchCalls` calls is answered with one error,
/// `-32600`, whose `data` names the limit, and none of its calls runs. A
/// list is returned whole in its `result`, so the client receives all of it
/// (no paging unless asked with `limit`/`offset`), and a failure in the
/// middle of a streamed list cuts the response off, as it does for REST.
extension WebServiceRouter {
    /// The path of the JSON-RPC endpoint.
    static let jsonRPCPath = ["jsonrpc"]

    func respondWithJSONRPC(to request: consuming HTTPRequest) throws -> HTTPResponse {
        switch request.method {
        case .post:
            break
        case .options:
            return HTTPResponse(status: .noContent, headers: ["Allow": "POST, OPTIONS"])
        default:
            throw HTTPError(
                .methodNotAllowed, detail: "\(request.method) is not allowed on /jsonrpc; use POST, OPTIONS.",
                headers: ["Allow": "POST, OPTIONS"])
        }
        // A browser sends a form or text/plain to another site without asking it first
        // (CORS): accepting only JSON keeps a page elsewhere from calling as its user.
        guard request.contentType == "application/json" else {
            throw HTTPError(
                .unsupportedMediaType,
                detail: "/jsonrpc accepts application/json only; received \(request.contentType.map { "\"\($0)\"" } ?? "no Content-Type").",
                headers: ["Accept-Post": "application/json"])
        }
        // The server refuses a larger body before reading it (`maximumBodySizeByPath`); this router may serve without one.
        guard request.bodySize <= limits.jsonRPCBytes else {
            throw HTTPError(
                .contentTooLarge, detail: "The request body is larger than the limit of \(limits.jsonRPCBytes) bytes for /jsonrpc.")
        }
        let body = request.body
        var outer = request
        outer.body = []
        // On a worker: reading a batch through once, to check it, takes as long as its body is, and the loop serves others.
        return HTTPResponse.blocking { [outer, limits] in
            let response = JSONRPCResponseBody(router: self, calls: JSONRPCCalls(body, maximumCalls: limits.batchCalls), outer: outer)
            guard response.answersSomething else {
                // Nothing to answer: the calls run, then 204.
                var ignored: [UInt8] = []
                while (try? response.write(into: &ignored)) == true { ignored.removeAll(keepingCapacity: true) }
                response.close()
                return HTTPResponse(status: .noContent)
            }
            return HTTPResponse(status: .ok, headers: ["Content-Type": HTTPResponse.jsonContentType], body: .stream(response))
        }
    }

    /// One call's answer, as it goes in the response: `nil` for a notification.
    func answer(_ entry: JSONRPCEntry, outer: HTTPRequest) -> [ConcatenatedBody.Part]? {
        switch entry {
        case .invalid(let error):
            return [.bytes(JSONRPCEntry.envelope(id: .null, error: error))]
        case .call(let method, let params, let id):
            let outcome = call(method, params: params, outer: outer)
            guard let id else {
                if case .result(.stream(let body)) = outcome { body.close() }
                return nil
            }
            switch outcome {
            case .result(let part):
                var head: [UInt8] = []
                head.append(contentsOf: #"{"jsonrpc":"2.0","id":"#.utf8)
                id.append(to: &head)
                head.append(contentsOf: #","result":"#.utf8)
                return [.bytes(head), part, .bytes(Array("}".utf8))]
            case .error(let error):
                return [.bytes(JSONRPCEntry.envelope(id: id, error: error))]
            }
        }
    }

    private enum Outcome {
        case result(ConcatenatedBody.Part)
        case error(JSONRPCError)
    }

    /// Runs one call through the route table; on a thread that may block.
    private func call(_ name: String, params: JSONValue?, outer: HTTPRequest) -> Outcome {
        if name == "rpc.discover" {
            return .result(.bytes(jsonRPCMethods.value.openRPC))
        }
        guard let method = jsonRPCMethods.value.methods[name] else {
            return .error(JSONRPCError(code: -32601, message: "Method not found", detail: "There is no method \(name)."))
        }
        let members: JSONValue.Members
        switch params {
        case nil: members = [:]
        case .object(let object)?: members = object
        case .array(let elements)?:
            switch method.params(byPosition: elements, methodName: name) {
            case .success(let named): members = named
            case .failure(let error): return .error(error)
            }
        default:
            return .error(JSONRPCError(code: -32602, message: "Invalid params", detail: "The params must be an object or an array."))
        }
        let request: HTTPRequest
        do {
            request = try Self.request(for: method, params: members, outer: outer)
        } catch {
            return .error(JSONRPCError(code: -32602, message: "Invalid params", data: error.problemJSON))
        }
        let response = respond(to: request).resolved()
        guard (200..<300).contains(response.status.code) else {
            var problem: [UInt8] = []
            switch response.body {
            case .bytes(let bytes): problem = bytes
            case .stream(let body): body.close()
            case .empty: break
            }
            if problem.isEmpty { problem = HTTPError(response.status, detail: response.status.reasonPhrase).problemJSON }
            let code =
                switch response.status.code {
                case 400: -32602
                case 500: -32603
                default: -32000
                }
            let message =
                switch code {
                case -32602: "Invalid params"
                case -32603: "Internal error"
                default: response.status.reasonPhrase
                }
            return .error(JSONRPCError(code: code, message: message, data: problem))
        }
        let isJSON = response.headers["Content-Type"].map { $0.hasPrefix("application/json") || $0.contains("+json") } ?? false
        switch response.body {
        case .empty:
            return .result(.bytes(Array("null".utf8)))
        case .bytes(let bytes):
            if bytes.isEmpty { return .result(.bytes(Array("null".utf8))) }
            if isJSON { return .result(.bytes(bytes)) }
            var text: [UInt8] = []
            JSONWriter.appendString(String(decoding: bytes, as: UTF8.self), to: &text)
            return .result(.bytes(text))
        case .stream(let body):
            return .result(.stream(body))
        }
    }

    /// The request a call's route would get: the path's variables filled
    /// from the params named like them, the rest as a JSON object body (or
    /// the `body` param as the body, the rest in the query). The caller's
    /// header fields go along, but for those of its own body and its
    /// conditions (a call never answers 304). The call is derived from the
    /// outer request, so it carries the same identity: role, request id
    /// and address.
    static func request(for method: JSONRPCMethods.Method, params: JSONValue.Members, outer: HTTPRequest) throws(HTTPError) -> HTTPRequest {
        let names = method.pathVariableNames.first { $0.allSatisfy { params[$0] != nil } } ?? method.pathVariableNames[0]
        var remaining = params
        var segments: [String] = []
        var variable = 0
        for segment in method.segments {
            if let literal = segment {
                segments.append(literal)
                continue
            }
            let name = names[variable]
            variable += 1
            guard let value = params[name] else {
                throw HTTPError(.badRequest, detail: "The param \"\(name)\" is missing.", parameter: name)
            }
            guard let text = value.scalarText else {
                throw HTTPError(.badRequest, detail: "The param \"\(name)\" is a path variable: one string or number.", parameter: name)
            }
            segments.append(text)
            remaining[name] = nil
        }
        var headers = HTTPHeaders()
        for (name, value) in outer.headers.fields {
            switch name.lowercased() {
            case "content-type", "content-length", "transfer-encoding", "accept", "accept-encoding", "if-none-match",
                "if-match", "if-modified-since", "if-unmodified-since", "range":
                continue
            default:
                headers.add(name, value)
            }
        }
        headers["Accept"] = "application/json"
        var queryItems: [QueryItem] = []
        var body: [UInt8] = []
        if method.takesBody {
            if let value = remaining["body"] {
                value.append(to: &body)
                remaining["body"] = nil
            }
            for (name, member) in remaining.members.sorted(by: { $0.key < $1.key }) {
                let values: [JSONValue] = if case .array(let elements) = member { elements } else { [member] }
                for value in values {
                    guard let text = value.scalarText else {
                        throw HTTPError(
                            .badRequest, detail: "The param \"\(name)\" must be a string, number or boolean, or a list of them.",
                            parameter: name)
                    }
                    queryItems.append(QueryItem(name: name, value: text))
                }
            }
        } else if !remaining.isEmpty {
            JSONValue.object(remaining).append(to: &body)
        }
        if !body.isEmpty { headers["Content-Type"] = "application/json" }
        let rawPath = "/" + segments.map(ServiceDocumentation.percentEncoded).joined(separator: "/")
        return outer.redirected(
            method: method.httpMethod, rawPath: rawPath, pathSegments: segments,
            rawQuery: queryItems.isEmpty ? nil : "", queryItems: queryItems, headers: headers, body: body)
    }
}
