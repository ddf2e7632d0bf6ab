import HTTPServer
import PostgreSQL
import WebService

// MARK: - Pages, counts and the row cap of lists

extension Query {
    /// A list as it runs for one request: its statement with the page
    /// applied, and what the answer says of the page.
    struct ListPage {
        var sql: String
        var arguments: SQLArguments
        /// The first row's position in the whole list.
        var offset: Int
        /// At most this many rows; `nil`: all from `offset` on.
        var limit: Int?
        /// The rows of the whole list, when a count was asked for.
        var total: Int?
        /// The count that was made, for `Preference-Applied`.
        var count: ReadPreferences.Count?
        /// `Link` to the next and previous pages, when the request paged by `limit`.
        var links: String?

        /// `Content-Range` for `shown` rows from `offset` (`*` when none), over the total or `*`.
        func contentRange(shown: Int) -> String {
            let range = shown > 0 ? "\(offset)-\(offset + shown - 1)" : "*"
            return range + "/" + (total.map(String.init) ?? "*")
        }

        /// The rows the answer holds, when the count tells it.
        var shownByCount: Int? {
            total.map { total in max(0, min(limit ?? Int.max, total - offset)) }
        }
    }

    /// This list's page for `request` on `connection`: the page of the
    /// route's `limit` and `offset` and of a `Range` header (their
    /// intersection, when both), capped by the runner's row limit, and,
    /// when `Prefer` asks, the count of its rows. A range that begins past
    /// the rows counted is a 416.
    func listPage(
        runner: QueryRunner, request: RoutedRequest, preferences: ReadPreferences, access: Access, connection: Connection?
    ) throws -> ListPage {
        var limit = page?.limit
        var offset = page?.offset ?? 0
        if let limit, limit < 0 {
            throw HTTPError(.badRequest, detail: "The parameter \"limit\" must be 0 or more; received \(limit).", parameter: "limit")
        }
        guard offset >= 0 else {
            throw HTTPError(.badRequest, detail: "The parameter \"offset\" must be 0 or more; received \(offset).", parameter: "offset")
        }
        if let range = preferences.range {
            // The rows both ask for; sums past Int.max (a range to 2^63 - 1) stop there.
            let end = limit.map { Self.saturating(offset, plus: $0 - 1) }
            let rangeEnd = range.last
            offset = max(offset, range.first)
            let last = [end, rangeEnd].compactMap { $0 }.min()
            limit = last.map { max(0, Self.saturating($0 - offset, plus: 1)) }
        }
        if let maxRows = runner.maxRows { limit = min(limit ?? maxRows, maxRows) }
        var page = ListPage(sql: sql, arguments: arguments, offset: offset, limit: limit)
        if let count = preferences.count {
            guard let connection else { throw DatabaseError(code: .internalError, message: "a count needs a connection") }
            page.total = try self.count(count, threshold: runner.maxRows ?? 1_000, access: access, on: connection)
            page.count = count
        }
        if let total = page.total, offset > 0, offset >= total {
            throw HTTPError(
                .rangeNotSatisfiable, detail: "The range begins at row \(offset), past the \(total) rows there are.", code: "PGRST103",
                details: "An offset of \(offset) was asked for, but there are only \(total) rows.", headers: ["Content-Range": "*/\(total)"]
            )
        }
        if self.page != nil, let limit {
            page.links = Self.links(request: request, limit: limit, offset: offset, total: page.total)
        }
        guard limit != nil || offset > 0 else { return page }
        page.arguments[value: "pageLimit"] = limit?.sqlValue ?? .null  // NULL: no limit
        page.arguments["pageOffset"] = offset
        if self.page != nil {
            // A list the route pages orders its rows itself, and has no LIMIT of its own.
            page.sql = Self.withoutTrailingSemicolons(sql) + "\nLIMIT :pageLimit OFFSET :pageOffset"
        } else {
            // The closing parenthesis on a line of its own: the SQL may end with a `--` comment.
            page.sql = Self.limited(sql, as: "paged", limit: ":pageLimit OFFSET :pageOffset")
        }
        return page
    }

    /// The rows of the whole list as `count` counts them, on `connection`
    /// with `access` (whose role's row-level security decides what it
    /// counts). It binds the list's own parameters only: the arguments may
    /// also hold values for embedded statements.
    private func count(_ count: ReadPreferences.Count, threshold: Int, access: Access, on connection: Connection) throws -> Int {
        let (source, arguments) = counted ?? (sql, self.arguments)
        var bound = SQLArguments()
        for name in StatementShape.of(source).parameters.names {
            if let value = arguments[value: name] { bound[value: name] = value }
        }
        let body = Self.withoutTrailingSemicolons(source)
        func exact() throws -> Int {
            let rows = try connection.query("SELECT count(*) AS count FROM (\(body)\n) AS counted", bound, access: access)
            defer { rows.close() }
            return try rows.next()?.decode(Int.self) ?? 0
        }
        func planned() throws -> Int {
            let rows = try connection.query("EXPLAIN (FORMAT JSON) \(body)", bound, access: access)
            defer { rows.close() }
            var plan = ""
            while let row = try rows.next() { plan += row[0] ?? "" }
            return Self.plannedRows(plan)
        }
        switch count {
        case .exact: return try exact()
        case .planned: return try planned()
        case .estimated:
            let estimate = try planned()
            return estimate > threshold ? estimate : try exact()
        }
    }

    /// The first `"Plan Rows"` of `EXPLAIN (FORMAT JSON)`'s output: the top node's estimate.
    static func plannedRows(_ plan: String) -> Int {
        guard let key = plan.firstRange(of: "\"Plan Rows\":") else { return 0 }
        let digits = plan[key.upperBound...].drop { $0 == " " }.prefix { $0.isNumber }
        return Int(digits) ?? 0
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

    /// `value + addend`, or `Int.max` (`Int.min`) past it.
    static func saturating(_ value: Int, plus addend: Int) -> Int {
        let (sum, overflow) = value.addingReportingOverflow(addend)
        guard overflow else { return sum }
        return addend > 0 ? .max : .min
    }

    /// `sql` as a subquery named `alias`, its rows cut by `limit` (SQL:
    /// `:pageLimit`, say). The closing parenthesis is on a line of its
    /// own: the SQL may end with a `--` comment.
    static func limited(_ sql: String, as alias: String, limit: String) -> String {
        "SELECT * FROM (\(withoutTrailingSemicolons(sql))\n) AS \(alias) LIMIT \(limit)"
    }

    static func withoutTrailingSemicolons(_ sql: String) -> String {
        var end = sql.endIndex
        while end > sql.startIndex, let last = sql[..<end].last, last == ";" || last.isWhitespace {
            end = sql.index(before: end)
        }
        return String(sql[..<end])
    }
}
