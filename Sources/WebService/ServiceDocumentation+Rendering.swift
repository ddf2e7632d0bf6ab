// MARK: - Service page

/// A service's `?api` documentation with its two renderings, built once.
/// The HTML's example requests name the host each request asked for.
struct DocumentationPages: Sendable {
    let documentation: ServiceDocumentation
    let json: [UInt8]
    /// The HTML around the places where the host goes.
    private let htmlParts: [[UInt8]]

    init(_ documentation: ServiceDocumentation) {
        self.documentation = documentation
        json = documentation.json
        htmlParts = documentation.html.split(separator: hostMarker, omittingEmptySubsequences: false).map { Array($0.utf8) }
    }

    /// The page, with `host` (`localhost:8080`) in its example requests.
    func html(host: String) -> [UInt8] {
        var page: [UInt8] = []
        for (index, part) in htmlParts.enumerated() {
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
    /// The `?api` page: one section per resource path, one block per
    /// operation (`GET (a: double, b: double) -> double`) with its
    /// parameters and an example request, then the structures and
    /// enumerations, with type names linked to them.
    var html: String {
        var page = HTMLPage(title: path)
        page.add("<h1>\(escape(path))</h1>")
        if !description.isEmpty { page.add("<p>\(inlineHTML(description))</p>") }
        page.add(
            "<p class=\"links\">The services' OpenAPI document: <a href=\"/openapi.json\">/openapi.json</a>. "
                + "This page as JSON: <code>\(escapeKeepingHost("curl -H 'Accept: application/json' '\(exampleURL(path + "?api"))'"))</code></p>"
        )
        for endpoint in endpoints {
            page.add("<h2>\(escape(endpoint.path))</h2>")
            for operation in endpoint.operations {
                page.add(operationHTML(operation, path: endpoint.path))
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

    private func operationHTML(_ operation: OperationDocumentation, path: String) -> String {
        let arguments = operation.parameters.map { "\(escape($0.name)): \(typeHTML($0.type))" }.joined(separator: ", ")
        let result = operation.result.map { (operation.streamed ? "stream of " : "") + typeHTML($0) } ?? "void"
        var html = "<div class=\"operation\">\n"
        html += "<p class=\"signature\"><code><b>\(escape(operation.method))</b> (\(arguments)) &rarr; \(result)</code>"
        html += " <span class=\"operation-id\" title=\"operationId\">\(escape(operation.operationId))</span></p>\n"
        if !operation.description.isEmpty { html += "<p>\(inlineHTML(operation.description))</p>\n" }
        if !operation.parameters.isEmpty {
            html += "<table>\n<tr><th>Parameter</th><th>In</th><th>Type</th><th>Required</th><th>Description</th></tr>\n"
            for parameter in operation.parameters {
                let required =
                    parameter.required
                    ? "required" : "optional" + (parameter.defaultValue.map { " (default <code>\(escape($0))</code>)" } ?? "")
                html += "<tr><td><code>\(escape(parameter.name))</code></td><td>\(parameter.location.rawValue)</td>"
                html +=
                    "<td><code>\(typeHTML(parameter.type))</code></td><td>\(required)</td><td>\(inlineHTML(parameter.fullDescription))</td></tr>\n"
            }
            html += "</table>\n"
        }
        html += "<pre class=\"example\">\(escapeKeepingHost(exampleRequest(operation, path: path)))</pre>\n"
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
        // Cannot throw, whatever the services documented: the documentation
        // types encode only strings, booleans, numbers and arrays through
        // OrderedJSONEncoder's containers, none of which throws.
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
                + "pre.example{background:#272822;color:#f8f8f2}pre.example::before{content:\"$ \";color:#888}"
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
