import HTTPServer
import PostgreSQL
import WebService

/// A list as an event stream follows it: the list as it runs for the
/// caller (its filters, order, members and embeds resolved), the table
/// and key its rows are known by, and how to read the rows of some keys
/// again (the same statement, narrowed to those keys); or, for a list
/// that relays a channel (``Query/listening(to:)``), the channel.
///
/// ```swift
/// let list = try LiveList(query)            // the query a route returned
/// list.keyed([LiveKey(["10001"])]).sql      // … WHERE "t0"."employeeNumber" = ANY(:readValue1)
/// ```
struct LiveList: Sendable {
    /// What the rows of the list follow.
    enum Source: Sendable {
        /// The changes of the table, by key; the names its rows write the key's columns under.
        case table(ListKey, keyNames: [String])
        /// The notifications of a channel, relayed as they are.
        case channel(String)
    }

    let source: Source
    /// The query as the route returned it.
    let query: Query
    /// The list as it runs: what its snapshot and every reading of it run.
    let resolved: Query
    /// What the callers of one group share: the source, the statement,
    /// its values and its embeds (the role is the group's other half).
    let fingerprint: String

    /// The list `query` follows; a problem when it cannot be followed: no
    /// known key (406), a page (400 naming `limit` or `offset`), a
    /// `select` without the key's columns (400 naming `select`), or more
    /// parameters than PostgreSQL binds (400).
    init(_ query: Query) throws(HTTPError) {
        guard query.isList else {
            throw HTTPError(
                .notAcceptable, detail: "An event stream follows a list; this operation answers one object.", code: "PGRST107",
                hint: "Ask for application/json.")
        }
        if let page = query.page, page.limit != nil || page.offset != 0 {
            let parameter = page.limit != nil ? "limit" : "offset"
            throw HTTPError(
                .badRequest, detail: "An event stream follows the whole list: it takes no \(parameter).", parameter: parameter)
        }
        if let reading = query.reading, reading.pagesRoot {
            throw HTTPError(.badRequest, detail: "An event stream follows the whole list: it takes no limit or offset.", parameter: "limit")
        }
        self.query = query
        resolved = try query.resolvingChoices()
        if let channel = query.channel {
            source = .channel(channel)
        } else if let reading = query.reading {
            guard let key = reading.rootResource.listKey else { throw Self.noKey }
            guard let names = reading.writtenNames(of: key.columns) else { throw Self.keyNotSelected(key) }
            source = .table(key, keyNames: names)
        } else {
            throw Self.noKey
        }
        var parts: [String] = []
        switch source {
        case .table(let key, _): parts.append(key.relation)
        case .channel(let channel): parts.append("channel " + channel)
        }
        Self.describe(resolved, into: &parts)
        fingerprint = parts.joined(separator: "\u{0}")
    }

    private static var noKey: HTTPError {
        HTTPError(
            .notAcceptable, detail: "This list cannot be followed as an event stream: its rows have no known key.",
            code: "PGRST107", hint: "Ask for application/json.")
    }

    private static func keyNotSelected(_ key: ListKey) -> HTTPError {
        HTTPError(
            .badRequest,
            detail: "An event stream names its rows by their key: select must hold \(key.columns.joined(separator: ", ")) as "
                + (key.columns.count == 1 ? "it is" : "they are") + " (an alias may rename \(key.columns.count == 1 ? "it" : "them")).",
            parameter: "select")
    }

    /// The statement, values and embeds of `query`, depth first.
    private static func describe(_ query: Query, into parts: inout [String]) {
        parts.append(query.sql)
        for name in query.arguments.names.sorted() {
            parts.append(name + "=" + (query.arguments[value: name]?.text ?? "\u{1}NULL"))
        }
        for embed in query.embeds {
            parts.append("embed \(embed.key) \(embed.kind)")
            describe(embed.query, into: &parts)
        }
    }

    /// The table, or `nil` for a channel.
    var key: ListKey? {
        if case .table(let key, _) = source { return key }
        return nil
    }

    /// The names the rows write the key's columns under.
    var keyNames: [String] {
        if case .table(_, let names) = source { return names }
        return []
    }

    /// The list narrowed to the rows of `keys` (and perhaps a few others,
    /// when the key has several columns: the caller keeps only the keys
    /// it asked for).
    func keyed(_ keys: [LiveKey]) throws(HTTPError) -> Query {
        guard let key else { return resolved }
        var values = Array(repeating: [String](), count: key.columns.count)
        var seen = Array(repeating: Set<String>(), count: key.columns.count)
        for rowKey in keys {
            for (index, value) in rowKey.values.enumerated() where index < values.count && seen[index].insert(value).inserted {
                values[index].append(value)
            }
        }
        guard let reading = query.reading else { return resolved }
        var narrowed = query
        narrowed.reading = reading.narrowed(key.columns, to: values)
        return try narrowed.resolvingChoices()
    }
}
