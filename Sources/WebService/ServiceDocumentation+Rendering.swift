// MARK: - Service page

extension ServiceDocumentation {
    /// The `?api` page: one section per resource path, one block per
    /// operation (`GET (a: double, b: double) -> double`), then the
    /// structures and enumerations, with type names linked to them.
    var html: String {
        var page = HTMLPage(title: path)
        page.add("<h1>\(escape(path))</h1>")
        if !description.isEmpty { page.add("<p>\(escape(description))</p>") }
        for endpoint in endpoints {
            page.add("<h2>\(escape(endpoint.path))</h2>")
            for operation in endpoint.operations {
                page.add(operationHTML(operation))
            }
        }
        if !structures.isEmpty {
            page.add("<h2>Structures</h2>")
            for structure in structures {
                let fields = structure.fields.map { field in
                    "  \(escape(field.name)): \(typeHTML(field.type))" + (field.required ? "" : " <i>(optional)</i>")
                }
                page.add("<h3 id=\"\(escape(structure.name))\">\(escape(structure.name))</h3>")
                page.add("<pre>{\n\(fields.joined(separator: ",\n"))\n}</pre>")
            }
        }
        if !enumerations.isEmpty {
            page.add("<h2>Enumerations</h2>")
            for enumeration in enumerations {
                page.add("<h3 id=\"\(escape(enumeration.name))\">\(escape(enumeration.name))</h3>")
                page.add("<pre>\(enumeration.values.map { "\"\(escape($0))\"" }.joined(separator: " | "))</pre>")
            }
        }
        return page.text
    }

    private func operationHTML(_ operation: OperationDocumentation) -> String {
        let arguments = operation.parameters.map { "\(escape($0.name)): \(typeHTML($0.type))" }.joined(separator: ", ")
        let result = operation.result.map { (operation.streamed ? "stream of " : "") + typeHTML($0) } ?? "void"
        var html = "<div class=\"operation\">\n"
        html += "<p class=\"signature\"><code><b>\(escape(operation.method))</b> (\(arguments)) &rarr; \(result)</code></p>\n"
        if !operation.description.isEmpty { html += "<p>\(escape(operation.description))</p>\n" }
        if !operation.parameters.isEmpty {
            html += "<table>\n<tr><th>Parameter</th><th>In</th><th>Type</th><th>Required</th><th>Description</th></tr>\n"
            for parameter in operation.parameters {
                let required = parameter.required ? "required" : "optional" + (parameter.defaultValue.map { " (default <code>\(escape($0))</code>)" } ?? "")
                html += "<tr><td><code>\(escape(parameter.name))</code></td><td>\(parameter.location.rawValue)</td>"
                html += "<td><code>\(typeHTML(parameter.type))</code></td><td>\(required)</td><td>\(escape(parameter.description))</td></tr>\n"
            }
            html += "</table>\n"
        }
        return html + "</div>"
    }

    /// The type's name with structure and enumeration names linked to their anchors.
    private func typeHTML(_ type: ValueType) -> String {
        switch type {
        case .structure(let name) where structures.contains(where: { $0.name == name }):
            "<a href=\"#\(escape(name))\">\(escape(name))</a>"
        case .enumeration(let name, _):
            "<a href=\"#\(escape(name))\">\(escape(name))</a>"
        case .array(let element):
            "[\(typeHTML(element))]"
        case .map(let value):
            "[string: \(typeHTML(value))]"
        default:
            escape(type.name)
        }
    }

    /// The `?api` description as JSON.
    var json: [UInt8] {
        // The documentation types encode only strings, booleans and arrays.
        try! OrderedJSONEncoder.encode(self)
    }
}

// MARK: - Index of services

extension ServiceDocumentation {
    /// The `GET /` page: every service with a link to its `?api`.
    static func indexHTML(_ services: [ServiceDocumentation]) -> String {
        var page = HTMLPage(title: "Services")
        page.add("<h1>Services</h1>")
        page.add("<ul>")
        for service in services {
            let description = service.description.isEmpty ? "" : " &mdash; \(escape(service.description))"
            page.add("<li><a href=\"\(escape(service.path))?api\">\(escape(service.path))</a>\(description)</li>")
        }
        page.add("</ul>")
        return page.text
    }

    /// `GET /` as JSON: `[{"path":"/math","description":"...","api":"/math?api"}]`.
    static func indexJSON(_ services: [ServiceDocumentation]) -> [UInt8] {
        struct Entry: Encodable {
            let path: String
            let description: String
            let api: String
        }
        return try! OrderedJSONEncoder.encode(services.map { Entry(path: $0.path, description: $0.description, api: $0.path + "?api") })
    }
}

// MARK: - HTML

private struct HTMLPage {
    private var lines: [String]

    init(title: String) {
        lines = [
            "<!DOCTYPE html>",
            "<html><head><meta charset=\"utf-8\"><title>\(escape(title))</title>",
            "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em}"
                + "h2{border-bottom:1px solid #ccc}table{border-collapse:collapse}"
                + "td,th{border:1px solid #ddd;padding:.2em .5em;text-align:left}"
                + "pre,.signature{background:#f6f6f6;padding:.5em}</style>",
            "</head><body>",
        ]
    }

    mutating func add(_ line: String) { lines.append(line) }

    var text: String { (lines + ["</body></html>", ""]).joined(separator: "\n") }
}

/// `text` with `& < > " '` escaped for HTML content and attribute values.
func escape(_ text: String) -> String {
    var escaped = ""
    escaped.reserveCapacity(text.utf8.count)
    for character in text {
        switch character {
        case "&": escaped += "&amp;"
        case "<": escaped += "&lt;"
        case ">": escaped += "&gt;"
        case "\"": escaped += "&quot;"
        case "'": escaped += "&#39;"
        default: escaped.append(character)
        }
    }
    return escaped
}
