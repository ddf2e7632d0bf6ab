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
        /// For each overload, its params' names in their declared order:
        /// what params by position are bound to.
        let positionalNames: [[String]]

        /// The params by name that `elements`, params by position, stand
        /// for: the elements bound in order to the params of the overload
        /// with exactly as many (the first declared), or else of the
        /// overload with the fewest more, whose params left over are
        /// absent. A `null` element leaves its param absent. More elements
        /// than any overload takes is an error that says how many it takes.
        func params(byPosition elements: [JSONValue], methodName: String) -> Result<JSONValue.Members, JSONRPCError> {
            guard !elements.isEmpty else { return .success([:]) }
            let candidates = positionalNames.filter { $0.count >= elements.count }
            guard
                let names = candidates.first(where: { $0.count == elements.count })
                    ?? candidates.min(by: { $0.count < $1.count })
            else {
                let most = positionalNames.map(\.count).max() ?? 0
                let takes = most == 1 ? "1 param" : "\(most) params"
                return .failure(
                    JSONRPCError(
                        code: -32602, message: "Invalid params",
                        detail: "\(methodName) takes at most \(takes) by position; \(elements.count) were given."))
            }
            var members = JSONValue.Members()
            for (name, value) in zip(names, elements) where value != .null {
                members[name] = value
            }
            return .success(members)
        }
    }

    let methods: [String: Method]
    let openRPC: [UInt8]

    init(services: [ServiceDocumentation], info: OpenAPIInfo) {
        var methods: [String: Method] = [:]
        for service in services {
            for endpoint in service.endpoints {
                let segments: [String?] = endpoint.routePath.split(separator: "/").map { segment in
                    segment == "?" || segment.hasPrefix("?:") ? nil : String(segment)
                }
                for operation in endpoint.operations where methods[operation.operationId] == nil {
                    let overloads = endpoint.operations.filter { $0.operationId == operation.operationId }
                    methods[operation.operationId] = Method(
                        httpMethod: HTTPMethod(rawValue: operation.method),
                        segments: segments,
                        pathVariableNames: overloads.map(\.pathVariableNames),
                        takesBody: overloads.contains { $0.parameters.contains { $0.location == .body } },
                        positionalNames: overloads.map { $0.parameters.filter { !$0.isQueryStringOnly }.map(\.name) })
                }
            }
        }
        self.methods = methods
        openRPC = OpenRPCDocument(services: services, info: info).json
    }
}

/// The OpenRPC 1.2.6 document of the JSON-RPC methods: one method per
/// `operationId`, its params the operation's path variables and
/// arguments (and `body` for a route that takes one) in their declared
/// order, each required only when every overload requires it, and
/// `paramStructure: "either"` (by name or by position). A method with
/// overloads that take different params says in its description which
/// lists params by position are bound to. Schemas as in the OpenAPI
/// document, shared ones under `components/schemas`.
///
/// OpenRPC has no security object; with ``OpenAPIInfo/security`` the
/// document says what credentials the calls need with extensions that
/// hold what the OpenAPI document's members do: `x-securitySchemes` its
/// `components/securitySchemes`, `x-security` its top-level `security`
/// (each scheme, and `{}` when anonymous requests are served). Every
/// method has that requirement, the methods of public paths too: a call
/// is a request to `/jsonrpc`, which is not public.
struct OpenRPCDocument {
    let services: [ServiceDocumentation]
    let info: OpenAPIInfo

    var json: [UInt8] {
        let schemas = OpenAPIDocument(services: services, info: info)
        var infoObject: JSONValue = ["title": .string(info.title), "version": .string(info.version)]
        if !info.description.isEmpty { infoObject["description"] = .string(info.description) }
        var methods: [JSONValue] = []
        var named: Set<String> = []
        for (index, service) in services.enumerated() {
            for endpoint in service.endpoints {
                for operation in endpoint.operations where named.insert(operation.operationId).inserted {
                    let overloads = endpoint.operations.filter { $0.operationId == operation.operationId }
                    var params: [JSONValue] = []
                    var seen: Set<String> = []
                    for overload in overloads {
                        // Filters, select and order are read from a URL's query string, which a call has not.
                        for parameter in overload.parameters where !parameter.isQueryStringOnly && seen.insert(parameter.name).inserted {
                            let required = overloads.allSatisfy { other in
                                other.parameters.contains { $0.name == parameter.name && $0.required }
                            }
                            var param: JSONValue = ["name": .string(parameter.name), "required": .bool(required)]
                            if !parameter.fullDescription.isEmpty { param["description"] = .string(parameter.fullDescription) }
                            param["schema"] = OpenAPIDocument.constrained(
                                schemas.schema(parameter.type, service: index), by: parameter.constraints)
                            params.append(param)
                        }
                    }
                    var method: JSONValue = ["name": .string(operation.operationId)]
                    var description = overloads.map(\.description).filter { !$0.isEmpty }.joined(separator: " Or: ")
                    let orders = overloads.map { $0.parameters.filter { !$0.isQueryStringOnly }.map(\.name) }
                    if Set(orders).count > 1 {
                        let lists = orders.map { "[" + $0.joined(separator: ", ") + "]" }
                        description += (description.isEmpty ? "" : " ") + "By position: " + lists.joined(separator: " or ") + "."
                    }
                    if !description.isEmpty { method["description"] = .string(description) }
                    method["params"] = .array(params)
                    method["paramStructure"] = "either"
                    let result: JSONValue = operation.result.map { schemas.schema($0, service: index) } ?? ["type": "null"]
                    method["result"] = ["name": "result", "schema": result]
                    methods.append(method)
                }
            }
        }
        var document: JSONValue = [
            "openrpc": "1.2.6",
            "info": infoObject,
            "methods": .array(methods),
            "components": ["schemas": schemas.componentSchemas()],
        ]
        document["x-securitySchemes"] = schemas.securitySchemes
        document["x-security"] = schemas.documentSecurity
        return document.jsonBytes
    }
}
