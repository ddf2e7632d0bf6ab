import PostgreSQL
import PostgreSQLWebService
import WebService

// MARK: - The calls of `@function` files

extension FolderGraph {
    /// The call of each `@function` draft, by the draft's index, from its
    /// overloads and the results `Builder.addFunction` made of them.
    static func functionCalls(of drafts: [OperationDraft], results: [Int: [FunctionCall.Result]], graph: ResourceGraph) -> [FunctionCall?] {
        var functionCalls: [FunctionCall?] = Array(repeating: nil, count: drafts.count)
        for (index, results) in results {
            guard let function = drafts[index].described.function else { continue }
            let overloads = zip(function.overloads, results).map { overload, result in
                FunctionCall.Overload(
                    function: overload.function,
                    arguments: overload.arguments.map {
                        FunctionCall.Argument(
                            name: $0.name, typeName: $0.typeName, isArray: $0.isArray, isVariadic: $0.isVariadic, hasDefault: $0.hasDefault)
                    },
                    isVolatile: overload.isVolatile, result: result, wholeBodyType: overload.wholeBodyType)
            }
            functionCalls[index] = FunctionCall(name: function.name, overloads: overloads, graph: graph)
        }
        return functionCalls
    }
}

// MARK: - The resources of `@function` files

extension FolderGraph.Builder {
    /// A resource for each overload of a `@function` draft that returns
    /// rows, its columns labelled as the table's resource labels them
    /// (a function of a table's rows), else as `sql-rest init` labels
    /// columns; each column also named by its own name. The rows' table
    /// columns are its lineage: a function returning a table's rows
    /// embeds what that table embeds.
    mutating func addFunction(_ draft: OperationDraft) -> [FunctionCall.Result] {
        guard let function = draft.described.function else { return [] }
        return function.overloads.map { overload in
            let found: [FunctionCatalog.Column]
            switch overload.returns {
            case .rows(let columns), .row(let columns): found = columns
            case .value: return .value
            case .values: return .values
            case .none: return .none
            }
            var used: Set<String> = []
            var columns: [Resource.Column] = []
            var lineage: [FolderGraph.ColumnID?] = []
            var pairs: [(name: String, label: String)] = []
            for column in found {
                let known = column.table.flatMap { relationColumns[$0]?.first { $0.name == column.name }?.label }
                var label = known ?? ServiceScaffold.lowerCamelCase(column.name)
                if used.contains(label) { label = column.name }
                guard used.insert(label).inserted else { continue }
                columns.append(self.column(label, type: column.type, name: column.name, isFilterable: true, isOrderable: true))
                lineage.append(column.table.flatMap { table in column.number.map { FolderGraph.ColumnID(table: table, column: $0) } })
                pairs.append((column.name, label))
            }
            let resource = add(Resource(name: draft.file.lastName, sql: "", columns: columns), lineage: lineage)
            if case .rows = overload.returns { return .rows(resource: resource, columns: pairs) }
            return .row(resource: resource, columns: pairs)
        }
    }
}
