internal import CLibPQ

/// What PostgreSQL says about a statement without running it: the types it
/// inferred for the parameters, and the columns of its result with their
/// types, where they come from and whether they can be NULL.
///
/// ```swift
/// let description = try connection.describe("SELECT emp_no AS \"employeeNumber\", hire_date FROM employees WHERE emp_no = :id")
/// description.parameters[0]        // id: int4
/// description.columns[0].label     // "employeeNumber"
/// description.columns[1].isNullable // false (employees.hire_date is NOT NULL)
/// ```
public struct StatementDescription: Sendable, Hashable {
    /// A named parameter and the type the server inferred for it.
    public struct Parameter: Sendable, Hashable {
        public var name: String
        public var type: PostgresType

        public init(name: String, type: PostgresType) {
            self.name = name
            self.type = type
        }
    }

    /// One column of the result.
    public struct ResultColumn: Sendable, Hashable {
        /// The label rows are written with (an `AS` alias spelled as in the SQL).
        public var label: String
        public var type: PostgresType
        /// The table the column is read from unchanged (`pg_class.oid`), if any.
        public var table: UInt32?
        /// Its number among the table's columns (`pg_attribute.attnum`), if any.
        public var tableColumn: Int?
        /// `false` when the column is a table's column declared `NOT NULL`;
        /// `true` for any other (an expression, an outer join may still
        /// make a `NOT NULL` column's value NULL: the catalog cannot say).
        public var isNullable: Bool

        public init(label: String, type: PostgresType, table: UInt32?, tableColumn: Int?, isNullable: Bool) {
            self.label = label
            self.type = type
            self.table = table
            self.tableColumn = tableColumn
            self.isNullable = isNullable
        }
    }

    /// The parameters in order of first appearance in the SQL.
    public var parameters: [Parameter]
    /// The result's columns; none for a statement without rows (an `UPDATE` without `RETURNING`).
    public var columns: [ResultColumn]

    public init(parameters: [Parameter], columns: [ResultColumn]) {
        self.parameters = parameters
        self.columns = columns
    }
}

/// A data type as the catalog describes it (`pg_type`), for the types that
/// are not built in: enumerations, domains, arrays of them.
///
/// ```swift
/// let types = try connection.describeTypes([PostgresType(oid: 16_404)])
/// types[PostgresType(oid: 16_404)]?.enumLabels   // ["M", "F"]
/// ```
public struct PostgresTypeDescription: Sendable, Hashable {
    public var type: PostgresType
    /// The type's name (`gender`), without its schema.
    public var name: String
    /// `pg_type.typtype`: `b` base, `e` enumeration, `d` domain, `c` composite, `r` range, `p` pseudo.
    public var kind: Character
    /// A domain's underlying type.
    public var baseType: PostgresType?
    /// An array type's element type.
    public var elementType: PostgresType?
    /// An enumeration's labels, in their order.
    public var enumLabels: [String]
}

extension Connection {
    /// Prepares `sql` (named parameters) and describes it. Throws the
    /// server's error when the statement does not prepare (a syntax error,
    /// an unknown table or column, a parameter whose type cannot be
    /// inferred); ``DatabaseError/position`` then says where.
    public func describe(_ sql: String) throws -> StatementDescription {
        let statement = try preparedStatement(for: sql)
        let result = try describePrepared(statement)

        let parameterTypes = result.parameterTypes
        let parameters = zip(statement.parameters.names, parameterTypes).map {
            StatementDescription.Parameter(name: $0, type: PostgresType(oid: $1))
        }
        var columns = statement.spelled(result.columns).enumerated().map { index, column in
            let table = PQftable(result.handle, Int32(index))
            let tableColumn = Int(PQftablecol(result.handle, Int32(index)))
            return StatementDescription.ResultColumn(
                label: column.label, type: column.type, table: table == 0 ? nil : table,
                tableColumn: tableColumn == 0 ? nil : tableColumn, isNullable: true)
        }
        let tables = Array(Set(columns.compactMap(\.table)))
        if !tables.isEmpty {
            let notNull = try notNullColumns(of: tables)
            for index in columns.indices {
                if let table = columns[index].table, let number = columns[index].tableColumn, notNull.contains([Int(table), number]) {
                    columns[index].isNullable = false
                }
            }
        }
        return StatementDescription(parameters: parameters, columns: columns)
    }

    /// `(table OID, column number)` of the columns declared `NOT NULL` in `tables`.
    private func notNullColumns(of tables: [UInt32]) throws -> Set<[Int]> {
        let rows = try query(
            """
            SELECT attrelid::int8 AS "table", attnum::int8 AS "column" FROM pg_catalog.pg_attribute
            WHERE attrelid = ANY(CAST(:tables AS pg_catalog.oid[])) AND attnum > 0 AND attnotnull
            """, ["tables": tables])
        var columns: Set<[Int]> = []
        while let row = try rows.next() {
            if let table = row[0].flatMap({ Int($0) }), let column = row[1].flatMap({ Int($0) }) { columns.insert([table, column]) }
        }
        return columns
    }

    /// Whether running `sql` would write: its plan (`EXPLAIN` of the
    /// prepared statement with every parameter NULL) modifies a table, in
    /// the statement itself or in a `WITH` query, or locks rows (`FOR
    /// UPDATE`). A role that may not run the statement may not `EXPLAIN`
    /// it either: then its words tell (`INSERT`, `UPDATE`, `DELETE` or
    /// `MERGE` outside strings and comments, `FOR UPDATE` and `FOR SHARE`
    /// included). A function that writes on its own is not seen: run such
    /// statements as a role that may not write.
    ///
    /// ```swift
    /// try connection.planWrites("WITH gone AS (DELETE FROM t RETURNING *) SELECT * FROM gone")   // true
    /// ```
    public func planWrites(_ sql: String) throws -> Bool {
        let statement = try preparedStatement(for: sql)
        let nulls = Array(repeating: "NULL", count: statement.parameters.names.count).joined(separator: ", ")
        let arguments = nulls.isEmpty ? "" : "(\(nulls))"
        let result: QueryResult
        do {
            if preparesNothing {
                let values = [String?](repeating: nil, count: statement.parameters.names.count)
                result = try runSimple("EXPLAIN (FORMAT JSON) " + statement.parameters.sql, values: values)
            } else {
                result = try runSimple("EXPLAIN (FORMAT JSON) EXECUTE \(statement.name)\(arguments)")
            }
        } catch let error as DatabaseError where error.code == .insufficientPrivilege {
            return SQLTokens.hasWritingWord(statement.parameters.sql)
        }
        var plan = ""
        for row in 0..<result.rowCount { plan += result.string(row: row, column: 0) ?? "" }
        return plan.contains(#""Node Type": "ModifyTable""#) || plan.contains(#""Node Type": "LockRows""#)
    }

    /// The catalog's description of each of `types` (those it knows).
    ///
    /// ```swift
    /// try connection.describeTypes([.int4])[.int4]?.name   // "int4"
    /// ```
    public func describeTypes(_ types: [PostgresType]) throws -> [PostgresType: PostgresTypeDescription] {
        guard !types.isEmpty else { return [:] }
        let oids = types.map(\.oid)
        var descriptions: [PostgresType: PostgresTypeDescription] = [:]
        let rows = try query(
            """
            SELECT oid::int8, typname::text, typtype::text, typbasetype::int8, typelem::int8, typcategory::text
            FROM pg_catalog.pg_type WHERE oid = ANY(CAST(:oids AS pg_catalog.oid[]))
            """, ["oids": oids])
        while let row = try rows.next() {
            guard let oid = row[0].flatMap({ UInt32($0) }) else { continue }
            let base = row[3].flatMap { UInt32($0) } ?? 0
            let element = row[4].flatMap { UInt32($0) } ?? 0
            let isArray = row[5] == "A"
            descriptions[PostgresType(oid: oid)] = PostgresTypeDescription(
                type: PostgresType(oid: oid), name: row[1] ?? "", kind: row[2]?.first ?? "b",
                baseType: base == 0 ? nil : PostgresType(oid: base),
                elementType: isArray && element != 0 ? PostgresType(oid: element) : nil, enumLabels: [])
        }
        let labels = try query(
            """
            SELECT enumtypid::int8, enumlabel::text FROM pg_catalog.pg_enum
            WHERE enumtypid = ANY(CAST(:oids AS pg_catalog.oid[])) ORDER BY enumtypid, enumsortorder
            """, ["oids": oids])
        while let row = try labels.next() {
            guard let oid = row[0].flatMap({ UInt32($0) }), let label = row[1] else { continue }
            descriptions[PostgresType(oid: oid)]?.enumLabels.append(label)
        }
        return descriptions
    }
}
