import PostgreSQL
import PostgreSQLWebService
import WebService

/// The `ResourceGraph` of a folder, built when it is loaded: what its
/// GET operations read in PostgREST's language.
///
/// - Each GET operation is a resource: its statement, its result columns
///   (filterable and orderable as `@filter` and `@order` say), each also
///   named by its table column's name when its label differs (so that
///   PostgREST's clients' `snake_case` names work), its key the primary
///   key of a table it shows whole.
/// - Each `@detail` is a resource, embedded by its name from its parent's
///   row (bound by parameters): `details=titles` reads as `select=*,titles(*)`.
/// - Each table and view of the schemas the statements read is a resource,
///   `SELECT "column" AS "label", … FROM "schema"."table"`, with the labels
///   the folder's list of it gives its columns (else `sql-rest init`'s),
///   named by the table's name and its list's path.
/// - Relationships, as PostgREST infers them, run from any of these to a
///   table or view whose columns hold the other end of a foreign key, seen
///   through views: many-to-one (an object), one-to-many (an array),
///   one-to-one when the key's columns are unique, many-to-many through a
///   table whose primary key holds both keys' columns. A self-reference's
///   many-to-one is named by its column (`parent(*)`), its one-to-many by
///   the table (`family_tree!parent(*)`).
/// - Functions of one table row returning a scalar are computed columns
///   of each resource that holds every column of the table.
struct FolderGraph {
    let graph: ResourceGraph
    /// The resource of each draft, by the draft's index: a GET's own, a
    /// table write's table's; `nil` for another write.
    let resources: [Int?]
    /// The table each `@writes` draft writes, by the draft's index.
    let tableWrites: [TableWrite?]
    /// The function each `@function` draft calls, by the draft's index.
    let functionCalls: [FunctionCall?]
    /// The `@writes` that name no table or view.
    let problems: [ServiceProblem]

    init(drafts: [OperationDraft], types: [PostgresType: PostgresTypeDescription], on connection: Connection) throws {
        var tables: Set<UInt32> = []
        for draft in drafts where draft.file.method == .get || draft.kind == .function {
            for description in draft.described.descriptions {
                for column in description.columns { if let table = column.table { tables.insert(table) } }
            }
        }
        var written: [Int: UInt32] = [:]
        var problems: [ServiceProblem] = []
        for (index, draft) in drafts.enumerated() {
            guard let writes = draft.file.writes else { continue }
            let found = try connection.fetchAll(
                TableRow.self, "SELECT CAST(to_regclass(:name) AS oid) AS oid", ["name": writes.text]
            ).first?.oid
            guard let oid = found else {
                problems.append(
                    ServiceProblem(
                        file: draft.file.file, line: writes.line, message: "@writes names \(writes.text), which is not a table or view"))
                continue
            }
            written[index] = oid
            tables.insert(oid)
        }
        self.problems = problems
        let catalog = try RelationCatalog.read(tables: tables.sorted(), on: connection)
        var builder = Builder(catalog: catalog, types: types)
        var resources = drafts.map { draft in draft.file.method == .get && draft.kind != .function ? builder.addOperation(draft) : nil }
        builder.addRelations(lists: drafts.filter { $0.kind != .object && $0.kind != .function && $0.file.method == .get })
        var functionResults: [Int: [FunctionCall.Result]] = [:]
        for (index, draft) in drafts.enumerated() where draft.kind == .function {
            let results = builder.addFunction(draft)
            functionResults[index] = results
            for result in results {
                switch result {
                case .rows(let resource, _), .row(let resource, _): resources[index] = resources[index] ?? resource
                default: break
                }
            }
        }
        builder.addForeignKeys()
        builder.addJunctions()
        builder.addComputedColumns()
        graph = ResourceGraph(builder.finished())
        var tableWrites: [TableWrite?] = Array(repeating: nil, count: drafts.count)
        for (index, oid) in written {
            guard let relation = catalog.relation(oid), let resource = builder.relationResource[oid] else { continue }
            resources[index] = resource
            var columns = builder.relationColumns[oid] ?? []
            let defaults = try connection.fetchAll(
                ColumnRow.self,
                """
                SELECT a.attname AS name,
                       CASE WHEN a.attidentity <> '' THEN 'nextval(' || quote_literal(pg_get_serial_sequence(:table, a.attname)) || ')'
                            ELSE pg_get_expr(d.adbin, d.adrelid) END AS expression,
                       (SELECT '"pg_catalog".' || quote_ident(t.typname) FROM pg_catalog.pg_type t
                        WHERE t.oid = a.atttypid AND t.typnamespace = 'pg_catalog'::regnamespace) AS "typeName",
                       a.atttypid IN ('json'::regtype, 'jsonb'::regtype) AS "isJSON"
                FROM pg_catalog.pg_attribute a LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                WHERE a.attrelid = CAST(:oid AS oid) AND a.attnum > 0 AND NOT a.attisdropped
                """, ["oid": Int(oid), "table": relation.qualifiedName])
            for index in columns.indices {
                guard let row = defaults.first(where: { $0.name == columns[index].name }) else { continue }
                columns[index].defaultExpression = row.expression
                columns[index].typeName = row.typeName
                columns[index].isJSON = row.isJSON
            }
            // A view's rows are written by the key of the table it shows (an updatable view, or one with INSTEAD OF triggers).
            let keyNumbers = catalog.primaryKeys[oid] ?? (relation.isView ? catalog.derivedKey(ofView: oid) : nil) ?? []
            let key = keyNumbers.compactMap { number in relation.columns.first { $0.number == number }?.name }
            let path =
                "/"
                + drafts[index].file.segments.prefix { if case .literal = $0 { true } else { false } }.map { segment in
                    if case .literal(let text) = segment { text } else { "" }
                }.joined(separator: "/")
            var write = TableWrite(
                table: relation.qualifiedName, path: path, columns: columns, key: key, graph: graph, resource: resource,
                isTable: relation.isTable)
            write.writesEveryRowUnfiltered = drafts[index].file.unfilteredLine != nil
            tableWrites[index] = write
        }
        self.resources = resources
        self.tableWrites = tableWrites
        functionCalls = Self.functionCalls(of: drafts, results: functionResults, graph: graph)
    }

    private struct TableRow: Decodable {
        let oid: UInt32?
    }

    private struct ColumnRow: Decodable {
        let name: String
        let expression: String?
        let typeName: String?
        let isJSON: Bool
    }

    /// The problems of the `@example`s of read-language arguments that
    /// embed another resource: a value the operation's resource refuses.
    func exampleProblems(_ drafts: [OperationDraft]) -> [ServiceProblem] {
        var problems: [ServiceProblem] = []
        for (index, draft) in drafts.enumerated() {
            guard let resource = resources[index] else { continue }
            for (example, needsGraph) in draft.readExamples where needsGraph {
                do {
                    _ = try ReadRequest(graph: graph, resource: resource, arguments: [(example.name, [example.text])])
                } catch {
                    let detail = error.httpError?.detail ?? "it is refused"
                    problems.append(
                        ServiceProblem(
                            file: draft.file.file, line: example.line,
                            message: "the value of @example \(example.name), \"\(example.text)\", is refused: \(detail)"))
                }
            }
        }
        return problems
    }
}

// MARK: - Building

extension FolderGraph {
    typealias ColumnID = RelationCatalog.ColumnID

    struct Builder {
        let catalog: RelationCatalog
        let types: [PostgresType: PostgresTypeDescription]
        var resources: [Resource] = []
        /// For each resource, the label of each table column it shows (seen through views), the first one's.
        var covers: [[ColumnID: String]] = []
        /// For each resource, the label of each column of a table or view it shows as it is (for computed columns).
        var shows: [[ColumnID: String]] = []
        /// The resources that show each table column.
        var showing: [ColumnID: [Int]] = [:]
        /// The resources of the catalog's relations, by OID.
        var relationResource: [UInt32: Int] = [:]
        /// The copies of relation resources under another name (a self-reference's many-to-one), by original and name.
        var copies: [String: (original: Int, copy: Int)] = [:]
        /// The columns of the catalog's relations, with the labels their resources give them, by OID.
        var relationColumns: [UInt32: [TableWrite.Column]] = [:]

        init(catalog: RelationCatalog, types: [PostgresType: PostgresTypeDescription]) {
            self.catalog = catalog
            self.types = types
        }

        mutating func add(_ resource: Resource, lineage: [ColumnID?]) -> Int {
            let index = resources.count
            resources.append(resource)
            var covered: [ColumnID: String] = [:]
            var shown: [ColumnID: String] = [:]
            for (column, origin) in zip(resource.columns, lineage) {
                guard let origin else { continue }
                if shown[origin] == nil { shown[origin] = column.label }
                if let base = catalog.base(of: origin), covered[base] == nil {
                    covered[base] = column.label
                    showing[base, default: []].append(index)
                }
            }
            covers.append(covered)
            shows.append(shown)
            return index
        }

        /// A column described by PostgreSQL: its label, type, and the table column it is, as a resource column.
        func column(_ described: StatementDescription.ResultColumn, isFilterable: Bool, isOrderable: Bool) -> Resource.Column {
            let name = described.table.flatMap { table in
                described.tableColumn.flatMap { number in catalog.relation(table)?.columns.first { $0.number == number }?.name }
            }
            return column(described.label, type: described.type, name: name, isFilterable: isFilterable, isOrderable: isOrderable)
        }

        func column(_ label: String, type: PostgresType, name: String?, isFilterable: Bool, isOrderable: Bool) -> Resource.Column {
            Resource.Column(label, type: type, name: name, catalog: types, isFilterable: isFilterable, isOrderable: isOrderable)
        }

        // MARK: Operations and details

        /// The resource of a GET operation, and those of its details.
        mutating func addOperation(_ draft: OperationDraft) -> Int {
            let described = Self.unique(draft.described.statements.last?.columns ?? [])
            let columns = described.map {
                column($0, isFilterable: draft.filterable.contains($0.label), isOrderable: draft.orderable.contains($0.label))
            }
            let resource = add(
                Resource(
                    name: draft.file.lastName, sql: Self.resourceSQL(draft.file.statements[0].text, labels: columns.map(\.label)),
                    columns: columns),
                lineage: described.map(Self.origin))
            var sections: [String: Int] = [:]
            for (section, description) in zip(draft.file.sections, draft.described.sections) where !section.isStreamed {
                let parent = section.path.count == 1 ? resource : sections[section.path.dropLast().joined(separator: ".")]
                guard let parent else { continue }
                let detailColumns = Self.unique(description.columns)
                let detail = add(
                    Resource(
                        name: section.path.last ?? section.name,
                        sql: Self.resourceSQL(section.statement.text, labels: detailColumns.map(\.label)),
                        columns: detailColumns.map { column($0, isFilterable: true, isOrderable: true) }),
                    lineage: detailColumns.map(Self.origin))
                sections[section.name] = detail
                resources[parent].relationships.append(
                    Relationship(name: section.path.last ?? section.name, target: detail, cardinality: .many, link: .parameters))
            }
            return resource
        }

        static func origin(_ column: StatementDescription.ResultColumn) -> ColumnID? {
            guard let table = column.table, let number = column.tableColumn else { return nil }
            return ColumnID(table: table, column: number)
        }

        /// The columns with a label not taken by an earlier one (which the JSON answer holds).
        static func unique(_ columns: [StatementDescription.ResultColumn]) -> [StatementDescription.ResultColumn] {
            var seen: Set<String> = []
            return columns.filter { seen.insert($0.label).inserted }
        }

        /// A statement as a resource reads it: as written, unless it labels
        /// a column by an unquoted alias with capitals, which PostgreSQL
        /// names in lower case (`AS employeeNumber` is `employeenumber`):
        /// then wrapped, so that each column is named as it is labelled.
        static func resourceSQL(_ sql: String, labels: [String]) -> String {
            let spelling = StatementShape.of(sql).labelSpelling
            let folded = { (label: String) in spelling[label.lowercased()] == label && label != label.lowercased() }
            guard labels.contains(where: folded) else { return sql }
            let list = labels.map { (folded($0) ? quoted($0.lowercased()) : quoted($0)) + " AS " + quoted($0) }
            return "SELECT " + list.joined(separator: ", ") + " FROM (" + sql + "\n) AS \"statement\""
        }

        // MARK: Tables and views

        /// A resource for each table and view of the schemas read, labelled
        /// as the list of `lists` that reads it labels its columns.
        mutating func addRelations(lists: [OperationDraft]) {
            for relation in catalog.relations {
                let list = Self.list(reading: relation, among: lists)
                var labels: [Int: String] = [:]
                for column in list?.described.statements.last?.columns ?? [] {
                    if column.table == relation.oid, let number = column.tableColumn, labels[number] == nil {
                        labels[number] = column.label
                    }
                }
                var used: Set<String> = []
                var columns: [Resource.Column] = []
                var lineage: [ColumnID?] = []
                var selected: [String] = []
                for column in relation.columns {
                    var label = labels[column.number] ?? ServiceScaffold.lowerCamelCase(column.name)
                    if used.contains(label) { label = column.name }
                    guard used.insert(label).inserted else { continue }
                    columns.append(self.column(label, type: column.type, name: column.name, isFilterable: true, isOrderable: true))
                    lineage.append(ColumnID(table: relation.oid, column: column.number))
                    selected.append(quoted(column.name) + " AS " + quoted(label))
                    relationColumns[relation.oid, default: []].append(TableWrite.Column(name: column.name, label: label))
                }
                var aliases: [String] = []
                for alias in [list?.file.serviceName, ServiceScaffold.segment(relation.name)].compactMap({ $0 })
                where alias != relation.name && !aliases.contains(alias) {
                    aliases.append(alias)
                }
                let sql = "SELECT " + selected.joined(separator: ", ") + " FROM " + relation.qualifiedName
                relationResource[relation.oid] = add(
                    Resource(name: relation.name, aliases: aliases, sql: sql, columns: columns), lineage: lineage)
            }
        }

        /// The list whose rows are `relation`'s: every column of it that
        /// shows a table's column shows `relation`'s; the one of its name first.
        static func list(reading relation: RelationCatalog.Relation, among lists: [OperationDraft]) -> OperationDraft? {
            let readers = lists.filter { draft in
                let columns = draft.described.statements.last?.columns.filter { $0.table != nil } ?? []
                return !columns.isEmpty && columns.allSatisfy { $0.table == relation.oid }
            }
            return readers.first { $0.file.serviceName == ServiceScaffold.segment(relation.name) } ?? readers.first
        }

        // MARK: Relationships

        /// The resources that show every one of `columns`, with the label of each.
        func showing(all columns: [ColumnID]) -> [(resource: Int, labels: [String])] {
            guard let first = columns.first else { return [] }
            return (showing[first] ?? []).compactMap { resource in
                var labels: [String] = []
                for column in columns {
                    guard let label = covers[resource][column] else { return nil }
                    labels.append(label)
                }
                return (resource, labels)
            }
        }

        /// The resources of tables and views: a relationship's targets.
        var relationTargets: Set<Int> { Set(relationResource.values) }

        /// Each foreign key's many-to-one (one-to-one) and one-to-many relationships.
        mutating func addForeignKeys() {
            let targets = relationTargets
            for key in catalog.foreignKeys {
                let child = key.columns.map { ColumnID(table: key.table, column: $0) }
                let parent = key.referencedColumns.map { ColumnID(table: key.referenced, column: $0) }
                guard child.count == parent.count, !child.isEmpty else { continue }
                let isSelf = key.table == key.referenced
                let isUnique = catalog.isUnique(key.columns, of: key.table)
                let names = columnNames(key.columns, of: key.table)
                let parents = showing(all: parent).filter { targets.contains($0.resource) }
                let children = showing(all: child).filter { targets.contains($0.resource) }
                for source in showing(all: child) {
                    for target in parents {
                        let pairs = zip(source.labels, target.labels).map { Relationship.ColumnPair(source: $0, target: $1) }
                        var name = resources[target.resource].name
                        var targetIndex = target.resource
                        if isSelf {
                            name = names.count == 1 ? names[0] : key.name
                            targetIndex = copy(of: target.resource, named: name)
                        }
                        resources[source.resource].relationships.append(
                            Relationship(
                                name: name, constraint: key.name, columns: names, target: targetIndex, cardinality: .one,
                                link: .columns(pairs)))
                    }
                }
                for source in showing(all: parent) {
                    for target in children {
                        let pairs = zip(source.labels, target.labels).map { Relationship.ColumnPair(source: $0, target: $1) }
                        resources[source.resource].relationships.append(
                            Relationship(
                                name: resources[target.resource].name, constraint: key.name, columns: names, target: target.resource,
                                cardinality: isUnique ? .one : .many, link: .columns(pairs)))
                    }
                }
            }
        }

        /// Many-to-many relationships through each table whose primary key
        /// holds the columns of two foreign keys to two other tables.
        mutating func addJunctions() {
            let targets = relationTargets
            let keysByTable = Dictionary(grouping: catalog.foreignKeys, by: \.table)
            for (table, keys) in keysByTable {
                guard let primaryKey = catalog.primaryKeys[table].map(Set.init), let junction = catalog.relation(table) else { continue }
                let held = keys.filter { Set($0.columns).isSubset(of: primaryKey) }
                for first in held {
                    for second in held where second.name != first.name && second.referenced != first.referenced {
                        let sourceColumns = first.referencedColumns.map { ColumnID(table: first.referenced, column: $0) }
                        let targetColumns = second.referencedColumns.map { ColumnID(table: second.referenced, column: $0) }
                        let firstNames = columnNames(first.columns, of: table)
                        let secondNames = columnNames(second.columns, of: table)
                        for source in showing(all: sourceColumns) {
                            for target in showing(all: targetColumns) where targets.contains(target.resource) {
                                let link = Relationship.Link.junction(
                                    table: junction.qualifiedName,
                                    source: zip(firstNames, source.labels).map { (junction: $0, source: $1) },
                                    target: zip(secondNames, target.labels).map { (junction: $0, target: $1) })
                                resources[source.resource].relationships.append(
                                    Relationship(
                                        name: resources[target.resource].name, target: target.resource, cardinality: .many, link: link))
                            }
                        }
                    }
                }
            }
        }

        func columnNames(_ numbers: [Int], of table: UInt32) -> [String] {
            let relation = catalog.relation(table)
            return numbers.map { number in relation?.columns.first { $0.number == number }?.name ?? String(number) }
        }

        /// The index of `original`'s copy named `name`, made once.
        mutating func copy(of original: Int, named name: String) -> Int {
            let key = "\(original)/\(name)"
            if let known = copies[key] { return known.copy }
            let index = resources.count
            var copy = resources[original]
            copy.name = name
            copy.aliases = []
            resources.append(copy)
            covers.append([:])
            shows.append([:])
            copies[key] = (original, index)
            return index
        }

        // MARK: Computed columns and keys

        /// Each function of a relation's row, on each resource showing every column of it.
        mutating func addComputedColumns() {
            for function in catalog.functions {
                guard let relation = catalog.relations.first(where: { $0.rowType == function.argument }) else { continue }
                let columns = relation.columns.map { ColumnID(table: relation.oid, column: $0.number) }
                for index in resources.indices {
                    let labels = columns.compactMap { shows[index][$0] }
                    guard labels.count == columns.count, resources[index].column(label: function.name) == nil,
                        !resources[index].computedColumns.contains(where: { $0.name == function.name })
                    else { continue }
                    resources[index].computedColumns.append(
                        Resource.ComputedColumn(
                            name: function.name, function: quoted(function.schema) + "." + quoted(function.name), rowColumns: labels,
                            rowType: relation.qualifiedName, type: function.returns))
                }
            }
        }

        /// The resources with their keys, and each copy as its original ends.
        func finished() -> [Resource] {
            var finished = resources
            for index in finished.indices where finished[index].key.isEmpty {
                finished[index].key = key(of: index)
            }
            for (original, copy) in copies.values {
                let name = finished[copy].name
                finished[copy] = finished[original]
                finished[copy].name = name
                finished[copy].aliases = []
            }
            return finished
        }

        /// The labels of the primary key of the first table whose key the resource shows whole.
        func key(of resource: Int) -> [String] {
            var tables: [UInt32] = []
            for column in resources[resource].columns {
                if let origin = covers[resource].first(where: { $0.value == column.label })?.key, !tables.contains(origin.table) {
                    tables.append(origin.table)
                }
            }
            for table in tables {
                guard let key = catalog.primaryKeys[table] else { continue }
                let labels = key.compactMap { covers[resource][ColumnID(table: table, column: $0)] }
                if labels.count == key.count { return labels }
            }
            return []
        }
    }
}

extension Resource.Column {
    /// A column of `type`, documented as its argument type is, named
    /// `name` too in the database when that differs from `label`; a value
    /// of an enumeration is checked against its labels.
    init(
        _ label: String, type: PostgresType, name: String?, catalog: [PostgresType: PostgresTypeDescription], isFilterable: Bool,
        isOrderable: Bool
    ) {
        let valueType = ArgumentType.documentedType(of: type, catalog: catalog)
        var check: (@Sendable (String) -> Bool)?
        if case .enumeration(_, let labels) = valueType { check = { labels.contains($0) } }
        self.init(
            label, type: type, valueType: valueType, aliases: name.map { $0 == label ? [] : [$0] } ?? [], isFilterable: isFilterable,
            isOrderable: isOrderable, check: check)
    }

    /// The column PostgreSQL described.
    init(
        described: StatementDescription.ResultColumn, name: String?, catalog: [PostgresType: PostgresTypeDescription],
        isFilterable: Bool, isOrderable: Bool
    ) {
        self.init(described.label, type: described.type, name: name, catalog: catalog, isFilterable: isFilterable, isOrderable: isOrderable)
    }
}

extension Resource {
    /// The column labelled `label`, if any.
    func column(label: String) -> Column? {
        columns.first { $0.label == label }
    }
}
