import PostgreSQL

/// What PostgreSQL's catalog says about the tables and views a folder
/// reads, for the relationships of its `ResourceGraph`: their columns,
/// keys and foreign keys, where each view's columns come from, and the
/// functions of their rows (computed columns). Read once per load, in four
/// queries, for the schemas of the tables the folder's statements read.
///
/// ```swift
/// let catalog = try RelationCatalog.read(tables: [16385], on: connection)
/// catalog.base(of: RelationCatalog.ColumnID(table: viewOID, column: 1))   // the table column the view shows
/// ```
struct RelationCatalog {
    /// A column of a table or view: its relation's OID and its number (`attnum`).
    struct ColumnID: Hashable {
        var table: UInt32
        var column: Int
    }

    struct Column {
        var number: Int
        var name: String
        var type: PostgresType
    }

    /// A table, view, materialized view or foreign table.
    struct Relation {
        var oid: UInt32
        var schema: String
        var name: String
        var isView: Bool
        /// A table (plain or partitioned), whose rows have an address (`tableoid`, `ctid`).
        var isTable: Bool = false
        /// Its row type's OID, which a computed column's function takes.
        var rowType: UInt32
        var columns: [Column]

        /// The schema-qualified name, quoted.
        var qualifiedName: String { quoted(schema) + "." + quoted(name) }
    }

    struct ForeignKey {
        var name: String
        var table: UInt32
        var columns: [Int]
        var referenced: UInt32
        var referencedColumns: [Int]
    }

    /// A function of one row of `argument`'s relation returning a scalar.
    struct Function {
        var schema: String
        var name: String
        var argument: UInt32
        var returns: PostgresType
    }

    /// The relations of the schemas read, by schema and name.
    var relations: [Relation] = []
    var relationByOID: [UInt32: Int] = [:]
    /// The primary and unique keys of every table, by table.
    var primaryKeys: [UInt32: [Int]] = [:]
    var uniqueKeys: [UInt32: [[Int]]] = [:]
    var foreignKeys: [ForeignKey] = []
    /// Where each view's columns come from (a table's, or another view's).
    var viewColumns: [UInt32: [Int: ColumnID]] = [:]
    var functions: [Function] = []

    func relation(_ oid: UInt32) -> Relation? {
        relationByOID[oid].map { relations[$0] }
    }

    /// The table column `column` shows, through views of views; `nil` for
    /// a view's column that is not a table's column as it is.
    func base(of column: ColumnID) -> ColumnID? {
        var current = column
        for _ in 0..<32 {
            guard let view = viewColumns[current.table] else { return current }
            guard let next = view[current.column] else { return nil }
            current = next
        }
        return nil
    }

    /// A view's key: the numbers of its columns that show, as they are,
    /// every column of the primary key of a table it reads (in key order);
    /// `nil` when it shows no table's whole key.
    func derivedKey(ofView view: UInt32) -> [Int]? {
        guard let columns = viewColumns[view] else { return nil }
        var shown: [ColumnID: Int] = [:]
        for number in columns.keys.sorted() {
            if let base = base(of: ColumnID(table: view, column: number)), shown[base] == nil { shown[base] = number }
        }
        for table in Set(shown.keys.map(\.table)).sorted() {
            guard let key = primaryKeys[table] else { continue }
            let numbers = key.compactMap { shown[ColumnID(table: table, column: $0)] }
            if numbers.count == key.count { return numbers }
        }
        return nil
    }

    /// Whether `columns` of `table` are its primary key or a unique key.
    func isUnique(_ columns: [Int], of table: UInt32) -> Bool {
        let set = Set(columns)
        if let key = primaryKeys[table], Set(key) == set { return true }
        return uniqueKeys[table, default: []].contains { Set($0) == set }
    }

    // MARK: - Reading

    /// The catalog of the schemas that hold `tables` (system schemas left
    /// out), with the keys and foreign keys of every table of the database
    /// (a view may show a table of another schema).
    static func read(tables: [UInt32], on connection: Connection) throws -> RelationCatalog {
        var catalog = RelationCatalog()
        guard !tables.isEmpty else { return catalog }
        let arguments: SQLArguments = ["tables": "{" + tables.map(String.init).joined(separator: ",") + "}"]
        let schemas = """
            (SELECT DISTINCT c.relnamespace FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
             WHERE c.oid = ANY(CAST(:tables AS pg_catalog.oid[])) AND n.nspname NOT IN ('pg_catalog', 'information_schema')
               AND n.nspname NOT LIKE 'pg\\_toast%')
            """
        let columns = try connection.fetchAll(
            ColumnRow.self,
            """
            SELECT c.oid AS oid, n.nspname AS schema, c.relname AS name, c.relkind::text AS kind, c.reltype AS "rowType",
                   a.attnum AS number, a.attname AS "column", a.atttypid AS type
            FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            WHERE c.relnamespace IN \(schemas) AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition
            ORDER BY n.nspname, c.relname, a.attnum
            """, arguments)
        for row in columns {
            if catalog.relations.last?.oid != row.oid {
                catalog.relationByOID[row.oid] = catalog.relations.count
                catalog.relations.append(
                    Relation(
                        oid: row.oid, schema: row.schema, name: row.name, isView: row.kind == "v" || row.kind == "m",
                        isTable: row.kind == "r" || row.kind == "p",
                        rowType: row.rowType, columns: []))
            }
            catalog.relations[catalog.relations.count - 1].columns.append(
                Column(number: row.number, name: row.column, type: PostgresType(oid: row.type)))
        }

        let constraints = try connection.fetchAll(
            ConstraintRow.self,
            """
            SELECT k.conname AS name, k.contype::text AS kind, k.conrelid AS "table", array_to_string(k.conkey, ',') AS columns,
                   k.confrelid AS referenced, coalesce(array_to_string(k.confkey, ','), '') AS "referencedColumns"
            FROM pg_catalog.pg_constraint k JOIN pg_catalog.pg_namespace n ON n.oid = k.connamespace
            WHERE k.contype IN ('p', 'u', 'f') AND k.conrelid <> 0 AND k.conparentid = 0
              AND n.nspname NOT IN ('pg_catalog', 'information_schema')
            ORDER BY k.conrelid, k.conname
            """)
        for row in constraints {
            let keyColumns = row.columns.split(separator: ",").compactMap { Int($0) }
            switch row.kind {
            case "p": catalog.primaryKeys[row.table] = keyColumns
            case "u": catalog.uniqueKeys[row.table, default: []].append(keyColumns)
            default:
                catalog.foreignKeys.append(
                    ForeignKey(
                        name: row.name, table: row.table, columns: keyColumns, referenced: row.referenced,
                        referencedColumns: row.referencedColumns.split(separator: ",").compactMap { Int($0) }))
            }
        }

        let views = try connection.fetchAll(
            ViewRow.self,
            """
            SELECT r.ev_class AS view, r.ev_action::text AS action
            FROM pg_catalog.pg_rewrite r JOIN pg_catalog.pg_class c ON c.oid = r.ev_class
            WHERE r.rulename = '_RETURN' AND c.relkind IN ('v', 'm') AND c.relnamespace IN \(schemas)
            """, arguments)
        for row in views {
            var origins: [Int: ColumnID] = [:]
            for entry in ViewDefinition.targetEntries(of: row.action) where entry.table != 0 && entry.column > 0 {
                origins[entry.number] = ColumnID(table: entry.table, column: entry.column)
            }
            catalog.viewColumns[row.view] = origins
        }

        catalog.functions = try connection.fetchAll(
            FunctionRow.self,
            """
            SELECT n.nspname AS schema, p.proname AS name, p.proargtypes[0] AS argument, p.prorettype AS returns
            FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
            JOIN pg_catalog.pg_type t ON t.oid = p.prorettype
            WHERE p.pronargs = 1 AND p.prokind = 'f' AND NOT p.proretset AND t.typtype NOT IN ('c', 'p')
              AND p.pronamespace IN \(schemas)
              AND p.proargtypes[0] IN (SELECT reltype FROM pg_catalog.pg_class WHERE relnamespace IN \(schemas))
            ORDER BY n.nspname, p.proname
            """, arguments
        ).map { Function(schema: $0.schema, name: $0.name, argument: $0.argument, returns: PostgresType(oid: $0.returns)) }
        return catalog
    }

    private struct ColumnRow: Decodable {
        let oid: UInt32
        let schema: String
        let name: String
        let kind: String
        let rowType: UInt32
        let number: Int
        let column: String
        let type: UInt32
    }

    private struct ConstraintRow: Decodable {
        let name: String
        let kind: String
        let table: UInt32
        let columns: String
        let referenced: UInt32
        let referencedColumns: String
    }

    private struct ViewRow: Decodable {
        let view: UInt32
        let action: String
    }

    private struct FunctionRow: Decodable {
        let schema: String
        let name: String
        let argument: UInt32
        let returns: UInt32
    }
}

/// `name` as a quoted SQL identifier (`"a""b"`).
func quoted(_ name: String) -> String {
    "\"" + name.replacing("\"", with: "\"\"") + "\""
}
