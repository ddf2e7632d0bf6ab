// MARK: - Schemas of value types

extension OpenAPIDocument {
    /// The JSON Schema of a documented type of the service at index
    /// `service`. Structures and enumerations are references to
    /// `components/schemas`, by the names ``SchemaNames`` gave the
    /// service's types; a structure the service does not describe is any value.
    func schema(_ type: ValueType, service: Int) -> JSONValue {
        switch type {
        case .string: ["type": "string"]
        case .integer, .long: ["type": "integer", "format": "int64"]
        case .double: ["type": "number", "format": "double"]
        case .boolean: ["type": "boolean"]
        case .date: ["type": "string", "format": "date"]
        case .dateTime: ["type": "string", "format": "date-time"]
        case .uuid: ["type": "string", "format": "uuid"]
        case .url: ["type": "string", "format": "uri"]
        case .file: ["type": "string", "contentMediaType": "application/octet-stream"]
        case .enumeration(let name, _): ["$ref": .string(Self.reference(schemaNames.name(name, service: service) ?? name))]
        case .array(let element): ["type": "array", "items": schema(element, service: service)]
        case .map(let value): ["type": "object", "additionalProperties": schema(value, service: service)]
        case .structure(let name):
            if let named = schemaNames.name(name, service: service) { ["$ref": .string(Self.reference(named))] } else { [:] }
        case .any: [:]
        }
    }

    /// `schema` with what the parameter enforces beyond its type: `minItems`
    /// on a list, `minimum` and `maximum` on an integer (on a list's items).
    static func constrained(_ schema: JSONValue, by constraints: ArgumentConstraints) -> JSONValue {
        guard !constraints.isEmpty else { return schema }
        var schema = schema
        if let count = constraints.minimumCount, case .string("array")? = schema["type"] { schema["minItems"] = .integer(Int64(count)) }
        func bounded(_ schema: JSONValue) -> JSONValue {
            guard case .string("integer")? = schema["type"] else { return schema }
            var bounded = schema
            if let minimum = constraints.minimum { bounded["minimum"] = .integer(Int64(minimum)) }
            if let maximum = constraints.maximum { bounded["maximum"] = .integer(Int64(maximum)) }
            return bounded
        }
        if case .string("array")? = schema["type"], let items = schema["items"] {
            schema["items"] = bounded(items)
        } else {
            schema = bounded(schema)
        }
        return schema
    }

    /// A plain text's `schema` (a list's items too) with the pattern of
    /// text without NUL: the HTTP layer refuses a NUL byte in any path,
    /// query or form value, before a handler sees it.
    static func argumentText(_ schema: JSONValue) -> JSONValue {
        var schema = schema
        if case .string("array")? = schema["type"], let items = schema["items"] {
            schema["items"] = argumentText(items)
        } else if schema == ["type": "string"] {
            schema["pattern"] = #"^[^\x00]*$"#
        }
        return schema
    }

    /// `schema` that also allows `null`, as an optional field may be.
    static func nullable(_ schema: JSONValue) -> JSONValue {
        if schema.isEmptyObject { return schema }
        var nullable = schema
        switch schema["type"] {
        case .string(let type)?:
            nullable["type"] = [.string(type), "null"]
            return nullable
        default:
            return ["anyOf": [schema, ["type": "null"]]]
        }
    }

    static func reference(_ name: String) -> String {
        "#/components/schemas/" + name
    }

    /// An argument's texts (a default, an example) as the JSON value of
    /// its type: `["10"]` of an integer is `10`, `["a", "b"]` of a list is
    /// `["a", "b"]`; `nil` for a value the type cannot show.
    static func value(_ texts: [String], of type: ValueType) -> JSONValue? {
        if case .array(let element) = type {
            let elements = texts.compactMap { value([$0], of: element) }
            return elements.count == texts.count ? .array(elements) : nil
        }
        guard texts.count == 1 else { return nil }
        let text = texts[0]
        switch type {
        case .integer, .long: return Int64(text).map(JSONValue.integer)
        case .double: return Double(argumentText: text).map(JSONValue.number)
        case .boolean: return Bool(argumentText: text).map(JSONValue.bool)
        case .string, .date, .dateTime, .uuid, .url, .enumeration: return .string(text)
        case .file, .array, .map, .structure, .any: return nil
        }
    }

    // MARK: - Components

    /// Every structure and enumeration of the services, each shape under
    /// a name of its own (``SchemaNames``), then `Problem`.
    func componentSchemas() -> JSONValue {
        var schemas: JSONValue = [:]
        for entry in schemaNames.entries {
            let service = services[entry.service]
            if entry.isEnumeration, let enumeration = service.enumerations.first(where: { $0.name == entry.original }) {
                schemas[entry.name] = ["type": "string", "enum": .array(enumeration.values.map(JSONValue.string))]
            } else if let structure = service.structures.first(where: { $0.name == entry.original }) {
                var properties: JSONValue = [:]
                for field in structure.fields {
                    let type = schema(field.type, service: entry.service)
                    properties[field.name] = field.required ? type : Self.nullable(type)
                }
                var object: JSONValue = ["type": "object", "properties": properties]
                let required = structure.fields.filter(\.required).map { JSONValue.string($0.name) }
                if !required.isEmpty, !structure.membersChosen { object["required"] = .array(required) }
                schemas[entry.name] = object
            }
        }
        schemas[Self.problemSchemaName] = Self.problemSchema
        return schemas
    }

    static let problemSchemaName = "Problem"

    /// RFC 9457 problem details, as `HTTPError` writes them.
    static let problemSchema: JSONValue = [
        "type": "object",
        "description": "An RFC 9457 problem document. Further members may follow the ones listed.",
        "properties": [
            "type": ["type": "string", "description": "A URI reference that identifies the problem type (`about:blank`)."],
            "title": ["type": "string", "description": "The status's reason phrase."],
            "status": ["type": "integer", "description": "The HTTP status code.", "minimum": 100, "maximum": 599],
            "detail": ["type": "string", "description": "What went wrong in this occurrence."],
            "parameter": ["type": "string", "description": "The argument at fault, when one is."],
            "allowedValues": ["type": "array", "items": ["type": "string"], "description": "The values the parameter allows."],
            "errorId": ["type": "string", "description": "The id of an unexpected error, as the server's log gives it."],
        ],
        "required": ["type", "title", "status", "detail"],
    ]

    /// The problem responses every operation may give, by status.
    static let problemResponses: [(status: String, name: String, description: String, retryAfter: Bool)] = [
        ("400", "BadRequest", "An argument is missing, unknown or not of its type (`parameter` names it).", false),
        ("404", "NotFound", "There is no such resource or record.", false),
        ("406", "NotAcceptable", "None of the media types the request accepts can be given.", false),
        ("503", "ServiceUnavailable", "The database is unreachable or busy; try again after `Retry-After` seconds.", true),
        ("504", "GatewayTimeout", "The database did not answer within the statement timeout.", false),
    ]

    static func componentResponses() -> JSONValue {
        var responses: JSONValue = [:]
        for problem in problemResponses {
            var response: JSONValue = [
                "description": .string(problem.description),
                "content": ["application/problem+json": ["schema": ["$ref": .string(reference(problemSchemaName))]]],
            ]
            if problem.retryAfter {
                response["headers"] = ["Retry-After": ["description": "Seconds to wait.", "schema": ["type": "integer"]]]
            }
            responses[problem.name] = response
        }
        return responses
    }
}
