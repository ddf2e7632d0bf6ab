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

    /// The parameters, the enumeration of the details named `enumeration`
    /// (another operation of the service may have named theirs first).
    func parameters(detailsEnumeration enumeration: String) -> [Operation.Parameter] {
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
        if isWrite {
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
        if file.serviceName == "health" {
            problem(file.headerLine, "/health is where the server answers its health checks; name the service otherwise")
        } else if file.serviceName == "openapi.json" {
            problem(file.headerLine, "/openapi.json is the server's OpenAPI document; name the service otherwise")
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
        for variable in file.variables where typeByName[variable] == nil {
            problem(file.headerLine, "the path variable {\(variable)} is not used by any statement (as :\(variable))")
        }
        if let directive = file.parameters.first(where: { file.variables.contains($0.name) && $0.defaultText != nil }) {
            problem(directive.line, "@param \(directive.name) is a path variable, which a request always gives: it takes no default")
        }

        var parameters: [Operation.Parameter] = []
        for name in routeNames {
            guard let type = typeByName[name] else { continue }
            let directive = file.parameters.first { $0.name == name }
            let argumentType = ArgumentType.of(type, catalog: catalog)
            if let defaultText = directive?.defaultText, !file.variables.contains(name) {
                do {
                    let value = try argumentType.convert([.text(defaultText)])
                    parameters.append(
                        Self.parameter(name, argumentType, directive?.description ?? "", absent: value, defaultText: defaultText))
                } catch {
                    problem(directive!.line, "the default of @param \(name), \(error.received), is not a valid \(error.expected.name)")
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
            parameters += Self.chosenParameters(
                file: file, columns: described.statements.last?.columns ?? [], catalog: catalog, routeNames: routeNames,
                reserved: (detailNames.isEmpty ? [] : ["details"]) + (file.pagedLine == nil ? [] : ["limit", "offset"]),
                problem: problem)
        } else {
            for directive in [file.filter, file.order].compactMap({ $0 }) {
                problem(directive.line, "@filter and @order choose among the rows a GET lists")
            }
        }

        // The examples, each a value the parameter takes.
        for example in file.examples {
            guard let index = parameters.firstIndex(where: { $0.name == example.name }) else {
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

        guard problems.count == count else { return nil }
        let indexByName = Dictionary(parameters.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        var bound: [String] = []
        for name in statementNames.map(\.name) where !bound.contains(name) { bound.append(name) }
        bindings = bound.map { (indexByName[$0]!, $0) }
        self.parameters = parameters
        self.detailNames = detailNames
        details = Self.details(file: file, described: described, indexByName: indexByName, mainColumns: mainColumns)
    }

    /// The parameters of the columns a request chooses (``ColumnChoices``):
    /// a filter per column `@filter` names, `order` among those `@order`
    /// names, and `select` on every GET. The file's own parameters win: a
    /// column of a parameter's name is no filter (`*` leaves it out; named,
    /// it is a problem), and a file with its own `:order` or `:select` has
    /// no such choice.
    private static func chosenParameters(
        file: ServiceFile, columns: [StatementDescription.ResultColumn], catalog: [PostgresType: PostgresTypeDescription],
        routeNames: [String], reserved: [String], problem: (Int, String) -> Void
    ) -> [Operation.Parameter] {
        let labels = columns.map(\.label)
        let taken = Set(routeNames + reserved + ["order", "select"])
        if file.shape == .object {
            for directive in [file.filter, file.order].compactMap({ $0 }) {
                problem(directive.line, "@filter and @order choose among the rows of a list; this operation returns an object")
            }
        }
        // JSON and arrays compare by no operator a filter has: no filter on them.
        let comparable = Set(
            columns.filter { column in
                switch ArgumentType.documentedType(of: column.type, catalog: catalog) {
                case .any, .array: false
                default: true
                }
            }.map(\.label))
        func chosen(_ directive: ServiceFile.ColumnsDirective?, _ name: String, isFilter: Bool) -> Set<String> {
            guard let directive, file.shape == .list else { return [] }
            guard let named = directive.labels else {
                return Set(labels.filter { !isFilter || (!taken.contains($0) && comparable.contains($0)) })
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
            for label in named where isFilter && labels.contains(label) && !comparable.contains(label) {
                problem(directive.line, "@\(name) names \"\(label)\", a JSON value or an array, which filters do not compare")
            }
            return Set(named.filter(labels.contains))
        }
        let filterable = chosen(file.filter, "filter", isFilter: true)
        var orderable = chosen(file.order, "order", isFilter: false)
        if let directive = file.order, routeNames.contains("order") {
            problem(directive.line, "@order takes the parameter \"order\", which the file's own :order already is: rename :order")
            orderable = []
        }
        var seen: Set<String> = []
        let choices = ColumnChoices(
            columns.compactMap { column in
                // A label twice: the first column holds it, as in the JSON answer.
                guard seen.insert(column.label).inserted else { return nil }
                let type = ArgumentType.of(column.type, catalog: catalog)
                return ColumnChoices.Column(
                    column.label, type: type.valueType, filterable: filterable.contains(column.label),
                    orderable: orderable.contains(column.label), constraints: type.constraints, convert: type.convert)
            })
        return choices.parameters(select: !routeNames.contains("select")) { .chosen($0) }.map {
            Operation.Parameter(role: .chosen, runtime: $0)
        }
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

    /// The top-level details, each with the details nested in it (always
    /// included), and the request's arguments they bind.
    private static func details(
        file: ServiceFile, described: DescribedFile, indexByName: [String: Int], mainColumns: [String]
    ) -> [String: Operation.Detail] {
        let sections = Array(zip(file.sections, described.sections))
        func children(of name: String) -> [(ServiceFile.Section, StatementDescription)] {
            sections.filter { $0.0.path.dropLast().joined(separator: ".") == name && $0.0.path.count > 1 }
        }
        /// The query of a section with its nested ones, and the names it binds from the request.
        func build(_ section: ServiceFile.Section, _ description: StatementDescription, parentColumns: [String]) -> (Query, [String]) {
            var query = Query.list(section.statement.text)
            var requestNames = description.parameters.map(\.name).filter { !parentColumns.contains($0) }
            for (child, childDescription) in children(of: section.name) {
                let (childQuery, childNames) = build(child, childDescription, parentColumns: description.columns.map(\.label))
                query = query.attaching(child.path.last!, childQuery)
                requestNames += childNames.filter { !requestNames.contains($0) }
            }
            return (query, requestNames)
        }
        var details: [String: Operation.Detail] = [:]
        for (section, description) in sections where section.path.count == 1 {
            if section.isStreamed {
                let names = description.parameters.map(\.name)
                details[section.name] = Operation.Detail(
                    isStreamed: true, query: Query.list(section.statement.text), sql: section.statement.text,
                    requestBindings: names.map { (indexByName[$0]!, $0) })
            } else {
                let (query, names) = build(section, description, parentColumns: mainColumns)
                details[section.name] = Operation.Detail(
                    isStreamed: false, query: query, sql: section.statement.text, requestBindings: names.map { (indexByName[$0]!, $0) })
            }
        }
        return details
    }
}
