// MARK: - Example requests

extension ServiceDocumentation {
    /// An absolute URL on the host the page is served for (the page's host marker).
    func exampleURL(_ pathAndQuery: String) -> String {
        "http://" + String(hostMarker) + pathAndQuery
    }

    /// A `curl` command line that calls `operation` on `path` (the
    /// endpoint's, `/employees/?:employeeNumber`): each path variable and
    /// required argument takes its example, else its default, else a
    /// sample of its type; an optional argument appears when it has an
    /// example, and a list's `limit` always (10 without an example), so
    /// that the example shows a page rather than the whole list. Arguments go in the query for GET and DELETE, in a form
    /// for the other verbs, beside a JSON body when the route takes one.
    ///
    /// ```
    /// curl 'http://localhost:8080/employees/10004?details=titles'
    /// curl 'http://localhost:8080/products' -d 'name=Lamp&price=12.5'
    /// ```
    func exampleRequest(_ operation: OperationDocumentation, path: String) -> String {
        var segments: [String] = []
        var variableIndex = 0
        for segment in path.split(separator: "/") {
            if segment == "?" || segment.hasPrefix("?:") {
                let name = segment == "?" ? String(variableIndex) : String(segment.dropFirst(2))
                let parameter = operation.parameters.first { $0.location == .path && $0.name == name }
                segments.append(Self.percentEncoded(parameter.map { exampleTexts($0)[0] } ?? "1"))
                variableIndex += 1
            } else {
                segments.append(String(segment))
            }
        }
        var arguments: [(name: String, value: String)] = []
        var hasFile = false
        for parameter in operation.parameters where parameter.location == .argument {
            let isListLimit = operation.isRunnableList && parameter.name == "limit"
            guard parameter.required || parameter.exampleTexts != nil || isListLimit else { continue }
            let texts = isListLimit && parameter.exampleTexts == nil ? ["10"] : exampleTexts(parameter)
            if case .file = parameter.type { hasFile = true }
            if parameter.commaSeparated {
                arguments.append((parameter.name, texts.joined(separator: ",")))
            } else {
                arguments.append(contentsOf: texts.map { (parameter.name, $0) })
            }
        }
        let body = operation.parameters.first { $0.location == .body }
        let method = operation.method
        let inQuery = method == "GET" || method == "DELETE" || body != nil
        let query =
            inQuery && !arguments.isEmpty
            ? "?" + arguments.map { Self.percentEncoded($0.name) + "=" + Self.percentEncoded($0.value) }.joined(separator: "&") : ""

        var words = ["curl"]
        let sendsData = body != nil || (!inQuery && !arguments.isEmpty)
        if method != "GET", method != "POST" || !sendsData {
            words += ["-X", method]  // curl's -d and -F mean POST
        }
        words.append(shellQuoted(exampleURL("/" + segments.joined(separator: "/") + query)))
        if let body {
            words += ["-H", shellQuoted("Content-Type: application/json"), "-d", shellQuoted(sampleJSON(body.type).jsonText)]
        } else if !inQuery, hasFile {
            for argument in arguments {
                let isFile = operation.parameters.contains { $0.name == argument.name && $0.type == .file }
                words += ["-F", shellQuoted(argument.name + "=" + (isFile ? "@" + argument.value : argument.value))]
            }
        } else if !inQuery, !arguments.isEmpty {
            words += [
                "-d",
                shellQuoted(arguments.map { Self.percentEncoded($0.name) + "=" + Self.percentEncoded($0.value) }.joined(separator: "&")),
            ]
        }
        return words.joined(separator: " ")
    }

    /// The texts a parameter's example request sends: its example, else its
    /// default, else a sample of its type (at least one).
    private func exampleTexts(_ parameter: ParameterDocumentation) -> [String] {
        for texts in [parameter.exampleTexts, parameter.defaultTexts] {
            if let texts, !texts.isEmpty { return texts }
        }
        return [Self.sampleText(parameter.type)]
    }

    /// A value of `type` as an argument's text.
    static func sampleText(_ type: ValueType) -> String {
        switch type {
        case .integer, .long: "1"
        case .double: "1.5"
        case .boolean: "true"
        case .date: "2024-05-01"
        case .dateTime: "2024-05-01T12:00:00Z"
        case .uuid: "123e4567-e89b-12d3-a456-426614174000"
        case .url: "https://example.com/"
        case .file: "file.txt"
        case .enumeration(_, let values): values.first ?? "value"
        case .array(let element): sampleText(element)
        case .string, .map, .structure, .any: "text"
        }
    }

    /// A JSON value of `type`: a structure with its required fields in
    /// their order, lists empty.
    private func sampleJSON(_ type: ValueType, depth: Int = 0) -> JSONValue {
        switch type {
        case .integer, .long: return 1
        case .double: return .number(1.5)
        case .boolean: return true
        case .array: return []
        case .map, .any: return [:]
        case .structure(let name):
            guard depth < 4, let structure = structures.first(where: { $0.name == name }) else { return [:] }
            return .object(
                JSONValue.Members(
                    structure.fields.filter(\.required).map { field in
                        (key: field.name, value: sampleJSON(field.type, depth: depth + 1))
                    }))
        case .string, .date, .dateTime, .uuid, .url, .file, .enumeration:
            return .string(Self.sampleText(type))
        }
    }

    /// `text` percent-encoded for a path segment or a query value, leaving
    /// letters, digits and `-._~*,:@!$` as they are.
    static func percentEncoded(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var encoded: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                encoded.append(byte)
            case _ where "-._~*,:@!$".utf8.contains(byte):
                encoded.append(byte)
            default:
                encoded += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }

    /// `text` in single quotes for a POSIX shell.
    private func shellQuoted(_ text: String) -> String {
        "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: #"'\''"#) + "'"
    }
}
