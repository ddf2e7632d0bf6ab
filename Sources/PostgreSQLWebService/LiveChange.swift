import WebService

/// A committed change as the triggers of `live.sql` (`sql-rest init
/// --live`) send it on the feed's channel: the table, the operation, the
/// keys of the row before and after, and the keys of the rows it refers
/// to by its foreign keys, before and after. No row's values: the feed
/// reads the rows again, as each caller may see them.
///
/// ```json
/// {"relation":"public.salaries","op":"UPDATE","keys":[["10001","1986-06-26"]],"refs":{"public.employees":[["10001"]]}}
/// ```
///
/// A payload too long for PostgreSQL's limit, and a `TRUNCATE`, carry no
/// keys (`"whole":true`): any row of the table may have changed.
///
/// ```swift
/// let change = LiveChange(payload: #"{"relation":"public.items","op":"DELETE","keys":[["7"]]}"#)
/// change?.keys   // [LiveKey(["7"])]
/// ```
struct LiveChange: Sendable {
    /// The table, `schema.name`.
    let relation: String
    /// The keys of the changed row, before and after (one when they are the same).
    let keys: [LiveKey]
    /// The keys of the rows it refers to, by the referred table (`schema.name`).
    let references: [String: [LiveKey]]
    /// Every row of the table may have changed.
    let isWhole: Bool

    /// The change a payload describes; `nil` for one that does not read as such.
    init?(payload: String) {
        guard let document = try? JSONValue.parse(Array(payload.utf8)), case .string(let relation)? = document["relation"] else {
            return nil
        }
        self.relation = relation
        if case .bool(true)? = document["whole"] {
            isWhole = true
            keys = []
            references = [:]
            return
        }
        guard let keys = Self.keys(document["keys"]) else { return nil }
        self.keys = keys
        var references: [String: [LiveKey]] = [:]
        if case .object(let members)? = document["refs"] {
            for (table, value) in members {
                guard let keys = Self.keys(value) else { return nil }
                references[table, default: []] += keys
            }
        }
        self.references = references
        isWhole = false
    }

    /// An array of keys, each an array of texts (a number or a null is
    /// taken as its text: a hand-written trigger may send them so).
    private static func keys(_ value: JSONValue?) -> [LiveKey]? {
        guard case .array(let items)? = value else { return nil }
        var keys: [LiveKey] = []
        for item in items {
            guard case .array(let parts) = item, !parts.isEmpty else { return nil }
            var values: [String] = []
            for part in parts {
                switch part {
                case .string(let text): values.append(text)
                case .integer(let number): values.append(String(number))
                case .number(let number): values.append(String(number))
                case .bool(let flag): values.append(flag ? "true" : "false")
                default: return nil
                }
            }
            keys.append(LiveKey(values))
        }
        return keys
    }
}
