import HTTPServer

extension WebServiceRouter {
    /// The arguments a request supplies, by name, and the names in the order
    /// they first appear.
    struct Arguments {
        var values: [String: [ArgumentInput]] = [:]
        var names: [String] = []
        /// The names a form field or a JSON body member supplies: never
        /// another input's (``RoutedRequest/otherArguments`` are the query string's).
        var bodyNames: Set<String> = []

        mutating func append(_ name: String, _ input: ArgumentInput) {
            // One hash lookup for a repeated name, not two.
            if let index = values.index(forKey: name) {
                values.values[index].append(input)
            } else {
                values[name] = [input]
                names.append(name)
            }
        }
    }

    // MARK: - Collecting

    /// Gathers the query string, form fields and, when `bodyIsArguments`,
    /// the members of a JSON object body; past `limit` values (each element
    /// of an array member counting once), a 400 that names the limit.
    static func arguments(of request: HTTPRequest, bodyIsArguments: Bool, limit: Int) throws -> Arguments {
        var count = request.queryItems.count + request.formFields.count
        guard count <= limit else { throw tooManyArguments(limit) }
        var arguments = Arguments()
        for item in request.queryItems {
            arguments.append(item.name, .text(item.value))
        }
        for field in request.formFields {
            arguments.bodyNames.insert(field.name)
            switch field.value {
            case .text(let text): arguments.append(field.name, .text(text))
            case .file(let file): arguments.append(field.name, .file(file))
            }
        }
        guard bodyIsArguments else { return arguments }
        try refuseUnreadBody(of: request)
        guard !request.body.isEmpty, let contentType = request.contentType,
            contentType == "application/json" || contentType.hasSuffix("+json")
        else {
            return arguments
        }
        let document: JSONValue
        do {
            document = try JSONValue.parse(request.body)
        } catch {
            throw HTTPError(.badRequest, detail: "The request body is not valid JSON: \(error).")
        }
        guard case .object(let members) = document else {
            throw HTTPError(.badRequest, detail: "A JSON request body must be an object whose members are the arguments.")
        }
        for (name, value) in members.members.sorted(by: { $0.key < $1.key }) {
            if case .array(let elements) = value { count += max(1, elements.count) } else { count += 1 }
            guard count <= limit else { throw tooManyArguments(limit) }
            arguments.bodyNames.insert(name)
            arguments.append(name, .json(value))
        }
        return arguments
    }

    /// A write whose body is not read as its arguments is refused, so
    /// that nothing is written from defaults alone: a body of a media type
    /// other than JSON or a form (none named, `text/plain`) is a 415, and
    /// an empty body that says it is JSON a 400, as PostgREST answers both.
    static func refuseUnreadBody(of request: HTTPRequest) throws(HTTPError) {
        guard request.method == .post || request.method == .put || request.method == .patch else { return }
        let contentType = request.contentType
        if request.body.isEmpty {
            guard let contentType, contentType == "application/json" || contentType.hasSuffix("+json") else { return }
            throw HTTPError(.badRequest, detail: "Empty or invalid json: the body is empty.", code: "PGRST102")
        }
        if let contentType, isReadable(contentType) { return }
        throw HTTPError(
            .unsupportedMediaType,
            detail: "The body must be application/json or a form (application/x-www-form-urlencoded, multipart/form-data), not "
                + (contentType.map { "\($0)" } ?? "a body without Content-Type") + ".")
    }

    private static func isReadable(_ contentType: String) -> Bool {
        contentType == "application/json" || contentType.hasSuffix("+json") || contentType == "application/x-www-form-urlencoded"
            || contentType == "multipart/form-data"
    }

    private static func tooManyArguments(_ limit: Int) -> HTTPError {
        RequestLimits.exceeded(
            "arguments", limit: limit,
            detail: "The request has more than \(limit) argument values (query items, form fields and JSON members together).")
    }

    // MARK: - Overloads

    /// HTTP-RPC's rule: among the routes whose parameters cover every
    /// supplied argument, the one with the fewest unused parameters; the
    /// first declared on a tie. Returns the chosen one's index in
    /// `candidates` (keeping the best by index rather than by value saves
    /// copying a route's many references, twice per request).
    static func choose(among candidates: [BoundRoute], for arguments: Arguments, request: HTTPRequest) throws -> Int {
        var best: (index: Int, unused: Int)?
        for index in candidates.indices {
            let accepted = candidates[index].acceptedNames
            if candidates[index].acceptsOtherArguments {
                // Other arguments come from the query string: a body's must
                // be one the route's inputs read themselves (a documented
                // filter is read from the query string only), unless the
                // route reads the body as it is (a form's fields too).
                guard candidates[index].takesBody || arguments.bodyNames.allSatisfy(candidates[index].ownNames.contains) else { continue }
                let unused = accepted.count - arguments.names.filter(accepted.contains).count
                if best == nil || unused < best!.unused { best = (index, unused) }
                continue
            }
            guard arguments.names.allSatisfy(accepted.contains) else { continue }
            let unused = accepted.count - arguments.names.count
            if unused < best?.unused ?? .max { best = (index, unused) }
        }
        if let best { return best.index }

        // No route takes every argument: the one that leaves out the fewest
        // names the first it leaves out. `candidates` is never empty (the
        // router answers 405 before), and that route leaves one out.
        guard
            let closest = candidates.min(by: { first, second in
                uncovered(by: first, in: arguments).count < uncovered(by: second, in: arguments).count
            }), let name = uncovered(by: closest, in: arguments).first
        else {
            throw HTTPError(.badRequest, detail: "The arguments fit no operation at \(request.rawPath).")
        }
        let values = arguments.values[name] ?? []
        var received = values.prefix(3).map(\.received).joined(separator: ", ")
        if values.count > 3 { received += " and \(values.count - 3) more" }
        if closest.acceptsOtherArguments {
            let own = closest.argumentNames.filter(closest.ownNames.contains)
            let takes = own.isEmpty ? "it takes none there" : "it takes " + own.joined(separator: ", ") + " there"
            throw HTTPError(
                .badRequest,
                detail: "The argument \"\(name)\" (received \(received)) in the request body is not a parameter of "
                    + "\(closest.route.method) \(request.rawPath) (\(takes)): filters, select and order go in the query string.",
                parameter: name)
        }
        let expected = closest.argumentNames.isEmpty ? "it takes no arguments" : "expected " + closest.argumentNames.joined(separator: ", ")
        throw HTTPError(
            .badRequest,
            detail:
                "The argument \"\(name)\" (received \(received)) is not a parameter of \(closest.route.method) \(request.rawPath); \(expected).",
            parameter: name
        )
    }

    /// The names `candidate` does not read. A route that reads other
    /// arguments and the body as it is (a table's write, a function's call)
    /// reads a form's fields too, as its body.
    private static func uncovered(by candidate: BoundRoute, in arguments: Arguments) -> [String] {
        arguments.names.filter { name in
            candidate.acceptsOtherArguments
                ? !candidate.takesBody && arguments.bodyNames.contains(name) && !candidate.ownNames.contains(name)
                : !candidate.argumentNames.contains(name)
        }
    }
}
