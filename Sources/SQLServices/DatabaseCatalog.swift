import FoundationEssentials

import PostgreSQL

/// The tables and views of some schemas, as PostgreSQL's catalog describes
/// them: columns (with nullability, defaults and comments), primary keys
/// and foreign keys. What `sql-rest init` writes files from.
///
/// ```swift
/// let catalog = try DatabaseCatalog.read(schemas: ["public"], on: connection)
/// for relation in catalog.relations { print(relation.name, relation.primaryKey) }
/// ```
public struct DatabaseCatalog: Sendable {
    /// A column of a table or view.
    public struct Column: Sendable, Hashable {
        public var name: String
        public var isNotNull: Bool
        /// The default's expression (`nextval('items_id_seq'::regclass)`), if any.
        public var defaultExpression: String?
        /// An identity or generated column: PostgreSQL gives its value.
        public var isGenerated: Bool
        public var comment: String?
        /// Whether its type has an ordering (`json`, `xml` and `point` have none), so that `ORDER BY` may name it.
        public var isOrderable: Bool = true
    }

    /// A foreign key of `relation`: its columns refer to `referenced`'s.
    public struct ForeignKey: Sendable, Hashable {
        public var columns: [String]
        public var referencedSchema: String
        public var referencedName: String
        public var referencedColumns: [String]
    }

    /// A table or a view.
    public struct Relation: Sendable {
        public var schema: String
        public var name: String
        public var isView: Bool
        /// A table (plain or partitioned), whose rows a filter writes without a key; not a foreign table.
        public var isTable: Bool = true
        /// What a view lets a statement do to its rows (an updatable view,
        /// or INSTEAD OF triggers: `pg_relation_is_updatable`); a table all.
        public var canInsert = true, canUpdate = true, canDelete = true
        public var comment: String?
        public var columns: [Column]
        /// The primary key's columns, in key order; empty without one. A
        /// view's is its columns that show a table's whole primary key.
        public var primaryKey: [String]
        public var foreignKeys: [ForeignKey]
        /// The primary key of the table's first row in key order, each
        /// value as a request sends it (its JSON text: `10001`, `d001`,
        /// `2024-05-01T10:00:00+00:00`); `nil` for a view, a table without
        /// a key or without rows, or one the role may not read.
        public var sampleKey: [String]?

        public func column(_ name: String) -> Column? { columns.first { $0.name == name } }
    }

    public var relations: [Relation]

    /// A function of the schemas that a request can call (`/rpc`): one
    /// entry per name, its overloads together.
    public struct Function: Sendable {
        public var schema: String
        public var name: String
        public var comment: String?
    }

    /// The functions (not procedures, nor those of extensions, nor
    /// triggers), by schema then name, each with at least one overload a
    /// request can call.
    public var functions: [Function] = []

    private struct FunctionRow: Decodable {
        let schema: String
        let name: String
        let comment: String?
    }

    private struct RelationRow: Decodable {
        let oid: Int
        let schema: String
        let name: String
        let kind: String
        let comment: String?
        /// What a statement may do to its rows (`pg_relation_is_updatable`, INSTEAD OF triggers included).
        let events: Int
    }

    private struct ColumnRow: Decodable {
        let relation: Int
        let name: String
        let notNull: Bool
        let defaultExpression: String?
        let generated: Bool
        let comment: String?
        let type: String
    }

    private struct ConstraintRow: Decodable {
        let relation: Int
        let kind: String
        let columns: String
        let referencedSchema: String?
        let referencedName: String?
        let referencedColumns: String?
    }

    /// The tables, views and materialized views of `schemas`, by schema and name.
    public static func read(schemas: [String], on connection: Connection) throws -> DatabaseCatalog {
        let names =
            "{"
            + schemas.map { "\"" + $0.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\"" }
            .joined(separator: ",") + "}"
        let relations = try connection.fetchAll(
            RelationRow.self,
            """
            SELECT c.oid::int AS oid, n.nspname AS schema, c.relname AS name, c.relkind::text AS kind,
                   obj_description(c.oid, 'pg_class') AS comment, pg_relation_is_updatable(c.oid, true) AS events
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = ANY(:schemas::text[]) AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition
            ORDER BY array_position(:schemas::text[], n.nspname::text), c.relname
            """, ["schemas": names])
        let columns = try connection.fetchAll(
            ColumnRow.self,
            """
            SELECT a.attrelid::int AS relation, a.attname AS name, a.attnotnull AS "notNull",
                   pg_get_expr(d.adbin, d.adrelid) AS "defaultExpression",
                   (a.attidentity <> '' OR a.attgenerated <> '') AS generated,
                   col_description(a.attrelid, a.attnum) AS comment, format_type(a.atttypid, NULL) AS type
            FROM pg_attribute a
            JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
            WHERE n.nspname = ANY(:schemas::text[]) AND a.attnum > 0 AND NOT a.attisdropped
            ORDER BY a.attrelid, a.attnum
            """, ["schemas": names])
        let constraints = try connection.fetchAll(
            ConstraintRow.self,
            """
            SELECT k.conrelid::int AS relation, k.contype::text AS kind,
                   (SELECT string_agg(a.attname, chr(31) ORDER BY u.i) FROM unnest(k.conkey) WITH ORDINALITY u(n, i)
                    JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n) AS columns,
                   fn.nspname AS "referencedSchema", f.relname AS "referencedName",
                   (SELECT string_agg(a.attname, chr(31) ORDER BY u.i) FROM unnest(k.confkey) WITH ORDINALITY u(n, i)
                    JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n) AS "referencedColumns"
            FROM pg_constraint k
            JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            LEFT JOIN pg_class f ON f.oid = k.confrelid LEFT JOIN pg_namespace fn ON fn.oid = f.relnamespace
            WHERE n.nspname = ANY(:schemas::text[]) AND k.contype IN ('p', 'f')
            ORDER BY k.conrelid, k.conname
            """, ["schemas": names])

        let unorderable = Set(Set(columns.map(\.type)).filter { !isOrderable($0, on: connection) })
        let columnsByRelation = Dictionary(grouping: columns) { $0.relation }
        let constraintsByRelation = Dictionary(grouping: constraints) { $0.relation }
        var catalog = DatabaseCatalog(
            relations: relations.map { row in
                let keys = constraintsByRelation[row.oid] ?? []
                return Relation(
                    schema: row.schema, name: row.name, isView: row.kind == "v" || row.kind == "m",
                    isTable: row.kind == "r" || row.kind == "p", comment: row.comment,
                    columns: (columnsByRelation[row.oid] ?? []).map {
                        Column(
                            name: $0.name, isNotNull: $0.notNull, defaultExpression: $0.defaultExpression,
                            isGenerated: $0.generated, comment: $0.comment, isOrderable: !unorderable.contains($0.type))
                    },
                    primaryKey: keys.first { $0.kind == "p" }.map { $0.columns.split(separator: "\u{1F}").map(String.init) } ?? [],
                    foreignKeys: keys.filter { $0.kind == "f" }.map {
                        ForeignKey(
                            columns: $0.columns.split(separator: "\u{1F}").map(String.init),
                            referencedSchema: $0.referencedSchema ?? "", referencedName: $0.referencedName ?? "",
                            referencedColumns: ($0.referencedColumns ?? "").split(separator: "\u{1F}").map(String.init))
                    })
            })
        try readViews(of: relations, into: &catalog, on: connection)
        let functions = try connection.fetchAll(
            FunctionRow.self,
            """
            SELECT n.nspname AS schema, p.proname AS name,
                   (array_agg(obj_description(p.oid, 'pg_proc') ORDER BY p.oid)
                      FILTER (WHERE obj_description(p.oid, 'pg_proc') IS NOT NULL))[1] AS comment
            FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = ANY(:schemas::text[]) AND p.prokind = 'f'
              AND p.prorettype NOT IN ('trigger'::regtype, 'event_trigger'::regtype)
              AND NOT EXISTS (SELECT 1 FROM pg_depend d
                              WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
            GROUP BY n.nspname, p.proname
            ORDER BY array_position(:schemas::text[], n.nspname::text), p.proname
            """, ["schemas": names])
        for function in functions {
            let text = ServiceScaffold.identifier(function.schema) + "." + ServiceScaffold.identifier(function.name)
            guard let found = try FunctionCatalog.read(text, on: connection), !found.overloads.isEmpty else { continue }
            catalog.functions.append(
                Function(schema: function.schema, name: function.name, comment: function.comment))
        }
        for index in catalog.relations.indices {
            catalog.relations[index].sampleKey = sampleKey(of: catalog.relations[index], on: connection)
        }
        return catalog
    }

    /// What each view lets a statement write (`pg_relation_is_updatable`,
    /// INSTEAD OF triggers included), and its key, from the table it shows.
    private static func readViews(of rows: [RelationRow], into catalog: inout DatabaseCatalog, on connection: Connection) throws {
        let views = rows.indices.filter { catalog.relations[$0].isView }
        guard !views.isEmpty else { return }
        let lineage = try RelationCatalog.read(tables: views.map { UInt32(rows[$0].oid) }, on: connection)
        for index in views {
            let oid = UInt32(rows[index].oid)
            // Bits of PostgreSQL's command types: UPDATE (2), INSERT (3), DELETE (4).
            catalog.relations[index].canUpdate = rows[index].events & (1 << 2) != 0
            catalog.relations[index].canInsert = rows[index].events & (1 << 3) != 0
            catalog.relations[index].canDelete = rows[index].events & (1 << 4) != 0
            let columns = lineage.relation(oid)?.columns ?? []
            catalog.relations[index].primaryKey =
                lineage.derivedKey(ofView: oid)?.compactMap { number in columns.first { $0.number == number }?.name } ?? []
        }
    }

    /// Whether PostgreSQL can sort values of `type` (a type's name as
    /// `format_type` writes it): asked of PostgreSQL itself, which finds
    /// the ordering of domains, arrays, ranges and enumerations as `ORDER BY` does.
    private static func isOrderable(_ type: String, on connection: Connection) -> Bool {
        (try? connection.fetchOne(Int.self, "SELECT 1 AS one FROM (SELECT NULL::\(type) AS value) probe ORDER BY value")) != nil
    }

    /// The key of the relation's first row (``Relation/sampleKey``), read
    /// through the key's index; `nil` when there is none to read.
    private static func sampleKey(of relation: Relation, on connection: Connection) -> [String]? {
        guard !relation.isView, !relation.primaryKey.isEmpty else { return nil }
        func quoted(_ name: String) -> String { "\"" + name.replacing("\"", with: "\"\"") + "\"" }
        let keys = relation.primaryKey.map(quoted)
        let sql = """
            SELECT concat_ws(chr(31), \(keys.map { "to_jsonb(\($0)) #>> '{}'" }.joined(separator: ", "))) AS key
            FROM \(quoted(relation.schema)).\(quoted(relation.name)) ORDER BY \(keys.joined(separator: ", ")) LIMIT 1
            """
        guard let key = try? connection.fetchOne(String.self, sql) else { return nil }
        let values = key.split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init)
        return values.count == relation.primaryKey.count ? values : nil
    }
}
