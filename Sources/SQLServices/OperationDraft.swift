import HTTPServer
import PostgreSQL
import PostgreSQLWebService
import WebService

/// An operation checked against its file's descriptions, before what
/// depends on the other files (`Location`, the structures' names) is known.
struct OperationDraft {
    let file: ServiceFile
    let described: DescribedFile
    let kind: Operation.Kind
    let parameters: [Operation.Parameter]
    let bindings: [(index: Int, name: String)]
    let details: [String: Operation.Detail]
    let detailNames: [String]
    let notFound: (template: String, parameter: String?)?
    /// For a list, the result columns a request may filter on (`@filter`) and order by (`@order`).
    let filterable: Set<String>
    let orderable: Set<String>
    /// The `@example`s of arguments the read language takes (`select`, a
    /// filter), for their documents; `needsGraph` when its value embeds
    /// another resource, to be checked once the folder's `ResourceGraph` is known.
    let readExamples: [(directive: ServiceFile.ExampleDirective, needsGraph: Bool)]

    /// A `@function` file's draft: a documented parameter per argument
    /// of its overloads (the call reads them from the request itself),
    /// every result column filterable and orderable.
    static func function(
        _ described: DescribedFile, catalog: [PostgresType: PostgresTypeDescription], problems: inout [ServiceProblem]
    ) -> OperationDraft? {
        let file = described.file
        let count = problems.count
        var parameters: [Operation.Parameter] = []
        for overload in described.function?.overloads ?? [] {
            for argument in overload.arguments where !argument.name.isEmpty && !parameters.contains(where: { $0.name == argument.name }) {
                let type = ArgumentType.of(argument.type, catalog: catalog)
                let required =
                    described.function?.overloads.allSatisfy { overload in
                        overload.arguments.contains { $0.name == argument.name && !$0.hasDefault }
                    } ?? false
                parameters.append(
                    Operation.Parameter(
                        role: .documented,
                        runtime: .documenting(
                            argument.name, type: type.valueType,
                            description: "The function's argument \(argument.name) (\(argument.typeName))"
                                + (required ? "." : ", which the function may leave to its default."),
                            value: .documented)))
            }
        }
        if let reserved = ReservedPath.claimed(by: file.path) {
            problems.append(
                ServiceProblem(
                    file: file.file, line: file.headerLine,
                    message: "\(reserved.path) is reserved for \(reserved.purpose); name the service otherwise"))
        }
        for example in file.examples {
            guard let index = parameters.firstIndex(where: { $0.name == example.name }) else {
                problems.append(
                    ServiceProblem(
                        file: file.file, line: example.line,
                        message: "@example names \"\(example.name)\", which is not an argument of the function; "
                            + (parameters.isEmpty ? "it takes none" : "its arguments are \(parameters.map(\.name).joined(separator: ", "))")
                    ))
                continue
            }
            var runtime = parameters[index].runtime
            runtime.example = example.text
            parameters[index] = Operation.Parameter(role: parameters[index].role, runtime: runtime)
        }
        guard problems.count == count else { return nil }
        let labels = Set(described.statements.last?.columns.map(\.label) ?? [])
        return OperationDraft(
            file: file, described: described, kind: .function, parameters: parameters, bindings: [], details: [:], detailNames: [],
            notFound: nil, filterable: labels, orderable: labels, readExamples: [])
    }

    private init(
        file: ServiceFile, described: DescribedFile, kind: Operation.Kind, parameters: [Operation.Parameter],
        bindings: [(index: Int, name: String)], details: [String: Operation.Detail], detailNames: [String],
        notFound: (template: String, parameter: String?)?, filterable: Set<String>, orderable: Set<String>,
        readExamples: [(directive: ServiceFile.ExampleDirective, needsGraph: Bool)]
    ) {
        self.file = file
        self.described = described
        self.kind = kind
        self.parameters = parameters
        self.bindings = bindings
        self.details = details
        self.detailNames = detailNames
        self.notFound = notFound
        self.filterable = filterable
        self.orderable = orderable
        self.readExamples = readExamples
    }

    /// The enumeration of the details, if the operation has details.
    var detailsEnumeration: (name: String, values: [String])? {
        for parameter in parameters {
            if case .details = parameter.role, case .array(.enumeration(let name, let values)) = parameter.runtime.type {
                return (name, values)
            }
        }
        return nil
    }

    /// Checks what `described` says against the file's directives; `nil`
    /// (with the problems noted) when anything is wrong.
    init?(_ described: DescribedFile, catalog: [PostgresType: PostgresTypeDescription], problems: inout [ServiceProblem]) {
        let file = described.file
        let count = problems.count
        func problem(_ line: Int, _ message: String) {
            problems.append(ServiceProblem(file: file.file, line: line, message: message))
        }
        self.file = file
        self.described = described

        // The shape, and the directives that only fit some shapes.
        let isWrite = file.method != .get
        if file.writes != nil {
            kind = .tableWrite
        } else if isWrite {
            kind = .write(returning: file.returns?.shape == .list ? .list : .object)
            for section in file.sections {
                problem(
                    section.line,
                    "@\(section.isStreamed ? "stream" : "detail") nests a query in what a GET returns; a \(file.method) answers with its last statement's rows"
                )
            }
            if let line = file.pagedLine { problem(line, "@paged pages what a GET lists") }
            if let listen = file.listen { problem(listen.line, "@listen relays a channel to the event streams of a GET list") }
            if let notFound = file.notFound { problem(notFound.line, "@notfound is the 404 of a GET that returns an object") }
        } else if file.shape == .object {
            kind = .object
            if let line = file.pagedLine {
                problem(line, "@paged pages a list, and this operation returns an object (`@returns list` makes it a list)")
            }
            if let listen = file.listen {
                problem(
                    listen.line,
                    "@listen relays a channel after a list's rows, and this operation returns an object (`@returns list` makes it a list)")
            }
        } else {
            kind = .list(paged: file.pagedLine != nil)
            if let notFound = file.notFound {
                problem(notFound.line, "@notfound is the 404 of an operation that returns an object; a list without rows is []")
            }
            for section in file.sections where section.isStreamed {
                problem(section.line, "@stream adds a streamed member to an object; in a list, use @detail")
            }
        }
        if let reserved = ReservedPath.claimed(by: file.path) {
            problem(file.headerLine, "\(reserved.path) is reserved for \(reserved.purpose); name the service otherwise")
        }

        // The parameters: the path's variables, then `@param`s, then the
        // statements' other parameters in order of appearance.
        let statementNames = described.statements.flatMap(\.parameters)
        let streamedNames = zip(file.sections, described.sections).filter { $0.0.isStreamed }.flatMap { $0.1.parameters }
        var typeByName: [String: PostgresType] = [:]
        for parameter in statementNames + streamedNames + described.sections.flatMap(\.parameters) where typeByName[parameter.name] == nil {
            typeByName[parameter.name] = parameter.type
        }
        var routeNames = file.variables
        for name in file.parameters.map(\.name) + (statementNames + streamedNames).map(\.name) where !routeNames.contains(name) {
            routeNames.append(name)
        }
        for directive in file.parameters where typeByName[directive.name] == nil {
            problem(directive.line, "@param \(directive.name): no statement uses :\(directive.name)")
        }
        for variable in file.variables where typeByName[variable] == nil && file.writes == nil {
            problem(file.headerLine, "the path variable {\(variable)} is not used by any statement (as :\(variable))")
        }
        if let directive = file.parameters.first(where: { file.variables.contains($0.name) && $0.defaultText != nil }) {
            problem(directive.line, "@param \(directive.name) is a path variable, which a request always gives: it takes no default")
        }

        var parameters: [Operation.Parameter] = []
        if file.writes != nil {
            // A table write's path variables are its key columns, read as the filter `eq.` their value.
            for name in file.variables {
                parameters.append(
                    Operation.Parameter(
                        role: .value,
                        runtime: RuntimeParameter(name, as: String.self, description: "The \(name) of the row written.") {
                            .value(.text($0))
                        }))
            }
        }
        for name in routeNames {
            guard let type = typeByName[name] else { continue }
            let directive = file.parameters.first { $0.name == name }
            let argumentType = ArgumentType.of(type, catalog: catalog)
            if let directive, let defaultText = directive.defaultText, !file.variables.contains(name) {
                do {
                    let value = try argumentType.convert([.text(defaultText)])
                    parameters.append(Self.parameter(name, argumentType, directive.description, absent: value, defaultText: defaultText))
                } catch {
                    problem(directive.line, "the default of @param \(name), \(error.received), is not a valid \(error.expected.name)")
                }
            } else {
                let absent: SQLValue? = file.variables.contains(name) ? nil : .null
                parameters.append(Self.parameter(name, argumentType, directive?.description ?? "", absent: absent, defaultText: nil))
            }
        }

        // The details: parents before children, each bound from its parent's columns or the request.
        var detailNames: [String] = []
        var columnsByDetail: [String: [String]] = [:]
        let mainColumns = described.statements.last?.columns.map(\.label) ?? []
        for (section, description) in zip(file.sections, described.sections) {
            let path = section.path
            if path.count == 1 {
                detailNames.append(section.name)
            } else if let parent = file.sections.first(where: { $0.name == path.dropLast().joined(separator: ".") }), parent.isStreamed {
                problem(
                    section.line, "the detail \"\(section.name)\" is nested in \"\(parent.name)\", a streamed member, which takes no detail"
                )
                continue
            } else if columnsByDetail[path.dropLast().joined(separator: ".")] == nil {
                problem(
                    section.line,
                    "the detail \"\(section.name)\" is nested in \"\(path.dropLast().joined(separator: "."))\", which the file does not declare before it"
                )
                continue
            }
            columnsByDetail[section.name] = description.columns.map(\.label)
            let parentColumns = path.count == 1 ? mainColumns : columnsByDetail[path.dropLast().joined(separator: ".")] ?? []
            for parameter in description.parameters {
                let fromRow = !section.isStreamed && parentColumns.contains(parameter.name)
                if !fromRow, !routeNames.contains(parameter.name) {
                    let columns = parentColumns.isEmpty ? "none" : parentColumns.joined(separator: ", ")
                    problem(
                        section.statement.codeLine,
                        """
                        the detail "\(section.name)" uses :\(parameter.name), which neither its parent's columns (\(columns)) \
                        nor the request provide; label a column "\(parameter.name)", or declare @param \(parameter.name)
                        """)
                }
            }
        }
        for reserved in (detailNames.isEmpty ? [] : ["details"]) + (file.pagedLine == nil ? [] : ["limit", "offset"])
        where routeNames.contains(reserved) {
            problem(
                file.parameters.first { $0.name == reserved }?.line ?? file.headerLine,
                "the parameter \"\(reserved)\" is the operation's own (\(reserved == "details" ? "the details asked for" : "the page")): rename :\(reserved)"
            )
        }
        if !detailNames.isEmpty {
            let enumeration = Inflection.typeName(Inflection.singular(file.lastName)) + "Detail"
            let described = file.sections.filter { $0.path.count == 1 && !$0.description.isEmpty }.map { section in
                "`\(section.name)`: " + section.description + (section.description.hasSuffix(".") ? "" : ".")
            }
            let text = (["What to nest, repeated or comma-separated."] + described).joined(separator: " ")
            parameters.append(
                Operation.Parameter(
                    role: .details,
                    runtime: .names("details", enumeration: enumeration, values: detailNames, description: text) { .names($0) }))
        }
        if file.pagedLine != nil {
            parameters.append(
                Operation.Parameter(
                    role: .limit,
                    runtime: RuntimeParameter(
                        "limit", as: Int?.self, description: "At most this many rows (0 or more).", example: 10,
                        constraints: .atLeast(0)
                    ) { .count($0) }))
            parameters.append(
                Operation.Parameter(
                    role: .offset,
                    runtime: RuntimeParameter(
                        "offset", as: Int.self, description: "Skip this many rows first (0 or more).", default: 0, constraints: .atLeast(0)
                    ) { .count($0) }))
        }

        if !isWrite {
            (filterable, orderable) = Self.chosenColumns(
                file: file, labels: described.statements.last?.columns.map(\.label) ?? [], routeNames: routeNames,
                reserved: (detailNames.isEmpty ? [] : ["details"]) + (file.pagedLine == nil ? [] : ["limit", "offset"]),
                problem: problem)
        } else {
            (filterable, orderable) = ([], [])
            for directive in [file.filter, file.order].compactMap({ $0 }) {
                problem(directive.line, "@filter and @order choose among the rows a GET lists")
            }
        }

        // The examples, each a value the parameter takes; those of the read language's arguments are checked later.
        var readExamples: [(directive: ServiceFile.ExampleDirective, needsGraph: Bool)] = []
        for example in file.examples {
            guard let index = parameters.firstIndex(where: { $0.name == example.name }) else {
                if !isWrite {
                    if let example = Self.readExample(
                        example, file: file, columns: described.statements.last?.columns ?? [], catalog: catalog,
                        filterable: filterable, orderable: orderable, taken: parameters.map(\.name), problem: problem)
                    {
                        readExamples.append(example)
                    }
                    continue
                }
                let names = parameters.map(\.name)
                problem(
                    example.line,
                    "@example names \"\(example.name)\", which is not a parameter of the operation; "
                        + (names.isEmpty ? "it takes none" : "its parameters are \(names.joined(separator: ", "))"))
                continue
            }
            do {
                _ = try parameters[index].runtime.value(ofTexts: [example.text])
            } catch {
                problem(
                    example.line,
                    "the value of @example \(example.name), \(error.received), is not a valid \(error.expected.name)"
                        + (error.requirement.map { " " + $0 } ?? ""))
                continue
            }
            var runtime = parameters[index].runtime
            runtime.example = example.text
            parameters[index] = Operation.Parameter(role: parameters[index].role, runtime: runtime)
        }

        // The 404 of an object, whose placeholders name parameters.
        if kind == .object {
            let variable = file.variables.last
            let template =
                file.notFound?.text ?? "There is no \(Inflection.singular(file.lastName))" + (variable.map { " {\($0)}" } ?? "") + "."
            var rest = Substring(template)
            while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
                let name = String(rest[rest.index(after: open)..<close])
                if !routeNames.contains(name) {
                    problem(file.notFound?.line ?? file.headerLine, "@notfound names {\(name)}, which is not a parameter of the operation")
                }
                rest = rest[rest.index(after: close)...]
            }
            notFound = (template, variable)
        } else {
            notFound = nil
        }

        self.readExamples = readExamples
        guard problems.count == count else { return nil }
        let indexByName = Dictionary(parameters.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        // Every name a statement uses has its parameter (it has a type, from
        // the description); a name without one would bind nothing, never trap.
        var seen: Set<String> = []
        bindings = statementNames.map(\.name).compactMap { name in
            guard seen.insert(name).inserted, let index = indexByName[name] else { return nil }
            return (index, name)
        }
        self.parameters = parameters
        self.detailNames = detailNames
        details = Self.details(file: file, described: described, indexByName: indexByName, mainColumns: mainColumns)
    }

    /// The result columns a request may filter on (`@filter`) and order by
    /// (`@order`), of a list. The file's own parameters win: a column of a
    /// parameter's name is no filter (`*` leaves it out; named, it is a
    /// problem), and a file with its own `:order` takes no `@order`. A
    /// column named as a parameter of the read language or the page
    /// (`limit`, `order`, `or`…) is a filter under `*` inside `and=(…)`
    /// and `or=(…)`, where PostgREST takes it too; its short form stays the parameter.
    private static func chosenColumns(
        file: ServiceFile, labels: [String], routeNames: [String], reserved: [String], problem: (Int, String) -> Void
    ) -> (filterable: Set<String>, orderable: Set<String>) {
        let taken = Set(routeNames + reserved + ["order", "select", "or", "and"])
        if file.shape == .object {
            for directive in [file.filter, file.order].compactMap({ $0 }) {
                problem(directive.line, "@filter and @order choose among the rows of a list; this operation returns an object")
            }
        }
        func chosen(_ directive: ServiceFile.ColumnsDirective?, _ name: String, isFilter: Bool) -> Set<String> {
            guard let directive, file.shape == .list else { return [] }
            guard let named = directive.labels else {
                return Set(labels.filter { !isFilter || !routeNames.contains($0) })
            }
            for label in named where !labels.contains(label) {
                problem(
                    directive.line,
                    "@\(name) names \"\(label)\", which is not a column of the result; its columns are \(labels.joined(separator: ", "))")
            }
            for label in named where isFilter && labels.contains(label) && taken.contains(label) {
                problem(
                    directive.line,
                    "@\(name) names \"\(label)\", which is also a parameter of the operation (its own parameters win): rename the column or the parameter"
                )
            }
            return Set(named.filter(labels.contains))
        }
        let filterable = chosen(file.filter, "filter", isFilter: true)
        var orderable = chosen(file.order, "order", isFilter: false)
        if let directive = file.order, routeNames.contains("order") {
            problem(directive.line, "@order takes the parameter \"order\", which the file's own :order already is: rename :order")
            orderable = []
        }
        return (filterable, orderable)
    }

    /// An `@example` of an argument the read language takes, checked as
    /// far as the operation's own columns tell (an embedded resource's
    /// need the folder's graph): a name that is not one of its documented
    /// arguments, or a value its columns refuse, is a problem (`nil`).
    private static func readExample(
        _ example: ServiceFile.ExampleDirective, file: ServiceFile, columns: [StatementDescription.ResultColumn],
        catalog: [PostgresType: PostgresTypeDescription], filterable: Set<String>, orderable: Set<String>, taken: [String],
        problem: (Int, String) -> Void
    ) -> (directive: ServiceFile.ExampleDirective, needsGraph: Bool)? {
        var names = columns.map(\.label).filter(filterable.contains)
        if !orderable.isEmpty { names.append("order") }
        if !filterable.isEmpty { names += ["or", "and"] }
        names.append("select")
        names = names.filter { !taken.contains($0) }
        guard names.contains(example.name) || example.name.contains(".") else {
            problem(
                example.line,
                "@example names \"\(example.name)\", which is not a parameter of the operation; its parameters are "
                    + (taken + names).joined(separator: ", "))
            return nil
        }
        let resource = Resource(
            name: file.lastName, sql: "",
            columns: columns.map { column in
                Resource.Column(
                    described: column, name: nil, catalog: catalog, isFilterable: filterable.contains(column.label),
                    isOrderable: orderable.contains(column.label))
            })
        do {
            _ = try ReadRequest(graph: ResourceGraph([resource]), resource: 0, arguments: [(example.name, [example.text])])
        } catch {
            guard let refusal = error.httpError else { return nil }
            // A relationship: the folder's graph knows it, not the file alone.
            if ["PGRST200", "PGRST201", "PGRST108", "PGRST118", "PGRST119"].contains(refusal.code) { return (example, true) }
            problem(example.line, "the value of @example \(example.name), \"\(example.text)\", is refused: \(refusal.detail)")
            return nil
        }
        return (example, false)
    }

    /// A value parameter, read by its type's conversion. Absent, it takes
    /// `absent` (a default, or NULL); without `absent` it is required.
    private static func parameter(
        _ name: String, _ type: ArgumentType, _ description: String, absent: SQLValue?, defaultText: String?
    ) -> Operation.Parameter {
        let acceptsNull = absent == .null
        let runtime = RuntimeParameter<Operation.Argument>(
            name, type: type.valueType, description: description, whenAbsent: absent.map { .value($0) }, defaultText: defaultText,
            constraints: type.constraints
        ) { inputs throws(ArgumentConversionError) in
            // A JSON null is SQL NULL where absence is too, as for an optional typed parameter.
            if acceptsNull, inputs.count == 1, case .json(.null) = inputs[0] { return .value(.null) }
            return .value(try type.convert(inputs))
        }
        return Operation.Parameter(role: .value, runtime: runtime)
    }

    /// The top-level details, and the request's arguments each binds (a
    /// detail's, and those of the details nested in it, which come with it).
    private static func details(
        file: ServiceFile, described: DescribedFile, indexByName: [String: Int], mainColumns: [String]
    ) -> [String: Operation.Detail] {
        let sections = Array(zip(file.sections, described.sections))
        func children(of name: String) -> [(ServiceFile.Section, StatementDescription)] {
            sections.filter { $0.0.path.dropLast().joined(separator: ".") == name && $0.0.path.count > 1 }
        }
        /// The names a section and its nested ones bind from the request.
        func requestNames(_ section: ServiceFile.Section, _ description: StatementDescription, parentColumns: [String]) -> [String] {
            var names = description.parameters.map(\.name).filter { section.isStreamed || !parentColumns.contains($0) }
            for (child, childDescription) in children(of: section.name) {
                let childNames = requestNames(child, childDescription, parentColumns: description.columns.map(\.label))
                names += childNames.filter { !names.contains($0) }
            }
            return names
        }
        // A detail's names from the request are the operation's parameters (checked before).
        func bindings(_ names: [String]) -> [(Int, String)] {
            names.compactMap { name in indexByName[name].map { ($0, name) } }
        }
        var details: [String: Operation.Detail] = [:]
        for (section, description) in sections where section.path.count == 1 {
            let names = requestNames(section, description, parentColumns: mainColumns)
            details[section.name] = Operation.Detail(
                isStreamed: section.isStreamed, sql: section.statement.text, requestBindings: bindings(names))
        }
        return details
    }
}
