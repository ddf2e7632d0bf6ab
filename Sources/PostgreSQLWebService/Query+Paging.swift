import HTTPServer
import PostgreSQL
import WebService

// MARK: - Pages, counts and the row cap of lists

extension Query {
    /// A list's statement as run: its page and the runner's row cap applied,
    /// with the response's header fields (`Link` to the next and previous
    /// pages, and `Content-Range` when `Prefer: count=exact` asks for a count).
    func listStatement(
        runner: QueryRunner, request: RoutedRequest, access: Access, pool: ConnectionPool
    ) throws -> (sql: String, arguments: SQLArguments, headers: HTTPHeaders) {
        var headers: HTTPHeaders = ["Content-Type": "application/json"]
        var limit = page?.limit
        let offset = page?.offset ?? 0
        if let limit, limit < 0 {
            throw HTTPError(.badRequest, detail: "The parameter \"limit\" must be 0 or more; received \(limit).", parameter: "limit")
        }
        guard offset >= 0 else {
            throw HTTPError(.badRequest, detail: "The parameter \"offset\" must be 0 or more; received \(offset).", parameter: "offset")
        }
        if let maxRows = runner.maxRows { limit = min(limit ?? maxRows, maxRows) }

        let total = Self.asksForCount(request.headers) ? try count(on: pool, access: access) : nil
        if let total {
            let shown = max(0, min(limit ?? Int.max, total - offset))
            headers.add("Content-Range", shown == 0 ? "*/\(total)" : "\(offset)-\(offset + shown - 1)/\(total)")
        }
        guard limit != nil || offset > 0 else { return (sql, arguments, headers) }

        var arguments = self.arguments
        arguments[value: "pageLimit"] = limit?.sqlValue ?? .null  // NULL: no limit
        guard page != nil else {
            // The runner's cap on a list that does not page: the query as a subquery.
            // The closing parenthesis on a line of its own: the SQL may end with a `--` comment.
            return ("SELECT * FROM (\(Self.withoutTrailingSemicolons(sql))\n) AS capped LIMIT :pageLimit", arguments, headers)
        }
        if let limit, let links = Self.links(request: request, limit: limit, offset: offset, total: total) {
            headers.add("Link", links)
        }
        arguments["pageOffset"] = offset
        return (Self.withoutTrailingSemicolons(sql) + "\nLIMIT :pageLimit OFFSET :pageOffset", arguments, headers)
    }

    /// The number of rows of the whole list, on a connection of its own from
    /// `pool`, with `access` (whose role's row-level security decides what it counts).
    /// It binds the list's own parameters only: the arguments may also hold
    /// values for attached subqueries.
    private func count(on pool: ConnectionPool, access: Access) throws -> Int {
        var counted = SQLArguments()
        for name in StatementShape.of(sql).parameters.names {
            if let value = arguments[value: name] { counted[value: name] = value }
        }
        let countSQL = "SELECT count(*) AS count FROM (\(Self.withoutTrailingSemicolons(sql))\n) AS counted"
        return try pool.withConnection { connection in
            let rows = try connection.query(countSQL, counted, access: access)
            defer { rows.close() }
            return try rows.next()?.decode(Int.self) ?? 0
        }
    }

    /// Whether `Prefer` asks for `count=exact` (RFC 7240 preferences, as PostgREST reads them).
    static func asksForCount(_ headers: HTTPHeaders) -> Bool {
        headers.values(for: "Prefer").contains { value in
            value.split(separator: ",").contains { $0.filter { $0 != " " && $0 != "\t" }.lowercased() == "count=exact" }
        }
    }

    /// `Link` to the next page, unless a count shows this is the last, and
    /// to the previous one after the first: the request's own path and
    /// query, with `limit` and `offset` set.
    static func links(request: RoutedRequest, limit: Int, offset: Int, total: Int?) -> String? {
        let kept = (request.rawQuery ?? "").split(separator: "&").filter { item in
            let name = item.prefix { $0 != "=" }
            return name != "limit" && name != "offset"
        }
        func link(offset: Int, rel: String) -> String {
            let query = (kept + ["limit=\(limit)", "offset=\(offset)"]).joined(separator: "&")
            return "<\(request.rawPath)?\(query)>; rel=\"\(rel)\""
        }
        var links: [String] = []
        // No next page past the largest offset there can be (or past the count).
        let (next, overflows) = offset.addingReportingOverflow(limit)
        if limit > 0, !overflows, total.map({ next < $0 }) ?? true { links.append(link(offset: next, rel: "next")) }
        if offset > 0 { links.append(link(offset: max(0, offset - limit), rel: "prev")) }
        return links.isEmpty ? nil : links.joined(separator: ", ")
    }

    static func withoutTrailingSemicolons(_ sql: String) -> String {
        var end = sql.endIndex
        while end > sql.startIndex, let last = sql[..<end].last, last == ";" || last.isWhitespace {
            end = sql.index(before: end)
        }
        return String(sql[..<end])
    }
}
