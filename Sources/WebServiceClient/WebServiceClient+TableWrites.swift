import Foundation

/// What a table write answers besides its status (`Prefer: return=…`),
/// with the type its rows decode as.
///
/// ```swift
/// try await client.insert("/projects", rows)                                          // .minimal: 201, no body
/// let made = try await client.insert("/projects", [new], returning: .headersOnly)      // made.location: /projects?id=eq.7
/// let rows = try await client.insert("/projects", rows, returning: .representation(Project.self)).rows
/// ```
public struct WriteReturn<Element: Decodable & Sendable>: Sendable {
    /// The value of `Prefer: return=`.
    public let preference: String

    /// The rows written, decoded as `type`: the query's `select` shapes them.
    public static func representation(_ type: Element.Type = Element.self) -> WriteReturn<Element> {
        WriteReturn(preference: "representation")
    }
}

extension WriteReturn where Element == Never {
    /// No body (the server's default).
    public static var minimal: WriteReturn<Never> { WriteReturn(preference: "minimal") }
    /// No body, and `Location` of the row when one was created.
    public static var headersOnly: WriteReturn<Never> { WriteReturn(preference: "headers-only") }
}

/// What a table write answered: the rows written when asked for them,
/// how many when counted, and where a created row is.
///
/// ```swift
/// let result = try await client.delete("/projects", ListQuery().where("status", .eq("done")), counted: true)
/// print(result.count ?? 0, "removed")
/// ```
public struct WriteResult<Element: Sendable>: Sendable {
    /// The answer's status: 201 for an insert, 200 or 204 otherwise.
    public var status: Int
    /// The rows written, decoded, with ``WriteReturn/representation(_:)``; empty otherwise.
    public var rows: [Element]
    /// How many rows were written, from `Content-Range`, when the call was
    /// `counted` (`Prefer: count=exact`); `nil` otherwise.
    public var count: Int?
    /// Where the one row an insert created is read again (`/projects?id=eq.7`),
    /// with ``WriteReturn/headersOnly``; `nil` otherwise.
    public var location: String?
}

// MARK: - Writes of a table's rows

extension WebServiceClient {
    /// `POST path` with `rows` as a JSON array: every row inserted by one
    /// statement, or none. The columns written are every member any row
    /// has (`columns=`, as PostgREST's JavaScript client sends it), unless
    /// `columns` names them: a column no row gives takes its default; one
    /// that some rows leave out (a `nil` optional) is NULL in those, or
    /// its default with `missingAsDefault` (`Prefer: missing=default`).
    /// `query`'s `select` shapes the rows a ``WriteReturn/representation(_:)``
    /// answers; a condition in it is refused by the server (400).
    ///
    /// ```swift
    /// try await client.insert("/projects", [NewProject(name: "a"), NewProject(name: "b", clientID: 2)])
    /// let made = try await client.insert(
    ///     "/projects", [NewProject(name: "c")], returning: .representation(Project.self), query: ListQuery().selecting("id", "name"))
    /// ```
    @discardableResult
    public func insert<Row: Encodable, Element: Decodable & Sendable>(
        _ path: String, _ rows: [Row], columns: [String]? = nil, missingAsDefault: Bool = false,
        returning: WriteReturn<Element> = .minimal, query: ListQuery = ListQuery(), counted: Bool = false,
        headers: [String: String] = [:]
    ) async throws -> WriteResult<Element> {
        try await insertRows(
            .post, path, rows: rows, columns: columns, onConflict: [], preferences: missingAsDefault ? ["missing=default"] : [],
            returning: returning, query: query, counted: counted, headers: headers)
    }

    /// `POST path` with `rows` as ``insert(_:_:columns:missingAsDefault:returning:query:counted:headers:)``
    /// sends them, where a row whose key is taken changes that row instead
    /// (`Prefer: resolution=merge-duplicates`: the members given replace
    /// its values) or, `ignoringDuplicates`, is left out
    /// (`resolution=ignore-duplicates`). The key is the primary key, or
    /// the unique columns `onConflict` names (`on_conflict=`).
    ///
    /// ```swift
    /// try await client.upsert("/projects", [Project(id: 1, name: "renamed")])
    /// try await client.upsert("/projects", [NewProject(name: "b")], onConflict: ["name"], ignoringDuplicates: true)
    /// ```
    @discardableResult
    public func upsert<Row: Encodable, Element: Decodable & Sendable>(
        _ path: String, _ rows: [Row], onConflict: [String] = [], ignoringDuplicates: Bool = false, columns: [String]? = nil,
        missingAsDefault: Bool = false, returning: WriteReturn<Element> = .minimal, query: ListQuery = ListQuery(),
        counted: Bool = false, headers: [String: String] = [:]
    ) async throws -> WriteResult<Element> {
        var preferences = [ignoringDuplicates ? "resolution=ignore-duplicates" : "resolution=merge-duplicates"]
        if missingAsDefault { preferences.append("missing=default") }
        return try await insertRows(
            .post, path, rows: rows, columns: columns, onConflict: onConflict, preferences: preferences, returning: returning,
            query: query, counted: counted, headers: headers)
    }

    /// `PATCH path` with `changes` as a JSON object, on the rows `query`'s
    /// conditions select: the members given are the columns changed, the
    /// others keep their values (a `nil` optional, left out by the encoder,
    /// changes nothing). A query without conditions is refused by the
    /// server (400): no call changes every row by leaving them out.
    ///
    /// ```swift
    /// let done = try await client.update(
    ///     "/projects", ListQuery().where("id", .in([4, 5])), set: ["status": "done"], returning: .representation(Project.self))
    /// ```
    @discardableResult
    public func update<Changes: Encodable, Element: Decodable & Sendable>(
        _ path: String, _ query: ListQuery, set changes: Changes, returning: WriteReturn<Element> = .minimal, counted: Bool = false,
        headers: [String: String] = [:]
    ) async throws -> WriteResult<Element> {
        try await write(
            .patch, path, body: try .json(changes), preferences: [], returning: returning, query: query, counted: counted,
            headers: headers)
    }

    /// `DELETE path` of the rows `query`'s conditions select. A query
    /// without conditions is refused by the server (400).
    ///
    /// ```swift
    /// let removed = try await client.delete("/projects", ListQuery().where("status", .eq("done")), counted: true).count
    /// ```
    @discardableResult
    public func delete<Element: Decodable & Sendable>(
        _ path: String, _ query: ListQuery, returning: WriteReturn<Element> = .minimal, counted: Bool = false,
        headers: [String: String] = [:]
    ) async throws -> WriteResult<Element> {
        try await write(.delete, path, body: nil, preferences: [], returning: returning, query: query, counted: counted, headers: headers)
    }

    // MARK: - Sending a write

    /// `method path` with `rows` as a JSON array, `columns=` and `on_conflict=` after the query's arguments.
    private func insertRows<Row: Encodable, Element: Decodable & Sendable>(
        _ method: WebServiceRequest.Method, _ path: String, rows: [Row], columns: [String]?, onConflict: [String],
        preferences: [String], returning: WriteReturn<Element>, query: ListQuery, counted: Bool, headers: [String: String]
    ) async throws -> WriteResult<Element> {
        let body = try WebServiceRequest.Body.json(rows)
        var own: [(name: String, value: RequestArgumentValue)] = []
        if let names = try columns ?? Self.memberNames(of: body.data), !names.isEmpty {
            own.append(("columns", .string(names.joined(separator: ","))))
        }
        if !onConflict.isEmpty { own.append(("on_conflict", .string(onConflict.joined(separator: ",")))) }
        return try await write(
            method, path, body: body, preferences: preferences, returning: returning, query: query, own: own, counted: counted,
            headers: headers)
    }

    /// The write: the query's conditions and `select`, then `own`, in the
    /// URL; the preferences (the return, the count) after the caller's
    /// `Prefer`. A query with an order or a page is `.invalidRequest`: the
    /// server would read them as conditions of none (`order=id` alone
    /// would select every row).
    private func write<Element: Decodable & Sendable>(
        _ method: WebServiceRequest.Method, _ path: String, body: WebServiceRequest.Body?, preferences: [String],
        returning: WriteReturn<Element>, query: ListQuery, own: [(name: String, value: RequestArgumentValue)] = [], counted: Bool,
        headers: [String: String]
    ) async throws -> WriteResult<Element> {
        var preferences = preferences + ["return=" + returning.preference]
        if counted { preferences.append("count=exact") }
        var headers = headers
        headers.addPreferences(preferences)
        let unwritable = [("order", !query.order.isEmpty), ("limit", query.limit != nil), ("offset", query.offset != nil)]
        if let name = unwritable.first(where: \.1)?.0 {
            throw WebServiceError(
                .invalidRequest, detail: "A write takes conditions and select; it is not ordered nor paged (\(name)).", parameter: name)
        }
        let arguments = RequestArguments(query.arguments.elements + own)
        let response = try await send(WebServiceRequest(method, path, arguments: arguments, body: body, headers: headers))
        let rows = returning.preference == "representation" ? try response.decode([Element].self) : []
        return WriteResult(
            status: response.status, rows: rows, count: counted ? response.contentRangeTotal : nil, location: response.header("Location"))
    }

    /// Every member name of the objects of the JSON array `data`, sorted;
    /// `nil` when it is not an array of objects.
    static func memberNames(of data: Data) throws -> [String]? {
        guard let objects = try JSONSerialization.jsonObject(with: data) as? [[String: Any]] else { return nil }
        return Set(objects.flatMap(\.keys)).sorted()
    }
}

// MARK: - Shared with lists

extension [String: String] {
    /// `Prefer` with `preferences` after any the caller gave (in any case of its name).
    mutating func addPreferences(_ preferences: [String]) {
        guard !preferences.isEmpty else { return }
        let existing = keys.first { $0.caseInsensitiveCompare("Prefer") == .orderedSame }
        let given = existing.flatMap { removeValue(forKey: $0) }
        self["Prefer"] = ([given].compactMap { $0 } + preferences).joined(separator: ", ")
    }
}

extension WebServiceResponse {
    /// The count after the `/` of `Content-Range` (`0-9/300024`, `*/3`);
    /// `nil` when absent or `*`.
    var contentRangeTotal: Int? {
        header("Content-Range").flatMap { $0.split(separator: "/").last.flatMap { Int($0) } }
    }
}
