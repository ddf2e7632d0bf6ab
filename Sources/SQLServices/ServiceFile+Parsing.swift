import HTTPServer
import PostgreSQL

extension ServiceFile {
    /// The directives of the header, and what they take.
    static let headerDirectives = ["param", "returns", "paged", "filter", "order", "notfound", "service", "example"]

    /// Parses the text of a service file named `file` in messages. Every
    /// problem the text has on its own (a header that does not parse, an
    /// unknown directive, a section without a statement) is reported, not
    /// only the first.
    ///
    /// ```swift
    /// let parsed = try ServiceFile(parsing: "-- GET /departments\nSELECT dept_no FROM departments", file: "departments.sql")
    /// parsed.routePath   // "/"
    /// ```
    public init(parsing text: String, file: String) throws(ServiceProblems) {
        var problems: [ServiceProblem] = []
        func problem(_ line: Int, _ message: String) {
            problems.append(ServiceProblem(file: file, line: line, message: message))
        }
        self.file = file
        method = .get
        path = ""
        segments = []
        headerLine = 1
        description = ""

        // The header: the first run of `--` lines (blank lines before it skipped); a blank line or code ends it.
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasSuffix("\r") ? $0.dropLast() : $0 }
        var index = 0
        var header: [(text: Substring, line: Int)] = []
        while index < lines.count, lines[index].allSatisfy({ $0 == " " || $0 == "\t" }) { index += 1 }
        while index < lines.count {
            let trimmed = lines[index].drop { $0 == " " || $0 == "\t" }
            guard trimmed.hasPrefix("--") else { break }
            header.append((trimmed.dropFirst(2).drop { $0 == " " || $0 == "\t" }, index + 1))
            index += 1
        }
        let bodyLine = index + 1
        let body = lines[min(index, lines.count)...].joined(separator: "\n")

        guard let first = header.first else {
            problem(
                bodyLine <= lines.count ? bodyLine : 1,
                "the file must begin with a header comment such as `-- GET /employees/{employeeNumber}`")
            throw ServiceProblems(folder: file, problems: problems)
        }
        headerLine = first.line
        parseRoute(first.text, line: first.line, problem: problem)
        parseHeader(header.dropFirst(), problem: problem)
        parseBody(body, firstLine: bodyLine, problem: problem)

        if let writes {
            if method == .get { problem(writes.line, "@writes declares a write: the file's method is POST, PUT, PATCH or DELETE") }
            if let statement = statements.first {
                problem(statement.codeLine, "a file with @writes has no statement: the server writes the rows the request sends or selects")
            }
            for section in sections { problem(section.line, "a file with @writes has no sections") }
            if let line = unfilteredLine, !(method == .patch || method == .delete) || !variables.isEmpty {
                problem(line, "@unfiltered lets a PATCH or DELETE by filter (no path variable) write every row")
            }
            if !parameters.isEmpty || returns != nil || pagedLine != nil || filter != nil || order != nil || notFound != nil {
                problem(
                    writes.line, "a file with @writes takes no @param, @returns, @paged, @filter, @order or @notfound: its table says them")
            }
        } else if let function {
            if method != .get, method != .post {
                problem(function.line, "@function calls a function: the file's method is GET (for a stable or immutable one) or POST")
            }
            if let statement = statements.first {
                problem(
                    statement.codeLine, "a file with @function has no statement: the server calls the function with the request's arguments"
                )
            }
            for section in sections { problem(section.line, "a file with @function has no sections") }
            if !parameters.isEmpty || returns != nil || pagedLine != nil || filter != nil || order != nil || notFound != nil
                || listen != nil
            {
                problem(
                    function.line,
                    "a file with @function takes no @param, @returns, @paged, @filter, @order, @notfound or @listen: its function says them"
                )
            }
        } else if statements.isEmpty, problems.isEmpty {
            problem(bodyLine <= lines.count ? bodyLine : headerLine, "the file has no SQL statement after its header")
        }
        if let line = unfilteredLine, writes == nil { problem(line, "@unfiltered lets a @writes PATCH or DELETE write every row") }
        guard problems.isEmpty else { throw ServiceProblems(folder: file, problems: problems) }
    }

    /// `GET /departments/{departmentNumber}`.
    private mutating func parseRoute(_ text: Substring, line: Int, problem: (Int, String) -> Void) {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
        let methods: [HTTPMethod] = [.get, .post, .put, .patch, .delete]
        guard words.count == 2, let method = methods.first(where: { $0.rawValue == words[0] }), words[1].hasPrefix("/") else {
            problem(
                line,
                "the header's first line must be a method and a path, such as `-- GET /employees/{employeeNumber}`; found `-- \(text)`")
            return
        }
        self.method = method
        path = String(words[1])
        var parts = words[1].split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        if parts.count > 1, parts.last == "" { parts = parts.dropLast() }
        for part in parts {
            if part.hasPrefix("{"), part.hasSuffix("}"), part.count > 2, Self.isIdentifier(part.dropFirst().dropLast()) {
                let name = String(part.dropFirst().dropLast())
                if variables.contains(name) { problem(line, "the path names the variable {\(name)} twice") }
                segments.append(.variable(name))
            } else if !part.isEmpty, part.allSatisfy(Self.isLiteralCharacter) {
                segments.append(.literal(String(part)))
            } else {
                problem(
                    line, "the path segment `\(part)` is neither a name (letters, digits, `-._~`) nor a variable such as {employeeNumber}")
                return
            }
        }
        guard case .literal = segments.first else {
            problem(line, "the path must begin with the service's name, as in `/employees/{employeeNumber}`")
            return
        }
    }

    /// Whether `name` is a channel `@listen` takes: an identifier PostgreSQL
    /// takes unquoted (letters, digits, `_`; not a digit first), at most 63 bytes.
    static func isChannel(_ name: Substring) -> Bool {
        guard let first = name.unicodeScalars.first, name.utf8.count <= 63, !("0"..."9").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy {
            $0 == "_" || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
        }
    }

    /// The header's lines after the first: description lines and directives.
    private mutating func parseHeader(_ lines: ArraySlice<(text: Substring, line: Int)>, problem: (Int, String) -> Void) {
        var paragraphs: [[Substring]] = [[]]
        for (text, line) in lines {
            guard text.hasPrefix("@") else {
                let trimmed = text.trimmingBlanks
                if trimmed.isEmpty {
                    if !paragraphs[paragraphs.count - 1].isEmpty { paragraphs.append([]) }
                } else {
                    paragraphs[paragraphs.count - 1].append(trimmed)
                }
                continue
            }
            let name = text.dropFirst().prefix { !($0 == " " || $0 == "\t") }
            let argument = text.dropFirst(1 + name.count).trimmingBlanks
            switch name {
            case "param": parseParameter(argument, line: line, problem: problem)
            case "returns":
                let words = argument.split(separator: " ")
                guard (1...2).contains(words.count), let shape = Shape(rawValue: String(words[0])),
                    words.count == 1 || Self.isIdentifier(words[1])
                else {
                    problem(line, "@returns takes `list` or `object`, and optionally the name of the returned structure")
                    continue
                }
                if returns != nil { problem(line, "@returns is given twice") }
                returns = ReturnsDirective(shape: shape, typeName: words.count == 2 ? String(words[1]) : nil, line: line)
            case "paged":
                if !argument.isEmpty { problem(line, "@paged takes no argument") }
                pagedLine = line
            case "filter", "order":
                let labels = argument.split(separator: ",").map { String($0.trimmingBlanks) }
                let directive: ColumnsDirective
                if argument == "*" {
                    directive = ColumnsDirective(labels: nil, line: line)
                } else if labels.isEmpty || labels.contains(where: \.isEmpty) || labels.contains("*") {
                    problem(line, "@\(name) takes the labels of result columns, comma-separated, or * for all of them")
                    continue
                } else {
                    directive = ColumnsDirective(labels: labels, line: line)
                }
                if name == "filter" {
                    if filter != nil { problem(line, "@filter is given twice") }
                    filter = directive
                } else {
                    if order != nil { problem(line, "@order is given twice") }
                    order = directive
                }
            case "notfound":
                if argument.isEmpty { problem(line, "@notfound needs the text of the 404 problem's detail") }
                notFound = TextDirective(text: String(argument), line: line)
            case "service":
                if argument.isEmpty { problem(line, "@service needs the service's description") }
                serviceDescription = TextDirective(text: String(argument), line: line)
            case "example":
                parseExample(argument, line: line, problem: problem)
            case "listen":
                if !Self.isChannel(argument) {
                    problem(line, "@listen needs the channel's name, as `NOTIFY` takes it: letters, digits and `_`, up to 63 of them")
                }
                if listen != nil { problem(line, "@listen is given twice") }
                listen = TextDirective(text: String(argument), line: line)
            case "writes":
                if argument.isEmpty { problem(line, "@writes takes the name of the table written (`invoice`, `sales.invoice`)") }
                if writes != nil { problem(line, "@writes is given twice") }
                writes = TextDirective(text: String(argument), line: line)
                if function != nil { problem(line, "a file has @writes or @function, not both") }
            case "unfiltered":
                if !argument.isEmpty { problem(line, "@unfiltered takes no argument") }
                unfilteredLine = line
            case "function":
                if argument.isEmpty { problem(line, "@function takes the name of the function called (`add_them`, `api.add_them`)") }
                if function != nil { problem(line, "@function is given twice") }
                if writes != nil { problem(line, "a file has @writes or @function, not both") }
                function = TextDirective(text: String(argument), line: line)
            case "detail", "stream":
                problem(
                    line, "@\(name) starts a section of its own: put it after the operation's statement, followed by the detail's query")
            default:
                problem(
                    line,
                    "unknown directive @\(name); the header takes @param, @returns, @paged, @filter, @order, @notfound, @service, @example, @listen, @writes, @unfiltered and @function"
                )
            }
        }
        description = paragraphs.filter { !$0.isEmpty }.map { $0.joined(separator: " ") }.joined(separator: "\n\n")
    }

    /// `NAME [= DEFAULT] text`.
    private mutating func parseParameter(_ argument: Substring, line: Int, problem: (Int, String) -> Void) {
        let name = argument.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        guard Self.isIdentifier(name) else {
            problem(line, "@param needs a parameter name, as in `@param employeeNumber The employee's number.`")
            return
        }
        var rest = argument.dropFirst(name.count).trimmingBlanks
        var defaultText: String?
        if rest.hasPrefix("=") {
            rest = rest.dropFirst().trimmingBlanks
            if rest.hasPrefix("\"") {
                guard let (value, after) = Self.quoted(rest) else {
                    problem(line, "the default of @param \(name) opens a quote that it does not close")
                    return
                }
                defaultText = value
                rest = after.trimmingBlanks
            } else {
                let value = rest.prefix { !($0 == " " || $0 == "\t") }
                guard !value.isEmpty else {
                    problem(line, "@param \(name) = needs a default value (quote it with \"\" for one with spaces)")
                    return
                }
                defaultText = String(value)
                rest = rest.dropFirst(value.count).trimmingBlanks
            }
        }
        if parameters.contains(where: { $0.name == name }) {
            problem(line, "@param \(name) is given twice")
        }
        parameters.append(ParameterDirective(name: String(name), defaultText: defaultText, description: String(rest), line: line))
    }

    /// `NAME VALUE`: the rest of the line, or a double-quoted text (`""`
    /// for a quote) for one that begins or ends with a space.
    private mutating func parseExample(_ argument: Substring, line: Int, problem: (Int, String) -> Void) {
        let name = argument.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        var rest = argument.dropFirst(name.count)
        guard Self.isIdentifier(name), rest.isEmpty || rest.first == " " || rest.first == "\t" else {
            problem(line, "@example needs a parameter's name and a value, as in `@example employeeNumber 10004`")
            return
        }
        rest = rest.trimmingBlanks
        var text = String(rest)
        if rest.hasPrefix("\"") {
            guard let (value, after) = Self.quoted(rest), after.trimmingBlanks.isEmpty else {
                problem(line, "the value of @example \(name) opens a quote that it does not close, or has text after it")
                return
            }
            text = value
        }
        guard !text.isEmpty || rest.hasPrefix("\"") else {
            problem(line, "@example \(name) needs a value, as a request would send it (`@example \(name) 10004`)")
            return
        }
        if examples.contains(where: { $0.name == name }) { problem(line, "@example \(name) is given twice") }
        examples.append(ExampleDirective(name: String(name), text: text, line: line))
    }

    /// The text between the double quote that begins `text` and the one
    /// that closes it (`""` inside is a quote), and what follows; `nil`
    /// when no quote closes it.
    static func quoted(_ text: Substring) -> (String, Substring)? {
        var value = ""
        var position = text.index(after: text.startIndex)
        while position < text.endIndex {
            if text[position] == "\"" {
                let next = text.index(after: position)
                if next < text.endIndex, text[next] == "\"" {
                    value.append("\"")
                    position = text.index(after: next)
                    continue
                }
                return (value, text[next...])
            }
            value.append(text[position])
            position = text.index(after: position)
        }
        return nil
    }

    /// The SQL after the header: the operation's statements, then the
    /// `@detail` and `@stream` sections.
    private mutating func parseBody(_ body: String, firstLine: Int, problem: (Int, String) -> Void) {
        let utf8 = Array(body.utf8)
        func line(at offset: Int) -> Int {
            firstLine + utf8[..<offset].count { $0 == UInt8(ascii: "\n") }
        }
        // Section markers: directive comments that begin their line.
        var markers: [(start: Int, end: Int, name: Substring, argument: Substring)] = []
        for comment in SQLScript.lineComments(in: body) {
            var lineStart = comment.utf8Offset
            while lineStart > 0, utf8[lineStart - 1] == UInt8(ascii: " ") || utf8[lineStart - 1] == UInt8(ascii: "\t") { lineStart -= 1 }
            let content = comment.text.dropFirst(2).drop { $0 == " " || $0 == "\t" }
            guard content.hasPrefix("@"), content.dropFirst().first?.isLetter == true else { continue }
            let name = content.dropFirst().prefix { !($0 == " " || $0 == "\t") }
            let argument = content.dropFirst(1 + name.count).trimmingBlanks
            guard lineStart == 0 || utf8[lineStart - 1] == UInt8(ascii: "\n") else {
                problem(line(at: comment.utf8Offset), "a directive comment must begin its line: `-- @\(name)`")
                continue
            }
            switch name {
            case "detail", "stream":
                markers.append((lineStart, comment.utf8Offset + comment.text.utf8.count, name, argument))
            case _ where Self.headerDirectives.contains(String(name)):
                problem(line(at: comment.utf8Offset), "@\(name) belongs in the header, the comment lines before the first statement")
            default:
                problem(line(at: comment.utf8Offset), "unknown directive @\(name); sections start with @detail or @stream")
            }
        }

        func split(from start: Int, to end: Int) -> [Statement] {
            let text = String(decoding: utf8[start..<end], as: UTF8.self)
            return SQLScript.statements(in: text).map { Statement(text: $0.text, line: line(at: start + $0.utf8Offset)) }
        }
        statements = split(from: 0, to: markers.first?.start ?? utf8.count)
        if method == .get, statements.count > 1 {
            problem(
                statements[1].codeLine,
                "a GET operation runs one statement; this file has \(statements.count) (only writes run several, in one transaction)")
        }

        for (index, marker) in markers.enumerated() {
            let markerLine = line(at: marker.start)
            let isStreamed = marker.name == "stream"
            let name = marker.argument.prefix { !($0 == " " || $0 == "\t") }
            let parts = name.split(separator: ".", omittingEmptySubsequences: false)
            guard !name.isEmpty, parts.allSatisfy(Self.isIdentifier), !(isStreamed && parts.count > 1) else {
                problem(
                    markerLine,
                    isStreamed
                        ? "@stream needs the name of the member, such as `@stream employees`"
                        : "@detail needs a name, dotted for a detail of a detail: `@detail titles`, `@detail managers.titles`")
                continue
            }
            let end = index + 1 < markers.count ? markers[index + 1].start : utf8.count
            let found = split(from: min(marker.end + 1, end), to: end)
            guard found.count == 1 else {
                problem(
                    markerLine,
                    found.isEmpty
                        ? "the \(marker.name) \"\(name)\" has no query"
                        : "the \(marker.name) \"\(name)\" holds \(found.count) statements; a \(marker.name) is one query")
                continue
            }
            if sections.contains(where: { $0.name == name }) {
                problem(markerLine, "the \(marker.name) \"\(name)\" is declared twice")
                continue
            }
            let description = marker.argument.dropFirst(name.count).trimmingBlanks
            sections.append(
                Section(
                    name: String(name), isStreamed: isStreamed, description: String(description), statement: found[0], line: markerLine))
        }
    }

    // MARK: - Characters

    static func isIdentifier(_ text: Substring) -> Bool {
        guard let first = text.first, first.isASCII, first.isLetter || first == "_" else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    }

    /// Characters of a literal path segment: RFC 3986's unreserved ones.
    static func isLiteralCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || "-._~".contains(character))
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    var trimmingBlanks: Substring {
        func isBlank(_ character: Character) -> Bool { character == " " || character == "\t" }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}
