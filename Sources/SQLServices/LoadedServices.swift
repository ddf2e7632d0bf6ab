import HTTPServer
import PostgreSQL
import PostgreSQLWebService
import WebService

/// The services of a ``ServiceFolder``: its operations grouped by the
/// first segment of their paths, each group a `WebService` to mount.
///
/// ```swift
/// let loaded = try ServiceFolder("services").load(on: connection)
/// print(loaded.summary)   // 4 operations in 2 services: ...
/// try WebServiceRouter(services: loaded.services, runners: [QueryRunner(pool: pool)])
/// ```
public struct LoadedServices: Sendable {
    /// Every operation, by service, path and method.
    public let operations: [Operation]
    /// One service per first path segment, by name.
    public let services: [any WebService]
    /// The problems of the files left out, by file and line: empty unless
    /// the folder was loaded ``ServiceFolder/load(on:leavingOut:)`` leaving them out.
    public internal(set) var leftOut: [ServiceProblem] = []

    /// The services of `drafts`, whose GET operations read `graph` with `parameters` (``parameters(of:graph:)``).
    init(
        drafts: [OperationDraft], catalog: [PostgresType: PostgresTypeDescription], graph: FolderGraph, parameters: [[Operation.Parameter]]
    ) {
        var operations: [Operation] = []
        var services: [any WebService] = []
        let methods: [HTTPMethod] = [.get, .post, .put, .patch, .delete]
        for name in Set(drafts.map(\.file.serviceName)).sorted() {
            // By path (a list before its objects), then method.
            let group = drafts.indices.filter { drafts[$0].file.serviceName == name }.sorted { first, second in
                (drafts[first].file.path, methods.firstIndex(of: drafts[first].file.method) ?? methods.count) < (
                    drafts[second].file.path, methods.firstIndex(of: drafts[second].file.method) ?? methods.count
                )
            }
            let (results, structures) = Self.results(of: group.map { drafts[$0] }, catalog: catalog)
            let enumerations = Self.detailsEnumerations(of: group.map { drafts[$0] })
            let serviceOperations = group.indices.map { index in
                var result = results[index]
                // Every operation documents the structures and enumerations of the whole service.
                result.structures = structures.structures
                result.enumerations = structures.enumerations
                let draft = drafts[group[index]]
                return Operation(
                    draft, parameters: Self.withDetailsEnumeration(parameters[group[index]], named: enumerations[index]),
                    graph: graph.graph, resource: graph.resources[group[index]], result: result,
                    location: Self.location(of: draft, among: group.map { drafts[$0] }), tableWrite: graph.tableWrites[group[index]],
                    functionCall: graph.functionCalls[group[index]])
            }
            let description = group.compactMap { drafts[$0].file.serviceDescription }.first?.text ?? "Operations on /\(name)."
            services.append(SQLService(path: "/" + name, description: description, routes: serviceOperations.map(\.route)))
            operations += serviceOperations
        }
        self.operations = operations
        self.services = services
    }

    /// What `sql-rest check` prints when all is well: a line of counts,
    /// then a line per operation.
    ///
    /// ```
    /// 4 operations in 2 services:
    ///   GET /departments                      list → [Department]
    ///   GET /departments/{departmentNumber}   object → Department; details: managers, employees
    /// ```
    public var summary: String {
        let count =
            (operations.count == 1 ? "1 operation" : "\(operations.count) operations")
            + " in " + (services.count == 1 ? "1 service" : "\(services.count) services")
        let routes = operations.map { "\($0.method) \($0.path)" }
        let width = routes.map(\.count).max() ?? 0
        let lines = zip(operations, routes).map { operation, route in
            "  " + route.padding(to: width) + "   " + operation.summary
        }
        return ([count + ":"] + lines).joined(separator: "\n")
    }

    /// Each draft's parameters: its own, then, for a GET, those of the
    /// read language on its resource (documented, and the one that reads them).
    static func parameters(of drafts: [OperationDraft], graph: FolderGraph) -> [[Operation.Parameter]] {
        drafts.indices.map { index in
            if drafts[index].kind == .tableWrite { return drafts[index].parameters + [Operation.writeParameter()] }
            if drafts[index].kind == .function {
                var read: [Operation.Parameter] = []
                if let resource = graph.resources[index] {
                    let taken = Set(drafts[index].parameters.map(\.name))
                    read = Operation.readParameters(graph: graph.graph, resource: resource, taken: taken).filter {
                        if case .documented = $0.role { true } else { false }
                    }
                }
                return drafts[index].parameters + read + [Operation.callParameter(readsBody: drafts[index].file.method != .get)]
            }
            guard let resource = graph.resources[index] else { return drafts[index].parameters }
            let own = drafts[index].parameters
            var read = Operation.readParameters(graph: graph.graph, resource: resource, taken: Set(own.map(\.name)))
            for (example, _) in drafts[index].readExamples {
                guard let position = read.firstIndex(where: { $0.name == example.name }) else { continue }
                var runtime = read[position].runtime
                runtime.example = example.text
                read[position] = Operation.Parameter(role: read[position].role, runtime: runtime)
            }
            return own + read
        }
    }

    /// `parameters` with the details' enumeration named `enumeration`.
    private static func withDetailsEnumeration(_ parameters: [Operation.Parameter], named enumeration: String) -> [Operation.Parameter] {
        parameters.map { parameter in
            guard case .details = parameter.role, case .array(.enumeration(_, let values)) = parameter.runtime.type else {
                return parameter
            }
            var runtime = RuntimeParameter<Operation.Argument>.names(
                "details", enumeration: enumeration, values: values, description: parameter.runtime.description
            ) { .names($0) }
            runtime.example = parameter.runtime.example
            return Operation.Parameter(role: .details, runtime: runtime)
        }
    }

    // MARK: - What depends on the whole service

    /// The documented results of a service's operations, in order, and the
    /// structures they name. Objects name their structures first: a list
    /// whose rows differ takes the numbered name.
    private static func results(
        of group: [OperationDraft], catalog: [PostgresType: PostgresTypeDescription]
    ) -> ([ResultDescription], ResultStructures) {
        var structures = ResultStructures(catalog: catalog)
        var results = Array(repeating: ResultDescription(nil), count: group.count)
        let objectsFirst = group.indices.sorted { (group[$0].kind == .object ? 0 : 1, $0) < (group[$1].kind == .object ? 0 : 1, $1) }
        for index in objectsFirst { results[index] = result(of: group[index], structures: &structures) }
        return (results, structures)
    }

    /// The name of each operation's details enumeration (empty without
    /// details): two of one name and other values are told apart by a number.
    private static func detailsEnumerations(of group: [OperationDraft]) -> [String] {
        var taken: [String: [String]] = [:]
        return group.map { draft in
            guard let (name, values) = draft.detailsEnumeration else { return "" }
            var enumeration = name
            var number = 1
            while let other = taken[enumeration], other != values {
                number += 1
                enumeration = name + String(number)
            }
            taken[enumeration] = values
            return enumeration
        }
    }

    /// The documented result: the row's structure, a list of them, or nothing (204).
    /// The structure is named after the path's last name (`/employees/{n}`:
    /// `Employee`; `/titles/{title}/holders`: `Holder`), its details after it
    /// and theirs (`EmployeeTitle`), unless `@returns` names it.
    private static func result(of draft: OperationDraft, structures: inout ResultStructures) -> ResultDescription {
        let singular = Inflection.typeName(Inflection.singular(draft.file.lastName))
        let columns = draft.described.statements.last?.columns ?? []
        if case .write = draft.kind, columns.isEmpty { return ResultDescription(nil) }
        // A table write answers nothing unless asked (`Prefer: return=representation`).
        if draft.kind == .tableWrite { return ResultDescription(nil) }
        if draft.kind == .function, let overload = draft.described.function?.overloads.first {
            switch overload.returns {
            case .none: return ResultDescription(nil)
            case .value(let type): return ResultDescription(ArgumentType.of(type, catalog: structures.catalog).valueType)
            case .values(let type):
                return ResultDescription(.array(ArgumentType.of(type, catalog: structures.catalog).valueType), streamed: true)
            case .rows, .row: break
            }
        }
        let sections = Array(zip(draft.file.sections, draft.described.sections))
        func members(of name: String?, structureName: String) -> [(name: String, type: ValueType)] {
            sections.filter { section, _ in
                name == nil ? section.path.count == 1 : section.path.dropLast().joined(separator: ".") == name && section.path.count > 1
            }.map { section, description in
                let last = section.path.last ?? section.name
                let childName = structureName + Inflection.typeName(Inflection.singular(last))
                let given = structures.structure(
                    named: childName, columns: description.columns, members: members(of: section.name, structureName: childName))
                return (last, .array(.structure(given)))
            }
        }
        let name = draft.file.returns?.typeName ?? singular
        let selects = draft.file.method == .get && !draft.parameters.contains { $0.runtime.name == "select" }
        let structure = structures.structure(
            named: name, columns: columns, members: members(of: nil, structureName: singular), membersChosen: selects)
        switch draft.kind {
        case .list: return ResultDescription(.array(.structure(structure)), streamed: true)
        case .write(returning: .list): return ResultDescription(.array(.structure(structure)))
        case .function:
            if case .rows = draft.described.function?.overloads.first?.returns {
                return ResultDescription(.array(.structure(structure)), streamed: true)
            }
            return ResultDescription(.structure(structure))
        case .object, .write, .tableWrite: return ResultDescription(.structure(structure))
        }
    }

    /// For a POST that returns a row: the path of the service's GET of one
    /// object whose variables the row's columns fill, the one whose path
    /// extends the POST's if there are several.
    private static func location(of draft: OperationDraft, among group: [OperationDraft]) -> String? {
        guard draft.file.method == .post, case .write(returning: .object) = draft.kind else { return nil }
        let columns = Set(draft.described.statements.last?.columns.map(\.label) ?? [])
        let candidates = group.filter { other in
            other.file.method == .get && other.kind == .object && !other.file.variables.isEmpty
                && other.file.variables.allSatisfy(columns.contains)
        }
        let extending = candidates.first { other in
            other.file.segments.count == draft.file.segments.count + 1
                && Array(other.file.segments.prefix(draft.file.segments.count)) == draft.file.segments
        }
        return (extending ?? candidates.first)?.file.path
    }
}

/// The operations of one service, as a `WebService`.
struct SQLService: WebService {
    let path: String
    let description: String
    let routes: [Route]
}

// MARK: - Operations from drafts

extension Operation {
    init(
        _ draft: OperationDraft, parameters: [Operation.Parameter], graph: ResourceGraph, resource: Int?, result: ResultDescription,
        location: String?, tableWrite: TableWrite? = nil, functionCall: FunctionCall? = nil
    ) {
        self.tableWrite = tableWrite
        self.functionCall = functionCall
        file = draft.file.file
        method = draft.file.method
        path = draft.file.path
        serviceName = draft.file.serviceName
        description = draft.file.description
        kind = draft.kind
        detailNames = draft.detailNames
        self.parameters = parameters
        self.resource = resource
        // A GET runs its resource's statement: the file's, unless it had to be wrapped (``FolderGraph``).
        statements =
            resource.map { draft.kind == .tableWrite || draft.kind == .function ? [] : [graph.resources[$0].sql] }
            ?? draft.file.statements.map(\.text)
        details = draft.details
        bindings = draft.bindings
        var detailBindings: [(index: Int, name: String)] = []
        for name in draft.detailNames.sorted() {
            guard let detail = draft.details[name], !detail.isStreamed else { continue }
            for binding in detail.requestBindings where !detailBindings.contains(where: { $0.name == binding.name }) {
                detailBindings.append(binding)
            }
        }
        self.detailBindings = detailBindings
        notFound = draft.notFound
        self.location = location
        self.result = result
        channel = draft.file.listen?.text
    }

    /// One line on what the operation answers with.
    var summary: String {
        var text: String
        switch kind {
        case .list(let paged): text = "list" + (paged ? ", paged" : "")
        case .object: text = "object"
        case .tableWrite: text = "writes " + (tableWrite?.table ?? "a table")
        case .function:
            let count = functionCall?.overloads.count ?? 0
            text = "calls " + (functionCall?.name ?? "a function") + (count > 1 ? " (\(count) overloads)" : "")
        case .write(let returning):
            text =
                "write, " + (statements.count == 1 ? "1 statement" : "\(statements.count) statements")
                + (returning == .list ? ", rows" : "")
        }
        text += " → " + (result.type?.name ?? "nothing (204)")
        if !detailNames.isEmpty { text += "; details: " + detailNames.joined(separator: ", ") }
        if let channel { text += "; relays NOTIFY " + channel }
        if let location { text += "; Location: " + location }
        return text
    }
}

extension String {
    /// The string with spaces after it up to `width` characters.
    func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
