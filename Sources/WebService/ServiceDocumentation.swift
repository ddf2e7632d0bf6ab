/// The description of a service that `GET /<service>?api` returns, built
/// from the service's declarations.
///
/// ```swift
/// let router = try WebServiceRouter(services: [MathService()])
/// router.documentation[0].endpoints[0].path   // "/math/sum"
/// ```
public struct ServiceDocumentation: Sendable, Encodable {
    /// Where the service is mounted (`/math`).
    public let path: String
    public let description: String
    /// One entry per resource path, in declaration order.
    public private(set) var endpoints: [EndpointDocumentation]
    /// Every structure type that parameters and results use.
    public let structures: [StructureDocumentation]
    /// Every enumeration that parameters and results use.
    public let enumerations: [EnumerationDocumentation]
}

/// The operations on one resource path.
public struct EndpointDocumentation: Sendable, Encodable {
    /// The full path as OpenAPI writes it (`/employees/{employeeNumber}`;
    /// `{0}` for a positional variable).
    public let path: String
    public internal(set) var operations: [OperationDocumentation]
    /// The full path as the router writes it (`/employees/?:employeeNumber`).
    let routePath: String

    private enum CodingKeys: String, CodingKey {
        case path, operations
    }
}

/// One route: verb, parameters and result.
public struct OperationDocumentation: Sendable, Encodable {
    public let method: String
    /// The operation's name in the OpenAPI document (`employees.getByEmployeeNumber`),
    /// shared by the overloads of one verb on one path; see ``OperationID``.
    public let operationId: String
    public let description: String
    public let parameters: [ParameterDocumentation]
    /// The result type, or `nil` when the operation returns nothing (204).
    public let result: ValueType?
    /// Whether the result is streamed.
    public let streamed: Bool
    /// The names of the route's own path variables by position (a
    /// positional one by its index), which an overload may name otherwise
    /// than the endpoint's path does.
    let pathVariableNames: [String]
    /// Whether the handler builds the whole response (any status).
    let handlerBuildsResponse: Bool
    /// Whether a runner streams the result (a query's list): it then also
    /// answers `Accept: text/csv`, and pages (`Link`, `Content-Range`).
    let isRunnableList: Bool

    /// The example request `?api` shows (a `curl` command line on the
    /// page's host); set when the service's documentation is built.
    public internal(set) var example = ""

    /// The parameters but the filters on result columns.
    var plainParameters: [ParameterDocumentation] { parameters.filter { $0.filteredType == nil } }
    /// The filters on result columns (``RuntimeParameter/filteredType``).
    var filters: [ParameterDocumentation] { parameters.filter { $0.filteredType != nil } }

    private enum CodingKeys: String, CodingKey {
        case method, operationId, description, parameters, filters, filterSyntax, result, streamed, example, notes
    }

    /// The JSON form of `?api`: the filters apart from the other
    /// parameters, each with its column's type, the operators said once.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(method, forKey: .method)
        try container.encode(operationId, forKey: .operationId)
        try container.encode(description, forKey: .description)
        try container.encode(plainParameters, forKey: .parameters)
        let filters = self.filters
        if !filters.isEmpty {
            try container.encode(filters, forKey: .filters)
            try container.encode(Self.filterSyntax, forKey: .filterSyntax)
        }
        try container.encodeIfPresent(result, forKey: .result)
        try container.encode(streamed, forKey: .streamed)
        try container.encode(example, forKey: .example)
        let notes = self.notes
        if !notes.isEmpty { try container.encode(notes, forKey: .notes) }
    }
}

/// One input of a route.
public struct ParameterDocumentation: Sendable, Encodable {
    /// Where a parameter's value comes from.
    public enum Location: String, Sendable, Encodable {
        /// A path variable.
        case path
        /// The query string, a form field or a member of a JSON object body.
        case argument
        /// The whole JSON body.
        case body
    }

    public let name: String
    public let location: Location
    public let type: ValueType
    public let required: Bool
    /// The value taken when the argument is absent, as text.
    public let defaultValue: String?
    /// A typical value, as text.
    public let example: String?
    public let description: String
    /// The default and the example as a request sends them, one text per
    /// repetition of the name.
    let defaultTexts: [String]?
    let exampleTexts: [String]?
    /// Whether one text may hold several values separated by commas (``CommaList``).
    let commaSeparated: Bool
    /// A regular expression each text matches (``RuntimeParameter/pattern``).
    public var pattern: String? = nil
    /// What the values must be beyond the type, as the parameter enforces it.
    public var constraints: ArgumentConstraints = .none
    /// For a filter on a result column, the column's type (``RuntimeParameter/filteredType``).
    public var filteredType: ValueType? = nil
    /// Whether it chooses the result's members (``RuntimeParameter/choosesMembers``).
    var choosesMembers = false

    private enum CodingKeys: String, CodingKey {
        case name, location, type, required, defaultValue, example, description, minimum, maximum, minItems, allowedValues, pattern
    }

    /// The JSON form of `?api`: a filter's `type` is its column's; the
    /// constraints as OpenAPI names them.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(location, forKey: .location)
        try container.encode(filteredType ?? type, forKey: .type)
        try container.encode(required, forKey: .required)
        try container.encodeIfPresent(defaultValue, forKey: .defaultValue)
        try container.encodeIfPresent(example, forKey: .example)
        try container.encode(description, forKey: .description)
        try container.encodeIfPresent(constraints.minimum, forKey: .minimum)
        try container.encodeIfPresent(constraints.maximum, forKey: .maximum)
        try container.encodeIfPresent(constraints.minimumCount, forKey: .minItems)
        if let values = allowedValues { try container.encode(values, forKey: .allowedValues) }
        // A filter's pattern spells out its operators; the operation's `filterSyntax` says them.
        if filteredType == nil { try container.encodeIfPresent(pattern, forKey: .pattern) }
    }

    /// The values an enumeration parameter (or a list of one) allows.
    var allowedValues: [String]? {
        switch filteredType ?? type {
        case .enumeration(_, let values), .array(.enumeration(_, let values)): values
        default: nil
        }
    }

    /// The description, with how to give several values when a text may hold them.
    var fullDescription: String {
        guard commaSeparated else { return description }
        let note = "Repeat the name for each value, or separate values by commas (`a,b`)."
        return description.isEmpty ? note : description + " " + note
    }
}

/// A structure's fields, in declaration order.
public struct StructureDocumentation: Sendable, Encodable {
    public struct Field: Sendable, Encodable {
        public let name: String
        public let type: ValueType
        public let required: Bool
    }

    public let name: String
    public let fields: [Field]
    /// Whether a request may leave out any member (`select`): the OpenAPI
    /// document then requires none, though each keeps its type and nullability.
    public var membersChosen = false

    private enum CodingKeys: String, CodingKey {
        case name, fields
    }
}

/// An enumeration's allowed values.
public struct EnumerationDocumentation: Sendable, Encodable {
    public let name: String
    public let values: [String]
}

extension ValueType: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}

// MARK: - Building from declarations

extension ServiceDocumentation {
    init(path: String, description: String, resources: [Resource]) {
        let introspector = TypeIntrospector()
        var operationIDs = OperationID.Assigner(servicePath: path)
        self.path = path
        self.description = description
        var endpoints = resources.map { resource in
            let routePath = resource.pattern.text
            let fullPath = routePath.isEmpty ? path : path + "/" + routePath
            return EndpointDocumentation(
                path: OpenAPIDocument.pathTemplate(fullPath).template,
                operations: resource.routes.map { bound in
                    OperationDocumentation(
                        bound, operationId: operationIDs.id(method: bound.route.method, pattern: resource.pattern),
                        introspector: introspector
                    )
                },
                routePath: fullPath
            )
        }
        var structures = introspector.structures
        // A result whose members a request chooses (`select`) may lack any of them.
        for endpoint in endpoints {
            for operation in endpoint.operations where operation.parameters.contains(where: \.choosesMembers) {
                var result = operation.result
                while case .array(let element)? = result { result = element }
                if case .structure(let name)? = result, let index = structures.firstIndex(where: { $0.name == name }) {
                    structures[index].membersChosen = true
                }
            }
        }
        self.structures = structures
        enumerations = introspector.enumerations
        self.endpoints = []
        for index in endpoints.indices {
            for position in endpoints[index].operations.indices {
                endpoints[index].operations[position].example = exampleRequest(
                    endpoints[index].operations[position], path: endpoints[index].routePath)
            }
        }
        self.endpoints = endpoints
    }
}

extension OperationDocumentation {
    init(_ bound: BoundRoute, operationId: String, introspector: TypeIntrospector) {
        let route = bound.route
        let variables = bound.pattern.variableNames
        let declaredVariables = RoutePattern(route.path).variableNames
        method = route.method.rawValue
        self.operationId = operationId
        var pathVariableNames: [String] = []
        for segment in bound.pattern.segments {
            switch segment {
            case .literal: continue
            case .named(let name): pathVariableNames.append(name)
            case .positional: pathVariableNames.append(String(pathVariableNames.count))
            }
        }
        self.pathVariableNames = pathVariableNames
        if case .response = route.result { handlerBuildsResponse = true } else { handlerBuildsResponse = false }
        switch route.result {
        case .runnable(let type?) where type is any Collection.Type: isRunnableList = true
        case .described(let description?) where description.streamed: isRunnableList = true
        default: isRunnableList = false
        }
        description = route.description
        parameters = route.inputs.compactMap { input in
            switch input.kind {
            case .argument(let name, let type, let defaultTexts, let exampleTexts):
                // A variable this path leaves out (an optional last one) is not an input here.
                if declaredVariables.contains(name), !variables.contains(name) { return nil }
                return ParameterDocumentation(
                    name: name,
                    location: variables.contains(name) ? .path : .argument,
                    type: introspector.describe(type),
                    required: defaultTexts == nil && (type.valueWhenAbsent == nil || input.constraints.requiresValues),
                    defaultValue: defaultTexts.map { $0.joined(separator: ",") },
                    example: exampleTexts.map { $0.joined(separator: ",") },
                    description: input.description,
                    defaultTexts: defaultTexts, exampleTexts: exampleTexts,
                    commaSeparated: type is any CommaSeparatedValues.Type, constraints: input.constraints
                )
            case .pathVariable(let index, let type):
                return ParameterDocumentation(
                    name: String(index), location: .path, type: introspector.describe(type), required: true,
                    defaultValue: nil, example: nil, description: input.description,
                    defaultTexts: nil, exampleTexts: nil, commaSeparated: false
                )
            case .body(let type):
                return ParameterDocumentation(
                    name: "body", location: .body, type: introspector.describe(type), required: true,
                    defaultValue: nil, example: nil, description: input.description,
                    defaultTexts: nil, exampleTexts: nil, commaSeparated: false
                )
            case .request:
                return nil
            case .runtimeArgument(let argument):
                introspector.register(argument.type)
                if let filteredType = argument.filteredType { introspector.register(filteredType) }
                var isNameList = false
                if case .array(.enumeration) = argument.type { isNameList = true }
                // A list of names may be given comma-separated: its example's texts are the names.
                let exampleTexts = argument.exampleText.map { isNameList ? $0.split(separator: ",").map(String.init) : [$0] }
                return ParameterDocumentation(
                    name: argument.name, location: variables.contains(argument.name) ? .path : .argument, type: argument.type,
                    required: argument.required, defaultValue: argument.defaultText, example: argument.exampleText,
                    description: input.description, defaultTexts: argument.defaultText.map { [$0] }, exampleTexts: exampleTexts,
                    commaSeparated: isNameList, pattern: argument.pattern, constraints: input.constraints,
                    filteredType: argument.filteredType, choosesMembers: argument.choosesMembers
                )
            }
        }
        switch route.result {
        case .value(let type):
            result = introspector.describe(type)
            streamed = false
        case .none:
            result = nil
            streamed = false
        case .response(let type):
            result = type.map(introspector.describe) ?? .any
            streamed = false
        case .stream(let type):
            result = type.map(introspector.describe) ?? .any
            streamed = true
        case .runnable(let type):
            // A runnable result streams its lists (a query's rows) and sends an object whole.
            result = type.map(introspector.describe) ?? .any
            streamed = type.map { $0 is any Collection.Type } ?? false
        case .described(let description):
            for structure in description?.structures ?? [] { introspector.register(structure) }
            for enumeration in description?.enumerations ?? [] { introspector.register(enumeration) }
            result = if let description { description.type } else { .any }
            streamed = description?.streamed ?? false
        }
    }
}
