import FoundationEssentials

/// The service files `sql-rest init` writes for a database: for each table
/// and view, `list.sql` (`GET /<table>`, paged, filtered and ordered by the
/// caller), and for each table with a primary key `one.sql`
/// (`GET /<table>/{key}`), with a detail for each table that refers to it;
/// with `writes`, `create.sql`, `update.sql` and `delete.sql` too.
///
/// Paths are the table's name with `_` written `-`; JSON keys and path
/// variables are the column names in lowerCamelCase. The texts of
/// `COMMENT ON` become the descriptions and `@param` texts. The files are
/// plain SQL a user reads, renames and edits: nothing is generated at run time.
///
/// ```swift
/// let files = ServiceScaffold(catalog: catalog, writes: true).files
/// // ["invoice-line/list.sql": "-- GET /invoice-line\n…", …]
/// ```
public struct ServiceScaffold: Sendable {
    public let catalog: DatabaseCatalog
    public let writes: Bool

    public init(catalog: DatabaseCatalog, writes: Bool = false) {
        self.catalog = catalog
        self.writes = writes
    }

    /// The relations no file is written for: a name of theirs (the schema's,
    /// the relation's, a column's) holds a control character, which no
    /// header line or label could carry faithfully.
    public var skipped: [DatabaseCatalog.Relation] {
        catalog.relations.filter { !Self.isWritable($0) }
    }

    static func isWritable(_ relation: DatabaseCatalog.Relation) -> Bool {
        ([relation.schema, relation.name] + relation.columns.map(\.name)).allSatisfy { name in
            name.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F }
        }
    }

    /// The files, by path below the output folder, in a stable order.
    public var files: [(path: String, text: String)] {
        var files: [(String, String)] = []
        for relation in catalog.relations where Self.isWritable(relation) {
            let folder = folderName(relation)
            files.append(("\(folder)/list.sql", list(relation)))
            guard !relation.isView, !relation.primaryKey.isEmpty else { continue }
            files.append(("\(folder)/one.sql", one(relation)))
            guard writes else { continue }
            files.append(("\(folder)/create.sql", create(relation)))
            if relation.columns.contains(where: { !relation.primaryKey.contains($0.name) && !$0.isGenerated }) {
                files.append(("\(folder)/update.sql", update(relation)))
                files.append(("\(folder)/update-where.sql", updateWhere(relation)))
            }
            files.append(("\(folder)/replace.sql", replace(relation)))
            files.append(("\(folder)/delete.sql", delete(relation)))
            files.append(("\(folder)/delete-where.sql", deleteWhere(relation)))
        }
        return files
    }

    // MARK: - Names

    /// `invoice_line` → `invoiceLine`: the parts between characters other
    /// than ASCII letters and digits, joined in lowerCamelCase, so that a
    /// label, a parameter and a path variable are always a plain name
    /// (`_` before one that would begin with a digit; `column` for none).
    static func lowerCamelCase(_ name: String) -> String {
        let parts = name.split { !($0.isASCII && ($0.isLetter || $0.isNumber)) }
        guard let first = parts.first else { return "column" }
        let joined = first.lowercased() + parts.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst().lowercased() }.joined()
        return joined.first?.isNumber == true ? "_" + joined : joined
    }

    /// A relation's path segment: its name with `_` written `-`; when an
    /// earlier schema of the catalog has a relation of the same name, the
    /// schema's name and a `-` before it.
    /// Only ASCII letters, digits and `-` are kept (each run of anything
    /// else is one `-`), so that a name can neither leave the output
    /// folder (`..`, `/`) nor break the file's header.
    func pathSegment(_ relation: DatabaseCatalog.Relation) -> String {
        let segment = Self.segment(relation.name)
        let first = catalog.relations.first { $0.name == relation.name }
        return first?.schema == relation.schema ? segment : Self.segment(relation.schema) + "-" + segment
    }

    static func segment(_ name: String) -> String {
        let parts = name.split { !($0.isASCII && ($0.isLetter || $0.isNumber)) }
        return parts.isEmpty ? "relation" : parts.joined(separator: "-")
    }

    private func folderName(_ relation: DatabaseCatalog.Relation) -> String { pathSegment(relation) }

    /// An identifier as SQL needs it: as it is when it is a plain lower-case
    /// name, else double-quoted.
    static func identifier(_ name: String) -> String {
        let isPlain =
            name.first.map { $0 == "_" || ("a"..."z").contains($0) } == true
            && name.allSatisfy { $0 == "_" || ("a"..."z").contains($0) || ("0"..."9").contains($0) }
            && !reservedWords.contains(name)
        return isPlain ? name : "\"" + name.replacing("\"", with: "\"\"") + "\""
    }

    /// PostgreSQL's reserved key words, which a column name must be quoted to be.
    static let reservedWords: Set<String> = [
        "all", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric", "both", "case", "cast", "check",
        "collate", "column", "constraint", "create", "current_catalog", "current_date", "current_role", "current_time",
        "current_timestamp", "current_user", "default", "deferrable", "desc", "distinct", "do", "else", "end", "except",
        "false", "fetch", "for", "foreign", "from", "grant", "group", "having", "in", "initially", "intersect", "into",
        "lateral", "leading", "limit", "localtime", "localtimestamp", "not", "null", "offset", "on", "only", "or", "order",
        "placing", "primary", "references", "returning", "select", "session_user", "some", "symmetric", "table", "then",
        "to", "trailing", "true", "union", "unique", "user", "using", "variadic", "when", "where", "window", "with",
        // Not reserved, but not plain column names either (type and function names).
        "authorization", "binary", "collation", "concurrently", "cross", "current_schema", "freeze", "full", "ilike",
        "inner", "is", "isnull", "join", "left", "like", "natural", "notnull", "outer", "overlaps", "right", "similar",
        "tablesample", "verbose",
    ]

    private func qualified(_ relation: DatabaseCatalog.Relation) -> String {
        relation.schema == "public"
            ? Self.identifier(relation.name) : Self.identifier(relation.schema) + "." + Self.identifier(relation.name)
    }

    /// `invoice_id AS "invoiceId"`, or `title` alone when the label is the name.
    private func selected(_ column: DatabaseCatalog.Column, prefix: String = "") -> String {
        let label = Self.lowerCamelCase(column.name)
        let name = prefix + Self.identifier(column.name)
        return label == column.name && prefix.isEmpty ? name : "\(name) AS \"\(label)\""
    }

    private func selectList(_ relation: DatabaseCatalog.Relation) -> String {
        relation.columns.map { selected($0) }.joined(separator: ", ")
    }

    /// The key columns, or the first column for a relation without one.
    private func orderColumns(_ relation: DatabaseCatalog.Relation) -> [String] {
        relation.primaryKey.isEmpty ? Array(relation.columns.prefix(1).map(\.name)) : relation.primaryKey
    }

    private func orderBy(_ relation: DatabaseCatalog.Relation) -> String {
        orderColumns(relation).map(Self.identifier).joined(separator: ", ")
    }

    /// A comment's text as header lines (`-- text`): a line of it each,
    /// split at every line break (`\n`, `\r`, both), other control
    /// characters dropped, so that no text of it is read as SQL.
    private static func commentLines(_ text: String) -> [String] {
        text.unicodeScalars.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r" }.map { line in
            let kept = String(String.UnicodeScalarView(line.filter { $0.value >= 0x20 && $0.value != 0x7F }))
            return "-- " + String(kept.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " }.reversed())
        }.filter { $0 != "-- " }
    }

    /// A comment's text on one line (an `@param` or `@detail` text).
    private static func oneLine(_ text: String?) -> String? {
        guard let text else { return nil }
        let line = commentLines(text).map { $0.dropFirst(3) }.joined(separator: " ")
        return line.isEmpty ? nil : line
    }

    /// A name as it may stand in a comment line: control characters dropped.
    private static func printable(_ name: String) -> String {
        String(String.UnicodeScalarView(name.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
    }

    private func description(_ relation: DatabaseCatalog.Relation, otherwise: String) -> [String] {
        let lines = Self.commentLines(relation.comment ?? "")
        return lines.isEmpty ? ["-- " + Self.printable(otherwise)] : lines
    }

    private func parameterLine(_ column: DatabaseCatalog.Column, in relation: DatabaseCatalog.Relation) -> String {
        let text = Self.oneLine(column.comment) ?? Self.printable("The \(column.name) of \(relation.name).")
        return "-- @param \(Self.lowerCamelCase(column.name)) \(text)"
    }

    /// `-- @example invoiceId 1` for each key column, with the key of the
    /// table's first row, so that `?api`'s example request finds a row.
    private func exampleLines(_ relation: DatabaseCatalog.Relation) -> [String] {
        guard let values = relation.sampleKey, values.count == relation.primaryKey.count else { return [] }
        return zip(relation.primaryKey, values).compactMap { column, value in
            // A value that a header line cannot carry (a line break) gets no example.
            guard value.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else { return nil }
            let plain = !value.isEmpty && !value.hasPrefix("\"") && value.first != " " && value.last != " "
            return "-- @example \(Self.lowerCamelCase(column)) " + (plain ? value : "\"" + value.replacing("\"", with: "\"\"") + "\"")
        }
    }

    private func keyPath(_ relation: DatabaseCatalog.Relation) -> String {
        "/" + pathSegment(relation) + relation.primaryKey.map { "/{\(Self.lowerCamelCase($0))}" }.joined()
    }

    private func keyCondition(_ relation: DatabaseCatalog.Relation) -> String {
        relation.primaryKey.map { "\(Self.identifier($0)) = :\(Self.lowerCamelCase($0))" }.joined(separator: " AND ")
    }

    // MARK: - Files

    private func list(_ relation: DatabaseCatalog.Relation) -> String {
        var lines = ["-- GET /" + pathSegment(relation)]
        lines += description(relation, otherwise: "The rows of \(relation.name), by \(orderColumns(relation).joined(separator: ", ")).")
        lines += ["-- @paged", "-- @filter *", "-- @order *"]
        lines.append("SELECT \(selectList(relation)) FROM \(qualified(relation)) ORDER BY \(orderBy(relation));")
        return (lines + details(of: relation)).joined(separator: "\n") + "\n"
    }

    private func one(_ relation: DatabaseCatalog.Relation) -> String {
        var lines = ["-- GET " + keyPath(relation)]
        lines += description(relation, otherwise: "One row of \(relation.name), by its key.")
        lines += relation.primaryKey.compactMap { relation.column($0).map { parameterLine($0, in: relation) } }
        lines += exampleLines(relation)
        let key = relation.primaryKey.map { "\($0) {\(Self.lowerCamelCase($0))}" }.joined(separator: " and ")
        lines.append(Self.printable("-- @notfound \(relation.name) has no row with \(key)."))
        lines.append("SELECT \(selectList(relation)) FROM \(qualified(relation)) WHERE \(keyCondition(relation));")
        return (lines + details(of: relation)).joined(separator: "\n") + "\n"
    }

    /// A detail section for each foreign key that refers to `relation`:
    /// the referring rows, bound by the referred columns' labels.
    private func details(of relation: DatabaseCatalog.Relation) -> [String] {
        var sections: [String] = []
        for child in catalog.relations where Self.isWritable(child) {
            let keys = child.foreignKeys.filter { $0.referencedSchema == relation.schema && $0.referencedName == relation.name }
            for key in keys {
                var name = Self.lowerCamelCase(child.name)
                if keys.count > 1 {
                    let column = Self.lowerCamelCase(key.columns.joined(separator: "_"))
                    name += "By" + column.prefix(1).uppercased() + column.dropFirst()
                }
                let condition = zip(key.columns, key.referencedColumns).map {
                    "\(Self.identifier($0.0)) = :\(Self.lowerCamelCase($0.1))"
                }.joined(separator: " AND ")
                let text =
                    Self.oneLine(child.comment)
                    ?? Self.printable("The \(child.name) rows that refer to it (\(key.columns.joined(separator: ", "))).")
                sections.append("")
                sections.append("-- @detail \(name) \(text)")
                sections.append("SELECT \(selectList(child)) FROM \(qualified(child)) WHERE \(condition) ORDER BY \(orderBy(child));")
            }
        }
        return sections
    }

    // The writes: the server builds each statement from the request (`@writes`),
    // so that a member sent as `null` is stored as NULL and one left out keeps
    // the column's default (insert) or value (update).

    private func create(_ relation: DatabaseCatalog.Relation) -> String {
        [
            "-- POST /" + pathSegment(relation),
            Self.printable("-- Adds rows to \(relation.name): a JSON object, or an array of them in one statement."),
            Self.printable("-- The members given are the columns written; the others take their defaults."),
            "-- @writes " + qualified(relation),
        ].joined(separator: "\n") + "\n"
    }

    private func update(_ relation: DatabaseCatalog.Relation) -> String {
        [
            "-- PATCH " + keyPath(relation),
            Self.printable("-- Changes the columns given of one row of \(relation.name); the others keep their values."),
            "-- @writes " + qualified(relation),
        ].joined(separator: "\n") + "\n"
    }

    private func updateWhere(_ relation: DatabaseCatalog.Relation) -> String {
        [
            "-- PATCH /" + pathSegment(relation),
            Self.printable("-- Changes the columns given of the rows of \(relation.name) the filters select (a filter is required)."),
            "-- @writes " + qualified(relation),
        ].joined(separator: "\n") + "\n"
    }

    private func replace(_ relation: DatabaseCatalog.Relation) -> String {
        [
            "-- PUT /" + pathSegment(relation),
            Self.printable("-- Inserts or replaces the row of \(relation.name) whose key the filters give (`?id=eq.1`), as the body says."),
            "-- @writes " + qualified(relation),
        ].joined(separator: "\n") + "\n"
    }

    private func delete(_ relation: DatabaseCatalog.Relation) -> String {
        [
            "-- DELETE " + keyPath(relation),
            Self.printable("-- Removes one row of \(relation.name)."),
            "-- @writes " + qualified(relation),
        ].joined(separator: "\n") + "\n"
    }

    private func deleteWhere(_ relation: DatabaseCatalog.Relation) -> String {
        [
            "-- DELETE /" + pathSegment(relation),
            Self.printable("-- Removes the rows of \(relation.name) the filters select (a filter is required)."),
            "-- @writes " + qualified(relation),
        ].joined(separator: "\n") + "\n"
    }
}
