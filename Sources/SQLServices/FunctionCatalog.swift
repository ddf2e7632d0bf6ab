import PostgreSQL
import PostgreSQLWebService

/// What PostgreSQL's catalog says of a function a `@function` file calls:
/// each overload's input arguments (names, types, defaults, `VARIADIC`),
/// its volatility and what it returns (`pg_proc`, `pg_type`), and the
/// text of `COMMENT ON FUNCTION`. Procedures are not functions here.
struct FunctionCatalog: Sendable {
    struct Argument: Sendable {
        let name: String
        let type: PostgresType
        let typeName: String
        let isArray: Bool
        let isVariadic: Bool
        let hasDefault: Bool
    }

    /// A column of the rows an overload returns.
    struct Column: Sendable {
        let name: String
        let type: PostgresType
        /// The table column it is, for a function returning a table's rows.
        let table: UInt32?
        let number: Int?
        let isNullable: Bool
    }

    enum Returns: Sendable {
        case rows([Column])
        case row([Column])
        case value(PostgresType)
        case values(PostgresType)
        case none
    }

    struct Overload: Sendable {
        /// `"schema"."name"`.
        let function: String
        let arguments: [Argument]
        let isVolatile: Bool
        let returns: Returns
        /// The type of a lone unnamed `json` or `jsonb` argument, which takes the whole body.
        let wholeBodyType: String?
        let description: String?
    }

    /// The function's name as the catalog spells it (`public.add_them`).
    let name: String
    let overloads: [Overload]
    /// Why overloads were left out (an unnamed argument, a polymorphic type, a `record` without columns).
    let leftOut: [String]

    /// The overloads of the function `text` names (`add_them`, found on
    /// the search path, or `api.add_them`); `nil` when there is none.
    static func read(_ text: String, on connection: Connection) throws -> FunctionCatalog? {
        let rows = try connection.fetchAll(
            OverloadRow.self,
            """
            WITH ident AS (SELECT parse_ident(:name) AS parts)
            SELECT CAST(p.oid AS int8) AS oid, n.nspname AS schema, p.proname AS name,
                   p.provolatile = 'v' AS "isVolatile", p.proretset AS "returnsSet",
                   CAST(coalesce(b.typtype, t.typtype) AS text) AS "returnKind",
                   CAST(coalesce(b.typrelid, t.typrelid) AS int8) AS "returnRelation",
                   CAST(p.prorettype AS int8) AS "returnType", CAST(p.pronargdefaults AS int4) AS "defaultCount",
                   obj_description(p.oid, 'pg_proc') AS description
            FROM pg_catalog.pg_proc p
            JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
            JOIN pg_catalog.pg_type t ON t.oid = p.prorettype
            -- A domain's base type says what the function returns (a domain over a table's row type is its rows).
            LEFT JOIN pg_catalog.pg_type b ON t.typtype = 'd' AND b.oid = t.typbasetype, ident
            WHERE p.prokind = 'f' AND p.proname = ident.parts[cardinality(ident.parts)]
              AND CASE WHEN cardinality(ident.parts) = 2 THEN n.nspname = ident.parts[1]
                       ELSE cardinality(ident.parts) = 1 AND pg_catalog.pg_function_is_visible(p.oid) END
            ORDER BY p.oid
            """, ["name": text])
        guard let first = rows.first else { return nil }
        var overloads: [Overload] = []
        var leftOut: [String] = []
        for row in rows {
            let arguments = try connection.fetchAll(
                ArgumentRow.self,
                """
                SELECT coalesce(a.name, '') AS name, CAST(a.type AS int8) AS type, format_type(a.type, NULL) AS "typeName",
                       CAST(a.mode AS text) AS mode, t.typcategory = 'A' AS "isArray", t.typtype = 'p' AS "isPseudo"
                FROM pg_catalog.pg_proc p,
                     unnest(coalesce(p.proallargtypes, CAST(p.proargtypes AS oid[])),
                            coalesce(p.proargmodes, array_fill(CAST('i' AS "char"), ARRAY[cardinality(CAST(p.proargtypes AS oid[]))])),
                            p.proargnames) WITH ORDINALITY AS a(type, mode, name, position)
                JOIN pg_catalog.pg_type t ON t.oid = a.type
                WHERE p.oid = CAST(:oid AS oid)
                ORDER BY a.position
                """, ["oid": row.oid])
            let inputs = arguments.filter { ["i", "b", "v"].contains($0.mode) }
            let outputs = arguments.filter { ["o", "b", "t"].contains($0.mode) }
            let signature = "\(row.name)(\(inputs.map(\.typeName).joined(separator: ", ")))"
            if inputs.contains(where: \.isPseudo) {
                leftOut.append("\(signature) takes a polymorphic argument, which a request cannot type")
                continue
            }
            var wholeBodyType: String?
            if inputs.contains(where: \.name.isEmpty) {
                guard inputs.count == 1, ["json", "jsonb"].contains(inputs[0].typeName) else {
                    leftOut.append("\(signature) has an unnamed argument, which a request cannot name")
                    continue
                }
                wholeBodyType = inputs[0].typeName
            }
            let returns: Returns
            if row.returnType == 2278 {
                returns = .none
            } else if row.returnKind == "c" || (row.returnType == 2249 && !outputs.isEmpty) {
                let columns: [Column]
                if row.returnRelation != 0 {
                    columns = try connection.fetchAll(
                        AttributeRow.self,
                        """
                        SELECT a.attname AS name, CAST(a.atttypid AS int8) AS type, CAST(a.attnum AS int4) AS number,
                               NOT a.attnotnull AS "isNullable", CAST(c.relkind AS text) AS kind
                        FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
                        WHERE a.attrelid = CAST(:relation AS oid) AND a.attnum > 0 AND NOT a.attisdropped
                        ORDER BY a.attnum
                        """, ["relation": row.returnRelation]
                    ).map { attribute in
                        // A composite type's own attributes are no table's columns.
                        let isRelation = attribute.kind != "c"
                        return Column(
                            name: attribute.name, type: PostgresType(oid: UInt32(attribute.type)),
                            table: isRelation ? UInt32(row.returnRelation) : nil, number: isRelation ? attribute.number : nil,
                            isNullable: attribute.isNullable || !isRelation)
                    }
                } else {
                    columns = outputs.map {
                        Column(name: $0.name, type: PostgresType(oid: UInt32($0.type)), table: nil, number: nil, isNullable: true)
                    }
                }
                returns = row.returnsSet ? .rows(columns) : .row(columns)
            } else if row.returnKind == "p" {
                leftOut.append("\(signature) returns \(row.returnType == 2249 ? "record without a column list" : "a pseudo-type")")
                continue
            } else {
                let type = PostgresType(oid: UInt32(row.returnType))
                returns = row.returnsSet ? .values(type) : .value(type)
            }
            let defaults = max(0, row.defaultCount)
            overloads.append(
                Overload(
                    function: quoted(row.schema) + "." + quoted(row.name),
                    arguments: inputs.enumerated().map { index, argument in
                        Argument(
                            name: argument.name, type: PostgresType(oid: UInt32(argument.type)), typeName: argument.typeName,
                            isArray: argument.isArray, isVariadic: argument.mode == "v", hasDefault: index >= inputs.count - defaults)
                    },
                    isVolatile: row.isVolatile, returns: returns, wholeBodyType: wholeBodyType, description: row.description))
        }
        return FunctionCatalog(name: first.schema + "." + first.name, overloads: overloads, leftOut: leftOut)
    }

    private struct OverloadRow: Decodable {
        let oid: Int
        let schema: String
        let name: String
        let isVolatile: Bool
        let returnsSet: Bool
        let returnKind: String
        let returnRelation: Int
        let returnType: Int
        let defaultCount: Int
        let description: String?
    }

    private struct ArgumentRow: Decodable {
        let name: String
        let type: Int
        let typeName: String
        let mode: String
        let isArray: Bool
        let isPseudo: Bool
    }

    private struct AttributeRow: Decodable {
        let name: String
        let type: Int
        let number: Int
        let isNullable: Bool
        let kind: String
    }
}
