/// The table a list reads and the columns by which its rows are known (a
/// primary key): what a list needs to be followed live (docs/LIVE.md). A
/// ``Resource`` with a schema and a ``Resource/key`` has one.
///
/// The columns are the labels of the list's statement, in the order of
/// the table's primary key, which is the order the triggers of `live.sql`
/// send the key in.
///
/// ```swift
/// ListKey(table: "employees", columns: ["employeeNumber"]).relation   // "public.employees"
/// ```
public struct ListKey: Sendable, Hashable {
    /// The table, as `schema.name` (unquoted, as PostgreSQL names it).
    public var relation: String
    /// The labels of the key's columns, in the primary key's order.
    public var columns: [String]

    /// The key `columns` of `table` (`schema.name`, or a name in `public`).
    ///
    /// ```swift
    /// ListKey(table: "hr.salaries", columns: ["employeeNumber", "fromDate"])
    /// ```
    public init(table: String, columns: [String]) {
        self.relation = table.contains(".") ? table : "public." + table
        self.columns = columns
    }
}

extension Resource {
    /// The table and key a list of this resource is followed by: its
    /// schema and name, and ``key``; `nil` without either.
    public var listKey: ListKey? {
        guard let schema, !key.isEmpty else { return nil }
        return ListKey(table: schema + "." + name, columns: key)
    }
}
