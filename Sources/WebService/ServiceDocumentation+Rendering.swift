// MARK: - Service page

/// A service's `?api` documentation with its two renderings, built once.
/// The HTML's example requests name the host each request asked for.
struct DocumentationPages: Sendable {
    let documentation: ServiceDocumentation
    /// The HTML and the JSON around the places where the host goes.
    private let htmlParts: [[UInt8]]
    private let jsonParts: [[UInt8]]

    init(_ documentation: ServiceDocumentation) {
        self.documentation = documentation
        htmlParts = Self.parts(Array(documentation.html.utf8))
        jsonParts = Self.parts(documentation.json)
    }

    /// The page, with `host` (`localhost:8080`) in its example requests.
    func html(host: String) -> [UInt8] { Self.joined(htmlParts, host: host) }

    /// The JSON form, with `host` in its example requests.
    func json(host: String) -> [UInt8] { Self.joined(jsonParts, host: host) }

    private static func parts(_ bytes: [UInt8]) -> [[UInt8]] {
        let marker = Array(String(hostMarker).utf8)
        var parts: [[UInt8]] = [[]]
        var index = 0
        while index < bytes.count {
            if bytes[index] == marker[0], bytes[index...].starts(with: marker) {
                parts.append([])
                index += marker.count
            } else {
                parts[parts.count - 1].append(bytes[index])
                index += 1
            }
        }
        return parts
    }

    private static func joined(_ parts: [[UInt8]], host: String) -> [UInt8] {
        var page: [UInt8] = []
        for (index, part) in parts.enumerated() {
            if index > 0 { page.append(contentsOf: host.utf8) }
            page.append(contentsOf: part)
        }
        return page
    }

    /// The `Host` field of a request if it is a plain host and port, else
    /// `localhost`: what the examples may show without escaping.
    static func host(of request: HTTPRequest) -> String {
        guard let host = request.headers["Host"], !host.isEmpty, host.utf8.count <= 255,
            host.utf8.allSatisfy({ byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ":")
                    || byte == UInt8(ascii: "[") || byte == UInt8(ascii: "]")
            })
        else { return "localhost" }
        return host
    }
}

/// Where a page names the host; `escape` never lets a description write it.
let hostMarker: Character = "\u{E000}"

extension ServiceDocumentation {
    /// The `?api` page: a link back to the index, what errors look like,
    /// one section per resource path, one block per operation (`GET (a:
    /// double, b: double) -> double`) with its parameters, its filters,
    /// an example request and, for a list, how it pages and gives CSV;
    /// then the structures and enumerations, with type names linked to them.
    var html: String {
        var page = HTMLPage(title: path)
        page.add("<p class=\"links\"><a href=\"/\">&larr; All services</a></p>")
        page.add("<h1>\(escape(path))</h1>")
        if !description.isEmpty { page.add("<p>\(inlineHTML(description))</p>") }
        page.add(
            "<p class=\"links\">The services' OpenAPI document: <a href=\"/openapi.json\">/openapi.json</a>. "
                + "This page as JSON: <code>\(escapeKeepingHost("curl -H 'Accept: application/json' '\(exampleURL(path + "?api"))'"))</code></p>"
        )
        page.add("<p class=\"note\">\(inlineHTML(Self.errorNote.text))</p>")
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
                if structure.membersChosen {
                    page.add("<p>A request may choose its members with <code>select</code>: any of them may then be absent.</p>")
                }
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
        let parameters = operation.plainParameters
        let filters = operation.filters
        var arguments = parameters.map { "\(escape($0.name)): \(typeHTML($0.type))" }
        if !filters.isEmpty { arguments.append("filters&hellip;") }
        let result = operation.result.map { (operation.streamed ? "stream of " : "") + typeHTML($0) } ?? "void"
        var html = "<div class=\"operation\">\n"
        html +=
            "<p class=\"signature\"><code><b>\(escape(operation.method))</b> (\(arguments.joined(separator: ", "))) &rarr; \(result)</code>"
        html += " <span class=\"operation-id\" title=\"operationId\">\(escape(operation.operationId))</span></p>\n"
        if !operation.description.isEmpty { html += "<p>\(inlineHTML(operation.description))</p>\n" }
        if !parameters.isEmpty {
            html += "<table>\n<tr><th>Parameter</th><th>In</th><th>Type</th><th>Required</th><th>Values</th><th>Description</th></tr>\n"
            for parameter in parameters {
                let required =
                    parameter.required
                    ? "required" : "optional" + (parameter.defaultValue.map { " (default <code>\(escape($0))</code>)" } ?? "")
                html += "<tr><td><code>\(escape(parameter.name))</code></td><td>\(parameter.location.rawValue)</td>"
                html += "<td><code>\(typeHTML(parameter.type))</code></td><td>\(required)</td><td>\(valuesHTML(parameter))</td>"
                html += "<td>\(inlineHTML(parameter.fullDescription))</td></tr>\n"
            }
            html += "</table>\n"
        }
        if !filters.isEmpty {
            html += "<p class=\"filters\">\(inlineHTML(OperationDocumentation.filterSyntax))</p>\n"
            html += "<table>\n<tr><th>Column</th><th>Type</th><th>Values</th><th>Description</th></tr>\n"
            for filter in filters {
                html += "<tr><td><code>\(escape(filter.name))</code></td>"
                html += "<td><code>\(typeHTML(filter.filteredType ?? filter.type))</code></td><td>\(valuesHTML(filter))</td>"
                html += "<td>\(inlineHTML(filter.description))</td></tr>\n"
            }
            html += "</table>\n"
        }
        html += "<pre class=\"example\">\(escapeKeepingHost(operation.example))</pre>\n"
        for note in operation.notes {
            html += "<p class=\"note\">\(inlineHTML(note.text))</p>\n"
            if let example = note.example { html += "<pre class=\"request\">\(escapeKeepingHost(example))</pre>\n" }
        }
        return html + "</div>"
    }

    /// What a parameter's values must be beyond their type: a range, a
    /// least count, the allowed values, a pattern (a filter's, which spells
    /// out the operators, is left to the operation's text).
    private func valuesHTML(_ parameter: ParameterDocumentation) -> String {
        var parts: [String] = []
        let constraints = parameter.constraints
        switch (constraints.minimum, constraints.maximum) {
        case (let minimum?, let maximum?): parts.append("\(minimum) to \(maximum)")
        case (let minimum?, nil): parts.append("\(minimum) or more")
        case (nil, let maximum?): parts.append("\(maximum) or less")
        case (nil, nil): break
        }
        if let count = constraints.minimumCount { parts.append("at least \(count) value\(count == 1 ? "" : "s")") }
        if let values = parameter.allowedValues {
            parts.append("one of " + values.map { "<code>\(escape($0))</code>" }.joined(separator: ", "))
        }
        if parameter.filteredType == nil, let pattern = parameter.pattern {
            parts.append("<details><summary>pattern</summary><code>\(escape(pattern))</code></details>")
        }
        return parts.joined(separator: "; ")
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
        // Cannot throw, whatever the services documented: the documentation
        // types encode only strings, integers, booleans, arrays and objects
        // of them through OrderedJSONEncoder's containers, none of which throws.
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
            let description = service.description.isEmpty ? "" : " &mdash; \(inlineHTML(service.description))"
            page.add("<li><a href=\"\(escape(service.path))?api\">\(escape(service.path))</a>\(description)</li>")
        }
        page.add("</ul>")
        page.add("<p class=\"links\">All of them in one OpenAPI document: <a href=\"/openapi.json\">/openapi.json</a>.</p>")
        return page.text
    }

    /// `GET /` as JSON: `[{"path":"/math","description":"...","api":"/math?api"}]`.
    static func indexJSON(_ services: [ServiceDocumentation]) -> [UInt8] {
        struct Entry: Encodable {
            let path: String
            let description: String
            let api: String
        }
        // Strings only, through containers that never throw.
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
            "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em;line-height:1.4}"
                + "h2{border-bottom:1px solid #ccc;margin-top:1.5em}table{border-collapse:collapse;margin:.5em 0}"
                + "td,th{border:1px solid #ddd;padding:.2em .5em;text-align:left;vertical-align:top}"
                + "code{background:#f0f0f0;padding:0 .2em;border-radius:3px}pre code,.signature code{background:none;padding:0}"
                + "pre,.signature{background:#f6f6f6;padding:.5em;overflow-x:auto}"
                + ".operation{margin-bottom:1.5em}.operation-id{float:right;color:#666;font-size:.85em}"
                + "pre.example,pre.request{background:#272822;color:#f8f8f2}"
                + "pre.example::before,pre.request::before{content:\"$ \";color:#888}"
                + ".links{color:#444}</style>",
            "</head><body>",
        ]
    }

    mutating func add(_ line: String) { lines.append(line) }

    var text: String { (lines + ["</body></html>", ""]).joined(separator: "\n") }
}

/// `text` escaped, with each pair of backticks around a run made inline
/// code: "Use `bal*`." gives `Use <code>bal*</code>.`. A backtick without
/// a partner stays as it is.
func inlineHTML(_ text: String) -> String {
    let parts = text.split(separator: "`", omittingEmptySubsequences: false)
    var html = ""
    for (index, part) in parts.enumerated() {
        let isCode = index % 2 == 1
        if isCode, index == parts.count - 1 {
            html += "`" + escape(String(part))  // the last backtick has no partner
        } else {
            html += isCode ? "<code>\(escape(String(part)))</code>" : escape(String(part))
        }
    }
    return html
}

/// `text` escaped, but for the host marker that an example request holds.
func escapeKeepingHost(_ text: String) -> String {
    text.split(separator: hostMarker, omittingEmptySubsequences: false).map { escape(String($0)) }.joined(separator: String(hostMarker))
}

/// `text` with `& < > " '` escaped for HTML content and attribute values
/// (and the page's host marker, should a text hold that character).
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
        case hostMarker: escaped += "&#xE000;"
        default: escaped.append(character)
        }
    }
    return escaped
}
