import HTTPServer

/// The operations of the mounted services as JSON-RPC methods, by their
/// OpenAPI `operationId`, and the OpenRPC document that `rpc.discover`
/// returns. Built from the same ``ServiceDocumentation`` as `?api` and
/// `/openapi.json`, when first needed.
struct JSONRPCMethods: Sendable {
    /// What a call needs to become the request its route would get.
    struct Method: Sendable {
        let httpMethod: HTTPMethod
        /// The endpoint's path split at `/`: literals, and `nil` for a variable.
        let segments: [String?]
        /// For each overload, its path variables' names in order.
        let pathVariableNames: [[String]]
        /// Whether the route takes a whole JSON body (the `body` param).
        let takesBody: Bool
    }

    let methods: [String: Method]
    let openRPC: [UInt8]

    init(services: [ServiceDocumentation], info: OpenAPIInfo) {
        var methods: [String: Method] = [:]
        for service in services {
            for endpoint in service.endpoints {
                let segments: [String?] = endpoint.path.split(separator: "/").map { segment in
                    segment == "?" || segment.hasPrefix("?:") ? nil : String(segment)
                }
                for operation in endpoint.operations where methods[operation.operationId] == nil {
                    let overloads = endpoint.operations.filter { $0.operationId == operation.operationId }
                    methods[operation.operationId] = Method(
                        httpMethod: HTTPMethod(rawValue: operation.method),
                        segments: segments,
                        pathVariableNames: overloads.map(\.pathVariableNames),
                        takesBody: overloads.contains { $0.parameters.contains { $0.location == .body } })
                }
            }
        }
        self.methods = methods
        openRPC = OpenRPCDocument(services: services, info: info).json
    }
}

/// The OpenRPC 1.2.6 document of the JSON-RPC methods: one method per
/// `operationId`, its params the operation's path variables and
/// arguments (and `body` for a route that takes one) by name, each
/// required only when every overload requires it; schemas as in the
/// OpenAPI document, shared ones under `components/schemas`.
struct OpenRPCDocument {
    let services: [ServiceDocumentation]
    let info: OpenAPIInfo

    var json: [UInt8] {
        let schemas = OpenAPIDocument(services: services, info: info)
        typealias JSON = OpenAPIDocument.JSON
        var infoObject: JSON = ["title": .string(info.title), "version": .string(info.version)]
        if !info.description.isEmpty { infoObject["description"] = .string(info.description) }
        var methods: [JSON] = []
        var named: Set<String> = []
        for service in services {
            for endpoint in service.endpoints {
                for operation in endpoint.operations where named.insert(operation.operationId).inserted {
                    let overloads = endpoint.operations.filter { $0.operationId == operation.operationId }
                    var params: [JSON] = []
                    var seen: Set<String> = []
                    for overload in overloads {
                        for parameter in overload.parameters where seen.insert(parameter.name).inserted {
                            let required = overloads.allSatisfy { other in
                                other.parameters.contains { $0.name == parameter.name && $0.required }
                            }
                            var param: JSON = ["name": .string(parameter.name), "required": .bool(required)]
                            if !parameter.fullDescription.isEmpty { param["description"] = .string(parameter.fullDescription) }
                            param["schema"] = OpenAPIDocument.constrained(schemas.schema(parameter.type), by: parameter.constraints)
                            params.append(param)
                        }
                    }
                    var method: JSON = ["name": .string(operation.operationId)]
                    let descriptions = overloads.map(\.description).filter { !$0.isEmpty }
                    if !descriptions.isEmpty { method["description"] = .string(descriptions.joined(separator: " Or: ")) }
                    method["params"] = .array(params)
                    method["paramStructure"] = "by-name"
                    let result: JSON = operation.result.map(schemas.schema) ?? ["type": "null"]
                    method["result"] = ["name": "result", "schema": result]
                    methods.append(method)
                }
            }
        }
        let document: JSON = [
            "openrpc": "1.2.6",
            "info": infoObject,
            "methods": .array(methods),
            "components": ["schemas": schemas.componentSchemas()],
        ]
        return document.bytes
    }
}
