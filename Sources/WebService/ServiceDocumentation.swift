/// The description of a service that `GET /<service>?api` returns, built
/// from the service's declarations.
///
/// ```swift
/// let router = WebServiceRouter(services: [MathService()])
/// router.documentation[0].endpoints[0].path   // "/math/sum"
/// ```
public struct ServiceDocumentation: Sendable, Encodable {
    /// Where the service is mounted (`/math`).
    public let path: String
    public let description: String
    /// One entry per resource path, in declaration order.
    public let endpoints: [EndpointDocumentation]
    /// Every structure type that parameters and results use.
    public let structures: [StructureDocumentation]
    /// Every enumeration that parameters and results use.
    public let enumerations: [EnumerationDocumentation]
}

/// The operations on one resource path.
public struct EndpointDocumentation: Sendable, Encodable {
    /// The full path (`/employees/?:employeeNumber`).
    public let path: String
    public let operations: [OperationDocumentation]
}

/// One route: verb, parameters and result.
public struct OperationDocumentation: Sendable, Encodable {
    public let method: String
    public let description: String
    public let parameters: [ParameterDocumentation]
    /// The result type, or `nil` when the operation returns nothing (204).
    public let result: ValueType?
    /// Whether the result is streamed.
    public let streamed: Bool
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
    public let description: String
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
        self.path = path
        self.description = description
        endpoints = resources.map { resource in
            let routePath = resource.routes[0].route.path.split(separator: "/").joined(separator: "/")
            return EndpointDocumentation(
                path: routePath.isEmpty ? path : path + "/" + routePath,
                operations: resource.routes.map { OperationDocumentation($0, introspector: introspector) }
            )
        }
        structures = introspector.structures
        enumerations = introspector.enumerations
    }
}

extension OperationDocumentation {
    init(_ bound: BoundRoute, introspector: TypeIntrospector) {
        let route = bound.route
        let variables = bound.pattern.variableNames
        method = route.method.rawValue
        description = route.description
        parameters = route.inputs.compactMap { input in
            switch input.kind {
            case .argument(let name, let type, let defaultValue, let hasDefault):
                return ParameterDocumentation(
                    name: name,
                    location: variables.contains(name) ? .path : .argument,
                    type: introspector.describe(type),
                    required: !hasDefault && type.valueWhenAbsent == nil,
                    defaultValue: defaultValue,
                    description: input.description
                )
            case .pathVariable(let index, let type):
                return ParameterDocumentation(
                    name: String(index), location: .path, type: introspector.describe(type),
                    required: true, defaultValue: nil, description: input.description
                )
            case .body(let type):
                return ParameterDocumentation(
                    name: "body", location: .body, type: introspector.describe(type),
                    required: true, defaultValue: nil, description: input.description
                )
            case .request:
                return nil
            case .runtimeArgument(let name, let type, let defaultText, let required):
                introspector.register(type)
                return ParameterDocumentation(
                    name: name, location: variables.contains(name) ? .path : .argument, type: type,
                    required: required, defaultValue: defaultText, description: input.description
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
            result = description == nil ? .any : description!.type
            streamed = description?.streamed ?? false
        }
    }
}
