/// The rule for a role a request may act as: a name that PostgreSQL's
/// `set_config('role', name, true)` reads as that role and nothing else.
///
/// `none` makes PostgreSQL fall back to the login role (the server's own,
/// with every grant the server has); `public`, `current_user` and the
/// like are keywords rather than roles; names beginning with `pg_` are
/// PostgreSQL's own roles (`pg_read_all_data`); and a name longer than 63
/// bytes would be cut to another. A role map, a token's claim, a user
/// name or the anonymous role naming one of these is refused.
///
/// ```swift
/// DatabaseRoleName.problem(with: "none")      // "is a keyword PostgreSQL reads as no role …"
/// DatabaseRoleName.problem(with: "payroll")   // nil
/// ```
public enum DatabaseRoleName {
    /// Words that PostgreSQL reads as something other than a role of that name.
    static let keywords: Set<String> = ["none", "public", "current_user", "current_role", "session_user", "all", "default"]
    /// The longest name PostgreSQL keeps whole (`NAMEDATALEN` - 1).
    static let longestName = 63

    /// Why `role` cannot be a request's role; `nil` when it can.
    public static func problem(with role: String) -> String? {
        if role.isEmpty { return "is empty" }
        if role.utf8.contains(0) { return "contains NUL" }
        let lowercased = role.lowercased()
        if keywords.contains(lowercased) { return "is a keyword PostgreSQL reads as no role, or as another role than its name" }
        if lowercased.hasPrefix("pg_") { return "begins with pg_, which PostgreSQL reserves for its own roles" }
        if role.utf8.count > longestName { return "is longer than PostgreSQL's \(longestName) bytes" }
        return nil
    }
}
