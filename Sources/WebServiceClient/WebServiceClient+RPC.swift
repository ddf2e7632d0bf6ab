import Foundation

// MARK: - Functions of the database, as PostgREST serves them

extension WebServiceClient {
    /// `POST /rpc/function` with `arguments` as a JSON object of named
    /// arguments; the answer decoded as `type`: the bare value of a scalar
    /// function (`3`), the object of one returning a row, the array of a
    /// set-returning one, which `query` filters, orders, shapes (`select`)
    /// and pages as a table's rows. A function returning nothing answers
    /// 204 with no body: ask for `Data` (empty) or an optional (`nil`).
    ///
    /// ```swift
    /// let sum = try await client.rpc("add_them", ["a": 1, "b": 2], as: Int.self)
    /// let late = try await client.rpc(
    ///     "overdue_tasks", Cutoff(day: "2024-05-01"), query: ListQuery().where("priority", .gte(2)).page(limit: 10),
    ///     as: [Task].self)
    /// ```
    public func rpc<Arguments: Encodable, Result: Decodable>(
        _ function: String, _ arguments: Arguments = [String: String](), query: ListQuery = ListQuery(),
        headers: [String: String] = [:], as type: Result.Type = Result.self
    ) async throws -> Result {
        let request = WebServiceRequest(
            .post, try Self.rpcPath(function), arguments: query.arguments, body: try .json(arguments), headers: headers)
        return try await send(request).decode(Result.self)
    }

    /// `GET /rpc/function?name=value…`, for a function that only reads
    /// (`STABLE` or `IMMUTABLE`): the arguments in the query, as every GET
    /// sends them (a list as a repeated name), then `query`'s; the answer
    /// decoded as ``rpc(_:_:query:headers:as:)`` decodes it. A GET may be
    /// answered from the cache and is retried by ``WebServiceHook/retry(_:)``.
    ///
    /// ```swift
    /// let hired = try await client.rpc("hired_since", reading: ["day": "1999-01-01"], query: ListQuery().page(limit: 5), as: [Hire].self)
    /// ```
    public func rpc<Result: Decodable>(
        _ function: String, reading arguments: RequestArguments, query: ListQuery = ListQuery(), headers: [String: String] = [:],
        as type: Result.Type = Result.self
    ) async throws -> Result {
        let request = WebServiceRequest(
            .get, try Self.rpcPath(function), arguments: RequestArguments(arguments.elements + query.arguments.elements),
            headers: headers)
        return try await send(request).decode(Result.self)
    }

    /// `/rpc/function`, the name escaped as one path segment; an empty name is `.invalidRequest`.
    static func rpcPath(_ function: String) throws -> String {
        guard !function.isEmpty, let segment = function.addingPercentEncoding(withAllowedCharacters: .rpcNameAllowed) else {
            throw WebServiceError(.invalidRequest, detail: "A function's name is not empty.", parameter: "function")
        }
        return "/rpc/" + segment
    }
}

extension CharacterSet {
    /// What a function's name keeps unescaped in its path segment: no
    /// `{` or `}`, which the request's path reads as a variable.
    static let rpcNameAllowed = CharacterSet.pathSegmentAllowed.subtracting(CharacterSet(charactersIn: "{}"))
}
