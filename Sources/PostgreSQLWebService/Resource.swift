import PostgreSQL
import WebService

/// What a request may read in PostgREST's language: the rows of a
/// statement, which the request filters, orders, pages, narrows to some
/// columns and embeds other resources in, along the resource's
/// relationships. A service file's list, the table a catalog relationship
/// reaches, a file's `@detail`, a Swift service's list: each is a resource
/// of a ``ResourceGraph``.
///
/// ```swift
/// let employees = Resource(
///     name: "employees",
///     sql: #"SELECT emp_no AS "employeeNumber", last_name AS "lastName" FROM employees ORDER BY emp_no"#,
///     columns: [.init("employeeNumber", type: .int4), .init("lastName", type: .text)],
///     relationships: [.init(name: "titles", target: 1, cardinality: .many, link: .parameters)])
/// ```
public struct Resource: Sendable {
    /// A column of the resource's rows.
    public struct Column: Sendable {
        /// The label rows are written with, and the name a request uses.
        public var label: String
        /// Other names a request may use for it (its database name, when the label differs).
        public var aliases: [String]
        /// Its PostgreSQL type.
        public var type: PostgresType
        /// How `?api` and the problems name its type.
        public var valueType: ValueType
        /// Whether a request may filter on it (`lastName=eq.Facello`, in `or` too).
        public var isFilterable: Bool
        /// Whether a request may order by it (`order=lastName.desc`).
        public var isOrderable: Bool
        /// Checks a filter's value before it is sent (a 400 naming the
        /// parameter and the type); `nil`: PostgreSQL reads the value as
        /// the column's type, as it writes the column's values.
        public var check: (@Sendable (String) -> Bool)?

        /// A column of `type`; `valueType` by default as PostgreSQL's type
        /// reads; orderable when filterable unless `isOrderable` says.
        ///
        /// ```swift
        /// Resource.Column("hireDate", type: .date, aliases: ["hire_date"])
        /// ```
        public init(
            _ label: String, type: PostgresType, valueType: ValueType? = nil, aliases: [String] = [], isFilterable: Bool = true,
            isOrderable: Bool? = nil, check: (@Sendable (String) -> Bool)? = nil
        ) {
            self.label = label
            self.type = type
            self.valueType = valueType ?? type.valueType
            self.aliases = aliases
            self.isFilterable = isFilterable
            self.isOrderable = isOrderable ?? isFilterable
            self.check = check ?? type.valueCheck
        }
    }

    /// A function of the resource's row that a request may select, filter
    /// and order by as if it were a column (PostgREST's computed field):
    /// `full_name(people)`. Called with the row rebuilt as the table's
    /// type from the resource's columns, which must hold every column of
    /// the table, in order.
    public struct ComputedColumn: Sendable {
        /// The name a request uses.
        public var name: String
        /// The function, schema-qualified and quoted (`"public"."full_name"`).
        public var function: String
        /// The labels of the table's columns, in the table's order, and its type (quoted).
        public var rowColumns: [String]
        public var rowType: String
        public var type: PostgresType

        public init(name: String, function: String, rowColumns: [String], rowType: String, type: PostgresType) {
            self.name = name
            self.function = function
            self.rowColumns = rowColumns
            self.rowType = rowType
            self.type = type
        }
    }

    /// The name requests embed it by (a table's name), and others they may use (its path's).
    public var name: String
    public var aliases: [String]
    /// The schema of the table or view it reads, for messages and event streams
    /// (``listKey``); `nil` when it reads no one relation.
    public var schema: String?
    /// The statement whose rows it is (named parameters), in its own order.
    public var sql: String
    /// Its columns, in the statement's order.
    public var columns: [Column]
    /// Its relationships, which a request embeds by name.
    public var relationships: [Relationship]
    /// Its computed columns.
    public var computedColumns: [ComputedColumn]
    /// Labels of columns whose values identify a row (a primary key), when known.
    public var key: [String]

    public init(
        name: String, aliases: [String] = [], schema: String? = nil, sql: String, columns: [Column], relationships: [Relationship] = [],
        computedColumns: [ComputedColumn] = [], key: [String] = []
    ) {
        self.name = name
        self.aliases = aliases
        self.schema = schema
        self.sql = sql
        self.columns = columns
        self.relationships = relationships
        self.computedColumns = computedColumns
        self.key = key
    }

    /// The column a request names `name` (its label, or one of its aliases).
    func column(named name: String) -> Column? {
        columns.first { $0.label == name } ?? columns.first { $0.aliases.contains(name) }
    }

    /// Whether `name` names the resource.
    func isNamed(_ name: String) -> Bool {
        self.name == name || aliases.contains(name)
    }
}

/// How one resource reaches another: the rows of the target that belong
/// to a row of the source.
///
/// ```swift
/// Relationship(name: "album", constraint: "track_album_id_fkey", columns: ["album_id"], target: 0, cardinality: .one,
///              link: .columns([.init(source: "albumId", target: "albumId")]))
/// ```
public struct Relationship: Sendable {
    /// How many target rows a source row has.
    public enum Cardinality: Sendable {
        /// Any number: embedded as an array.
        case many
        /// At most one: embedded as an object, or `null`.
        case one
    }

    /// A source column and the target column that must equal it.
    public struct ColumnPair: Sendable, Hashable {
        public var source: String
        public var target: String

        public init(source: String, target: String) {
            self.source = source
            self.target = target
        }
    }

    /// How the target's rows are matched to a source row.
    public enum Link: Sendable {
        /// The target's statement names `:label` parameters of the source
        /// row's columns (a `@detail`).
        case parameters
        /// Target columns equal to source columns (a foreign key).
        case columns([ColumnPair])
        /// Through a junction table (quoted, schema-qualified): its
        /// `source` columns equal the source row's, and its `target`
        /// columns the target row's (a many-to-many relationship).
        case junction(table: String, source: [(junction: String, source: String)], target: [(junction: String, target: String)])
    }

    /// The name a request embeds it by (the target's name, a detail's name).
    public var name: String
    /// The foreign key's name, which a request may give as a hint (`album!track_album_id_fkey(*)`).
    public var constraint: String?
    /// The foreign key's columns on the side that holds them (hints by column: `album!album_id(*)`).
    public var columns: [String]
    /// The target, by index in its ``ResourceGraph``.
    public var target: Int
    public var cardinality: Cardinality
    public var link: Link
    /// PostgREST's name for its kind (`many-to-one`, `one-to-many`,
    /// `one-to-one`, `many-to-many`), for the choices of an ambiguous
    /// embed; `nil`: told from `cardinality` and `link`.
    public var kind: String?
    /// How PostgREST describes it among the choices of an ambiguous embed:
    /// `fk_name using table(columns) and other(columns)`.
    public var summary: String?

    public init(
        name: String, constraint: String? = nil, columns: [String] = [], target: Int, cardinality: Cardinality, link: Link,
        kind: String? = nil, summary: String? = nil
    ) {
        self.name = name
        self.constraint = constraint
        self.columns = columns
        self.target = target
        self.cardinality = cardinality
        self.link = link
        self.kind = kind
        self.summary = summary
    }
}

/// The resources a set of services reads, which refer to each other by
/// index: relationships run both ways (an album's tracks, a track's
/// album), so the graph holds them all and each relationship names its
/// target's place.
///
/// ```swift
/// let graph = ResourceGraph([employees, titles])
/// ```
public final class ResourceGraph: Sendable {
    public let resources: [Resource]
    /// Each resource's columns as a request writes them without `select`
    /// (or with `*`), made once here rather than on every request.
    let allColumns: [[ReadRequest.Member]]
    /// Each resource's root node for a request without arguments.
    let plainRoots: [ReadRequest.Node]

    public init(_ resources: [Resource]) {
        self.resources = resources
        let allColumns = resources.map { resource in
            resource.columns.map { ReadRequest.Member.expression(ReadRequest.Expression(source: .column($0)), key: $0.label) }
        }
        self.allColumns = allColumns
        plainRoots = resources.indices.map { ReadRequest.Node(resource: resources[$0], path: [], members: allColumns[$0]) }
    }
}

extension PostgresType {
    /// How a column of this type is documented.
    var valueType: ValueType {
        switch self {
        case .int2, .int4: .integer
        case .int8: .long
        case .float4, .float8, .numeric: .double
        case .bool: .boolean
        case .date: .date
        case .timestamp, .timestamptz: .dateTime
        case .uuid: .uuid
        default: .string
        }
    }

    /// The check of a filter's value for this type, where one is exact
    /// and cheap; `nil` for the others, which PostgreSQL reads.
    var valueCheck: (@Sendable (String) -> Bool)? {
        switch self {
        case .int2: { Int16($0) != nil }
        case .int4: { Int32($0) != nil }
        case .int8: { Int64($0) != nil }
        case .bool: { ["true", "false", "t", "f", "1", "0", "yes", "no", "on", "off"].contains($0.lowercased()) }
        case .uuid: { UUIDText.isValid($0) }
        default: nil
        }
    }
}

/// A UUID's text as PostgreSQL reads it: 32 hexadecimal digits, in the
/// usual 8-4-4-4-12 groups or without hyphens, braces allowed.
enum UUIDText {
    static func isValid(_ text: String) -> Bool {
        var digits = 0
        for scalar in text.unicodeScalars {
            switch scalar {
            case "0"..."9", "a"..."f", "A"..."F": digits += 1
            case "-", "{", "}": continue
            default: return false
            }
        }
        return digits == 32
    }
}
