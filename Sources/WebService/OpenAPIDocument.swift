/// What the router's OpenAPI document says about itself (its `info`).
///
/// ```swift
/// let router = try WebServiceRouter(services: [ProductsService()], runners: [QueryRunner(pool: pool)],
///                               openAPI: OpenAPIInfo(title: "Products", version: "2.1.0"))
/// ```
public struct OpenAPIInfo: Sendable {
    public var title: String
    /// The version of the API (not of OpenAPI).
    public var version: String
    /// Shown under the title; empty for none.
    public var description: String
    /// How requests are authenticated; `nil` when they are not.
    public var security: OpenAPISecurity?

    public init(title: String = "Web services", version: String = "1.0.0", description: String = "", security: OpenAPISecurity? = nil) {
        self.title = title
        self.version = version
        self.description = description
        self.security = security
    }
}

/// The OpenAPI 3.1.0 document of every mounted service (`GET /openapi.json`),
/// made from the same documentation as `?api`:
///
/// - each resource path is a path, `?:name` as `{name}`; an optional last
///   variable has given its route a second resource, the path without it;
/// - each verb on a path is one operation, named by ``OperationID``; the
///   overloads of a verb merge into it (their parameters together, each
///   required only if every overload requires it), which allows
///   combinations that no single overload takes: a service documented for
///   OpenAPI clients had better take one route per verb and path;
/// - each parameter's schema states its ``ArgumentConstraints`` (`minimum`,
///   `maximum`, `minItems`) and a ``RuntimeParameter``'s pattern;
/// - arguments are query parameters for GET and DELETE, a form or JSON
///   body for POST, PUT and PATCH (multipart alone when one is a file); a
///   route with a ``Body`` takes that JSON body and its arguments in the query;
/// - a result is `200` with its schema (a streamed list is an array), no
///   result `204`; every operation may answer 400, 404, 406, 503 and 504
///   with a problem document;
/// - structures and enumerations are `components/schemas`, linked by
///   `$ref`, each shape under a name of its own (``SchemaNames``);
/// - with ``OpenAPIInfo/security``, its schemes are
///   `components/securitySchemes`, the document's `security` lists them,
///   and the operations of public paths have `security: []`.
struct OpenAPIDocument {
    let services: [ServiceDocumentation]
    let info: OpenAPIInfo
    /// The names that `components/schemas` gives the services' types.
    let schemaNames: SchemaNames

    init(services: [ServiceDocumentation], info: OpenAPIInfo) {
        self.services = services
        self.info = info
        schemaNames = SchemaNames(services: services, reserved: [Self.problemSchemaName])
    }

    /// The document as compact JSON.
    var json: [UInt8] { document.jsonBytes }

    var document: JSONValue {
        var infoObject: JSONValue = ["title": .string(info.title), "version": .string(info.version)]
        if !info.description.isEmpty { infoObject["description"] = .string(info.description) }
        var paths: JSONValue = [:]
        var tags: [JSONValue] = []
        for (index, service) in services.enumerated() {
            let tag = tagName(service)
            var tagObject: JSONValue = ["name": .string(tag)]
            if !service.description.isEmpty { tagObject["description"] = .string(service.description) }
            tags.append(tagObject)
            for endpoint in service.endpoints {
                let (template, variables) = Self.pathTemplate(endpoint.routePath)
                guard paths[template] == nil else { continue }  // the same path from a service mounted inside another
                var pathItem: JSONValue = [:]
                var methods: [String] = []
                for operation in endpoint.operations where !methods.contains(operation.method) {
                    methods.append(operation.method)
                }
                for method in methods {
                    let overloads = endpoint.operations.filter { $0.method == method }
                    var operation = operation(overloads, tag: tag, templateVariables: variables, service: index)
                    if isPublic(template) { operation["security"] = [] }
                    pathItem[method.lowercased()] = operation
                }
                paths[template] = pathItem
            }
        }
        var components: JSONValue = ["schemas": componentSchemas(), "responses": Self.componentResponses()]
        components["securitySchemes"] = securitySchemes
        var document: JSONValue = [
            "openapi": "3.1.0",
            "info": infoObject,
            "tags": .array(tags),
            "paths": paths,
            "components": components,
        ]
        document["security"] = documentSecurity
        return document
    }

    /// The service's tag: its path without the leading slash (`employees`).
    private func tagName(_ service: ServiceDocumentation) -> String {
        String(service.path.dropFirst())
    }

    /// `/employees/{employeeNumber}` for `/employees/?:employeeNumber`
    /// (`{0}` for a positional `?`), with the variables' names in order.
    static func pathTemplate(_ path: String) -> (template: String, variables: [String]) {
        var variables: [String] = []
        let segments = path.split(separator: "/").map { segment -> String in
            guard segment == "?" || segment.hasPrefix("?:") else { return String(segment) }
            let name = segment == "?" ? String(variables.count) : String(segment.dropFirst(2))
            variables.append(name)
            return "{" + name + "}"
        }
        return ("/" + segments.joined(separator: "/"), variables)
    }

    // MARK: - Operations

    /// One operation from the overloads of one verb on one path.
    private func operation(_ overloads: [OperationDocumentation], tag: String, templateVariables: [String], service: Int) -> JSONValue {
        let method = overloads[0].method
        var operation: JSONValue = ["operationId": .string(overloads[0].operationId), "tags": [.string(tag)]]
        var description = Self.description(of: overloads)
        if overloads.contains(where: { !$0.filters.isEmpty }) {
            description += (description.isEmpty ? "" : "\n\n") + OperationDocumentation.filterSyntax
        }
        if !description.isEmpty { operation["description"] = .string(description) }

        // Path parameters by the endpoint's names, whatever an overload calls them.
        var parameters: [JSONValue] = []
        for (position, name) in templateVariables.enumerated() {
            let documented = overloads.lazy.compactMap { overload -> ParameterDocumentation? in
                guard position < overload.pathVariableNames.count else { return nil }
                let own = overload.pathVariableNames[position]
                return overload.parameters.first { $0.location == .path && $0.name == own }
            }.first
            var schema =
                documented.map { Self.argumentText(Self.constrained(self.schema($0.type, service: service), by: $0.constraints)) }
                ?? ["type": "string"]
            if case .string("string")? = schema["type"] { schema["minLength"] = 1 }
            var parameter: JSONValue = ["name": .string(name), "in": "path", "required": true]
            if let description = documented?.description, !description.isEmpty { parameter["description"] = .string(description) }
            parameter["schema"] = schema
            if let documented, let texts = documented.exampleTexts, let example = Self.value(texts, of: documented.type) {
                parameter["example"] = example
            }
            parameters.append(parameter)
        }

        let arguments = Self.mergedArguments(overloads)
        let body = overloads.lazy.compactMap { $0.parameters.first { $0.location == .body } }.first
        let argumentsInQuery = method == "GET" || method == "DELETE" || body != nil
        if argumentsInQuery {
            parameters += arguments.map { queryParameter($0, service: service) }
        }
        if !parameters.isEmpty { operation["parameters"] = .array(parameters) }

        if let body {
            var requestBody: JSONValue = ["required": true]
            if !body.description.isEmpty { requestBody["description"] = .string(body.description) }
            requestBody["content"] = ["application/json": ["schema": schema(body.type, service: service)]]
            operation["requestBody"] = requestBody
        } else if !argumentsInQuery, !arguments.isEmpty {
            operation["requestBody"] = formBody(arguments, service: service)
        }
        operation["responses"] = responses(overloads, service: service)
        return operation
    }

    /// The description, or for several overloads each one after the
    /// arguments that choose it.
    private static func description(of overloads: [OperationDocumentation]) -> String {
        guard overloads.count > 1 else { return overloads[0].description }
        let lines = overloads.map { overload in
            let names = overload.parameters.filter { $0.location == .argument }.map { "`\($0.name)`" }
            let choice = names.isEmpty ? "Without arguments" : "With " + names.joined(separator: ", ")
            return "- \(choice): \(overload.description.isEmpty ? "(no description)" : overload.description)"
        }
        return "The arguments given choose one of \(overloads.count) operations:\n\n" + lines.joined(separator: "\n")
    }

    /// The arguments of all overloads, each once (as the first declares
    /// it), required only when every overload requires it.
    private static func mergedArguments(_ overloads: [OperationDocumentation]) -> [(ParameterDocumentation, required: Bool)] {
        var merged: [(ParameterDocumentation, required: Bool)] = []
        for overload in overloads {
            for parameter in overload.parameters where parameter.location == .argument {
                guard !merged.contains(where: { $0.0.name == parameter.name }) else { continue }
                let required = overloads.allSatisfy { other in
                    other.parameters.contains { $0.location == .argument && $0.name == parameter.name && $0.required }
                }
                merged.append((parameter, required))
            }
        }
        return merged
    }

    private func queryParameter(_ argument: (ParameterDocumentation, required: Bool), service: Int) -> JSONValue {
        let (parameter, required) = argument
        var object: JSONValue = ["name": .string(parameter.name), "in": "query", "required": .bool(required)]
        if !parameter.fullDescription.isEmpty { object["description"] = .string(parameter.fullDescription) }
        if case .array = parameter.type {
            object["style"] = "form"
            object["explode"] = true
        }
        object["schema"] = argumentSchema(parameter, service: service)
        if let texts = parameter.exampleTexts, let example = Self.value(texts, of: parameter.type) {
            object["example"] = example
        }
        return object
    }

    /// The arguments as the members of a form or JSON object body;
    /// multipart alone when one of them is a file.
    private func formBody(_ arguments: [(ParameterDocumentation, required: Bool)], service: Int) -> JSONValue {
        var properties: JSONValue = [:]
        for (parameter, _) in arguments {
            var schema = argumentSchema(parameter, service: service)
            if !parameter.fullDescription.isEmpty { schema["description"] = .string(parameter.fullDescription) }
            properties[parameter.name] = schema
        }
        var object: JSONValue = ["type": "object", "properties": properties]
        let required = arguments.filter(\.required).map { JSONValue.string($0.0.name) }
        if !required.isEmpty { object["required"] = .array(required) }
        let hasFile = arguments.contains { $0.0.type == .file }
        var content: JSONValue = [:]
        if !hasFile { content["application/x-www-form-urlencoded"] = ["schema": object] }
        content["multipart/form-data"] = ["schema": object]
        if !hasFile { content["application/json"] = ["schema": object] }
        return ["required": .bool(!required.isEmpty), "content": content]
    }

    private func argumentSchema(_ parameter: ParameterDocumentation, service: Int) -> JSONValue {
        var schema = Self.argumentText(Self.constrained(self.schema(parameter.type, service: service), by: parameter.constraints))
        if let pattern = parameter.pattern, case .string("string")? = schema["type"] { schema["pattern"] = .string(pattern) }
        if let texts = parameter.defaultTexts, !texts.isEmpty, let value = Self.value(texts, of: parameter.type) {
            // A reference takes no siblings in every tool: wrap it.
            if schema["$ref"] != nil { schema = ["allOf": [schema]] }
            schema["default"] = value
        }
        return schema
    }

    // MARK: - Responses

    /// A list's `text/event-stream` answer (docs/LIVE.md): its rows, then each change to them.
    static let eventStream: JSONValue = [
        "schema": [
            "type": "string",
            "description": .string(
                "Server-Sent Events: `snapshot` (a JSON array of rows, in pages), `ready` (with an id), then `insert` and "
                    + "`update` (the row), `delete` (its key) for each committed change, `reset` when the rows held are stale, "
                    + "a comment line every heartbeat. `Last-Event-ID` resumes. A list without a known key answers 406."),
        ]
    ]

    private func responses(_ overloads: [OperationDocumentation], service: Int) -> JSONValue {
        var results: [JSONValue] = []
        var streamed = false
        var csv = false
        var noContent = false
        var handlerBuilt = false
        for overload in overloads {
            handlerBuilt = handlerBuilt || overload.handlerBuildsResponse
            guard let result = overload.result else {
                noContent = true
                continue
            }
            if result == .any {
                // Undocumented: what the handler builds is `default`; a
                // runnable result may be a list, an object or nothing.
                if overload.handlerBuildsResponse { continue }
                noContent = true
            }
            streamed = streamed || overload.streamed
            csv = csv || overload.isRunnableList
            let schema = self.schema(result, service: service)
            if !results.contains(where: { $0.jsonBytes == schema.jsonBytes }) { results.append(schema) }
        }
        var responses: JSONValue = [:]
        if !results.isEmpty {
            let schema: JSONValue = results.count == 1 ? results[0] : ["oneOf": .array(results)]
            responses["200"] = [
                "description": .string(streamed ? "The result, streamed as it is read." : "The result."),
                "content": csv
                    ? [
                        "application/json": ["schema": schema], "text/csv": ["schema": ["type": "string"]],
                        "text/event-stream": Self.eventStream,
                    ]
                    : ["application/json": ["schema": schema]],
            ]
        }
        if noContent { responses["204"] = ["description": "Done; nothing to return."] }
        for problem in Self.problemResponses {
            responses[problem.status] = ["$ref": .string("#/components/responses/" + problem.name)]
        }
        if handlerBuilt { responses["default"] = ["description": "The response the handler builds."] }
        return responses
    }
}
