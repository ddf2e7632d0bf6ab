import FoundationEssentials
import WebService

/// The service files `sql-rest init` writes for a database: for each table
/// and view, `list.sql` (`GET /<table>`, paged, filtered and ordered by the
/// caller), and for each table with a primary key `one.sql`
/// (`GET /<table>/{key}`), with a detail for each table that refers to it;
/// with `writes`, the table's writes too (`create.sql`, `update.sql`,
/// `delete.sql`…; for a table without a key, those by filter alone).
///
/// Paths are the table's name (`invoice_line`); JSON keys and path
/// variables are the column names in lowerCamelCase (docs/SQL-SERVICES.md
/// states the rules for odd and colliding names). The texts of
/// `COMMENT ON` become the descriptions and `@param` texts. The files are
/// plain SQL a user reads, renames and edits: nothing is generated at run time.
///
/// ```swift
/// let files = ServiceScaffold(catalog: catalog, writes: true).files
/// // ["invoice_line/list.sql": "-- GET /invoice_line\n…", …]
/// ```
public struct ServiceScaffold: Sendable {
    public let catalog: DatabaseCatalog
    public let writes: Bool
    /// Each writable relation's path segment (``pathSegment(_:)``).
    private let segments: [SegmentKey: String]

    public init(catalog: DatabaseCatalog, writes: Bool = false) {
        self.catalog = catalog
        self.writes = writes
        segments = Self.segments(of: catalog)
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
            let hasKey = !relation.primaryKey.isEmpty
            if hasKey, !relation.isView { files.append(("\(folder)/one.sql", one(relation))) }
            guard writes else { continue }
            if relation.isView {
                // What the view lets a statement do: rows written by the key of the table it shows; no upsert.
                for write in Self.writes where write.method != "PUT" {
                    let allowed =
                        switch write.method {
                        case "POST": relation.canInsert
                        case "PATCH": relation.canUpdate && hasKey
                        default: relation.canDelete && hasKey
                        }
                    if allowed { files.append(("\(folder)/\(write.file).sql", writeFile(write, relation))) }
                }
                continue
            }
            // Without a key, no write by key, and none by filter but on a table (its rows' addresses choose them).
            // A PATCH may change any column that is not generated, the key's too (a table of key columns alone).
            let changesColumns = relation.columns.contains { !$0.isGenerated }
            let byFilter = hasKey || (relation.isTable && !relation.columns.isEmpty)
            for write in Self.writes
            where (changesColumns || !write.changesColumns)
                && (hasKey || write.method == "POST" || (byFilter && !write.byKey && write.method != "PUT"))
            {
                files.append(("\(folder)/\(write.file).sql", writeFile(write, relation)))
            }
        }
        var taken: Set<String> = []
        for function in catalog.functions where Self.isPrintable([function.schema, function.name]) {
            var segment = Self.segment(function.name)
            if !taken.insert(segment.lowercased()).inserted {
                segment = Self.segment(function.schema + "-" + function.name)
                guard taken.insert(segment.lowercased()).inserted else { continue }
            }
            files.append(("rpc/\(segment)/call.sql", functionFile(function, method: "POST", segment: segment)))
            files.append(("rpc/\(segment)/read.sql", functionFile(function, method: "GET", segment: segment)))
        }
        return files
    }

    /// Whether no name holds a control character, which no header line could carry.
    static func isPrintable(_ names: [String]) -> Bool {
        names.allSatisfy { name in name.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F } }
    }

    /// `rpc/<name>/call.sql` (`POST /rpc/<name>`) and `read.sql` (`GET`,
    /// read-only, as PostgREST calls any function by GET): the server calls
    /// the overload the request's argument names choose (`@function`).
    private func functionFile(_ function: DatabaseCatalog.Function, method: String, segment: String) -> String {
        let text =
            Self.oneLine(function.comment)
            ?? (method == "GET"
                ? "Calls \(function.name) with the arguments of the query string, read-only."
                : "Calls \(function.name) with the arguments of a JSON object.")
        let lines =
            ["-- \(method) /rpc/\(segment)"] + Self.commentLines(text)
            + ["-- @function " + Self.identifier(function.schema) + "." + Self.identifier(function.name)]
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - Names

    /// `invoice_line` → `invoiceLine`: the parts between characters other
    /// than ASCII letters and digits, joined in lowerCamelCase, so that a
    /// label, a parameter and a path variable are always a plain name
    /// (`_` before one that would begin with a digit; `column` for none).
    /// A part keeps its inner capitals unless it is all capitals:
    /// `articleId` stays `articleId`, `ORDER_ID` is `orderId`.
    static func lowerCamelCase(_ name: String) -> String {
        let parts = name.split { !($0.isASCII && ($0.isLetter || $0.isNumber)) }.map { part in
            part.contains(where: \.isLowercase) ? String(part) : part.lowercased()
        }
        guard let first = parts.first else { return "column" }
        let joined =
            first.prefix(1).lowercased() + first.dropFirst() + parts.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        return joined.first?.isNumber == true ? "_" + joined : joined
    }

    /// The label of each of `relation`'s columns, in column order: its
    /// name in lowerCamelCase; when an earlier column has that label, its
    /// name as it is if that is a plain name (`user_id`) not taken, else
    /// the label followed by the first number from 2 not taken (`userId2`).
    static func labels(of relation: DatabaseCatalog.Relation) -> [String] {
        var taken: Set<String> = []
        return relation.columns.map { column in
            var label = lowerCamelCase(column.name)
            if taken.contains(label) {
                let isPlain =
                    column.name.first.map { $0 == "_" || ($0.isASCII && $0.isLetter) } == true
                    && column.name.allSatisfy { $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }
                if isPlain && !taken.contains(column.name) {
                    label = column.name
                } else {
                    let stem = label
                    var number = 2
                    while taken.contains(stem + String(number)) { number += 1 }
                    label = stem + String(number)
                }
            }
            taken.insert(label)
            return label
        }
    }

    /// The label of `relation`'s column `name` (``labels(of:)``).
    func label(_ name: String, in relation: DatabaseCatalog.Relation) -> String {
        guard let index = relation.columns.firstIndex(where: { $0.name == name }) else { return Self.lowerCamelCase(name) }
        return Self.labels(of: relation)[index]
    }

    /// A relation's path segment: its name, as PostgREST's clients name
    /// it (`invoice_line`), with each run of characters other than ASCII
    /// letters, digits, `_` and `-` written `-` (`"Order Lines"` →
    /// `Order-Lines`, `relation` for none), so that a name can neither
    /// leave the output folder (`..`, `/`) nor break the file's header.
    /// When an earlier relation of the catalog (by schema, then name) has
    /// that segment, ignoring case, or the server reserves it (`health`,
    /// `metrics`, `jsonrpc`: `ReservedPath`), the schema's segment and a
    /// `-` come first; when that is taken too, `-2`, `-3`… follow it.
    func pathSegment(_ relation: DatabaseCatalog.Relation) -> String {
        segments[SegmentKey(schema: relation.schema, name: relation.name)] ?? Self.segment(relation.name)
    }

    struct SegmentKey: Hashable {
        var schema: String
        var name: String
    }

    static func segments(of catalog: DatabaseCatalog) -> [SegmentKey: String] {
        var segments: [SegmentKey: String] = [:]
        var taken: Set<String> = []
        func isTaken(_ segment: String) -> Bool {
            taken.contains(segment.lowercased()) || ReservedPath.claimed(by: "/" + segment) != nil
        }
        for relation in catalog.relations where isWritable(relation) {
            var segment = Self.segment(relation.name)
            if isTaken(segment) { segment = Self.segment(relation.schema) + "-" + segment }
            if isTaken(segment) {
                let stem = segment
                var number = 2
                while isTaken(stem + "-" + String(number)) { number += 1 }
                segment = stem + "-" + String(number)
            }
            taken.insert(segment.lowercased())
            segments[SegmentKey(schema: relation.schema, name: relation.name)] = segment
        }
        return segments
    }

    static func segment(_ name: String) -> String {
        let parts = name.split { !($0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-")) }
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

    /// `invoice_id AS "invoiceId", title`: each column, labelled unless its label is its name.
    private func columnList(_ relation: DatabaseCatalog.Relation) -> String {
        zip(relation.columns, Self.labels(of: relation)).map { column, label in
            let name = Self.identifier(column.name)
            return label == column.name ? name : "\(name) AS \"\(label)\""
        }.joined(separator: ", ")
    }

    /// `SELECT` and the column list; `SELECT` alone for a relation without columns.
    private func selectClause(_ relation: DatabaseCatalog.Relation) -> String {
        relation.columns.isEmpty ? "SELECT" : "SELECT " + columnList(relation)
    }

    /// The key columns, or for a relation without one its first column
    /// whose type has an ordering (none when no column's has).
    private func orderColumns(_ relation: DatabaseCatalog.Relation) -> [String] {
        relation.primaryKey.isEmpty ? Array(relation.columns.filter(\.isOrderable).prefix(1).map(\.name)) : relation.primaryKey
    }

    /// ` ORDER BY key`, or nothing when there is no column to order by.
    private func orderBy(_ relation: DatabaseCatalog.Relation) -> String {
        let columns = orderColumns(relation)
        return columns.isEmpty ? "" : " ORDER BY " + columns.map(Self.identifier).joined(separator: ", ")
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
        return "-- @param \(label(column.name, in: relation)) \(text)"
    }

    /// `-- @example invoiceId 1` for each key column, with the key of the
    /// table's first row, so that `?api`'s example request finds a row.
    private func exampleLines(_ relation: DatabaseCatalog.Relation) -> [String] {
        guard let values = relation.sampleKey, values.count == relation.primaryKey.count else { return [] }
        return zip(relation.primaryKey, values).compactMap { column, value in
            // A value that a header line cannot carry (a line break) gets no example.
            guard value.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else { return nil }
            let plain = !value.isEmpty && !value.hasPrefix("\"") && value.first != " " && value.last != " "
            return "-- @example \(label(column, in: relation)) " + (plain ? value : "\"" + value.replacing("\"", with: "\"\"") + "\"")
        }
    }

    private func keyPath(_ relation: DatabaseCatalog.Relation) -> String {
        "/" + pathSegment(relation) + relation.primaryKey.map { "/{\(label($0, in: relation))}" }.joined()
    }

    private func keyCondition(_ relation: DatabaseCatalog.Relation) -> String {
        relation.primaryKey.map { "\(Self.identifier($0)) = :\(label($0, in: relation))" }.joined(separator: " AND ")
    }

    // MARK: - Files

    private func list(_ relation: DatabaseCatalog.Relation) -> String {
        var lines = ["-- GET /" + pathSegment(relation)]
        let order = orderColumns(relation)
        lines += description(
            relation,
            otherwise: order.isEmpty
                ? "The rows of \(relation.name)." : "The rows of \(relation.name), by \(order.joined(separator: ", ")).")
        lines += ["-- @paged", "-- @filter *"]
        // A column whose type has no ordering is left out of `@order`, so that ordering by it is a 400 naming it.
        let orderable = zip(relation.columns, Self.labels(of: relation)).filter { $0.0.isOrderable }.map(\.1)
        if orderable.count == relation.columns.count {
            lines.append("-- @order *")
        } else if !orderable.isEmpty {
            lines.append("-- @order " + orderable.joined(separator: ", "))
        }
        lines.append("\(selectClause(relation)) FROM \(qualified(relation))\(orderBy(relation));")
        return (lines + details(of: relation)).joined(separator: "\n") + "\n"
    }

    private func one(_ relation: DatabaseCatalog.Relation) -> String {
        var lines = ["-- GET " + keyPath(relation)]
        lines += description(relation, otherwise: "One row of \(relation.name), by its key.")
        lines += relation.primaryKey.compactMap { relation.column($0).map { parameterLine($0, in: relation) } }
        lines += exampleLines(relation)
        let key = relation.primaryKey.map { "\($0) {\(label($0, in: relation))}" }.joined(separator: " and ")
        lines.append(Self.printable("-- @notfound \(relation.name) has no row with \(key)."))
        lines.append("\(selectClause(relation)) FROM \(qualified(relation)) WHERE \(keyCondition(relation));")
        return (lines + details(of: relation)).joined(separator: "\n") + "\n"
    }

    /// A detail section for each foreign key that refers to `relation`:
    /// the referring rows, bound by the referred columns' labels. A
    /// detail's name is the referring table's in lowerCamelCase (`By` and
    /// its key's columns after it when it has two keys to `relation`),
    /// followed by the first number from 2 that no column label or earlier
    /// detail holds when one does.
    private func details(of relation: DatabaseCatalog.Relation) -> [String] {
        var sections: [String] = []
        var taken = Set(Self.labels(of: relation))
        for child in catalog.relations where Self.isWritable(child) {
            let keys = child.foreignKeys.filter { $0.referencedSchema == relation.schema && $0.referencedName == relation.name }
            for key in keys {
                var name = Self.lowerCamelCase(child.name)
                if keys.count > 1 {
                    let column = Self.lowerCamelCase(key.columns.joined(separator: "_"))
                    name += "By" + column.prefix(1).uppercased() + column.dropFirst()
                }
                if taken.contains(name) {
                    let stem = name
                    var number = 2
                    while taken.contains(stem + String(number)) { number += 1 }
                    name = stem + String(number)
                }
                taken.insert(name)
                let condition = zip(key.columns, key.referencedColumns).map {
                    "\(Self.identifier($0.0)) = :\(label($0.1, in: relation))"
                }.joined(separator: " AND ")
                let text =
                    Self.oneLine(child.comment)
                    ?? Self.printable("The \(child.name) rows that refer to it (\(key.columns.joined(separator: ", "))).")
                sections.append("")
                sections.append("-- @detail \(name) \(text)")
                sections.append("\(selectClause(child)) FROM \(qualified(child)) WHERE \(condition)\(orderBy(child));")
            }
        }
        return sections
    }

    // The writes: the server builds each statement from the request (`@writes`),
    // so that a member sent as `null` is stored as NULL and one left out keeps
    // the column's default (insert) or value (update).

    /// A write file of `init --writes`: its name, method, whether its path
    /// ends with the key, whether it changes columns other than the key,
    /// and what it does (`TABLE` stands for the relation's name).
    private struct Write {
        let file: String
        let method: String
        let byKey: Bool
        let changesColumns: Bool
        let description: [String]
    }

    private static let writes = [
        Write(
            file: "create", method: "POST", byKey: false, changesColumns: false,
            description: [
                "Adds rows to TABLE: a JSON object, or an array of them in one statement.",
                "The members given are the columns written; the others take their defaults.",
            ]),
        Write(
            file: "update", method: "PATCH", byKey: true, changesColumns: true,
            description: ["Changes the columns given of one row of TABLE; the others keep their values."]),
        Write(
            file: "update-where", method: "PATCH", byKey: false, changesColumns: true,
            description: ["Changes the columns given of the rows of TABLE the filters select (a filter is required)."]),
        Write(
            file: "replace", method: "PUT", byKey: false, changesColumns: false,
            description: ["Inserts or replaces the row of TABLE whose key the filters give (`?id=eq.1`), as the body says."]),
        Write(file: "delete", method: "DELETE", byKey: true, changesColumns: false, description: ["Removes one row of TABLE."]),
        Write(
            file: "delete-where", method: "DELETE", byKey: false, changesColumns: false,
            description: ["Removes the rows of TABLE the filters select (a filter is required)."]),
    ]

    private func writeFile(_ write: Write, _ relation: DatabaseCatalog.Relation) -> String {
        let path = write.byKey ? keyPath(relation) : "/" + pathSegment(relation)
        let lines =
            ["-- \(write.method) \(path)"]
            + write.description.map { Self.printable("-- " + $0.replacing("TABLE", with: relation.name)) }
            + ["-- @writes " + qualified(relation)]
        return lines.joined(separator: "\n") + "\n"
    }
}
