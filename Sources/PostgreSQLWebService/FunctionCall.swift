import HTTPServer
import JSONStreaming
import PostgreSQL
import WebService

/// A call of a PostgreSQL function as PostgREST's `/rpc` makes it: `POST`
/// with a JSON object of named arguments, or `GET` with them in the query
/// string, read-only (a function that writes fails, 405). The overload is the one
/// whose argument names the request gives: every name it sends is an
/// argument of it, and every argument without a default is sent; an
/// argument left out takes the function's default. A function of one
/// unnamed `json` or `jsonb` argument takes the whole body.
///
/// The arguments are bound as one JSON object and read by PostgreSQL as
/// the arguments' types (`json_to_record`), so a number, a string, an
/// array or an object reaches the function as its type takes it; the
/// function's name and its arguments' names and types come from the
/// catalog at load, quoted. The result answers by its type:
///
/// | returns | answer |
/// | --- | --- |
/// | a set of rows (`SETOF t`, `TABLE (…)`) | a list, read in PostgREST's language (filters, `order`, `select`, embedding, pages, counts), streamed |
/// | one row of a composite type | an object |
/// | a scalar | the bare JSON value (`3`, `"text"`) |
/// | a set of scalars | a JSON array of the values |
/// | `void` | `204 No Content` |
///
/// ```swift
/// let call = FunctionCall(name: "public.add_them", overloads: [...], graph: graph)
/// Route(.post, "/rpc/add_them", parameters: [call.parameter()]) { values in try call.query(values[0]) }
/// ```
public struct FunctionCall: Sendable {
    /// An argument the function takes.
    public struct Argument: Sendable {
        public var name: String
        /// Its type as SQL writes it (`integer`, `text[]`, `public.mood`), from `format_type`.
        public var typeName: String
        public var isArray: Bool
        /// The function's `VARIADIC` argument (its type is the array).
        public var isVariadic: Bool
        /// Whether a call may leave it out (the function declares a default).
        public var hasDefault: Bool

        public init(name: String, typeName: String, isArray: Bool, isVariadic: Bool = false, hasDefault: Bool = false) {
            self.name = name
            self.typeName = typeName
            self.isArray = isArray
            self.isVariadic = isVariadic
            self.hasDefault = hasDefault
        }
    }

    /// What an overload returns, and so how its answer is written.
    public enum Result: Sendable {
        /// A set of rows: a list of the resource's rows (its columns in order).
        case rows(resource: Int, columns: [(name: String, label: String)])
        /// One row of a composite type: an object.
        case row(resource: Int, columns: [(name: String, label: String)])
        /// A scalar: the value.
        case value
        /// A set of scalars: an array of the values.
        case values
        /// `void`: nothing (204).
        case none
    }

    /// One overload of the function.
    public struct Overload: Sendable {
        /// The function, schema-qualified and quoted (`"public"."add_them"`).
        public var function: String
        /// Its input arguments, in order.
        public var arguments: [Argument]
        /// Whether it is volatile: called by `POST` only.
        public var isVolatile: Bool
        public var result: Result
        /// A function of one unnamed `json` or `jsonb` argument: the body is that argument.
        public var wholeBodyType: String?
        /// The select list of its rows (aliased `call`), each column labelled: written once, at load.
        let selection: String

        public init(function: String, arguments: [Argument], isVolatile: Bool, result: Result, wholeBodyType: String? = nil) {
            self.function = function
            self.arguments = arguments
            self.isVolatile = isVolatile
            self.result = result
            self.wholeBodyType = wholeBodyType
            switch result {
            case .rows(_, let columns), .row(_, let columns):
                selection = columns.map { "\"call\"." + quoted($0.name) + " AS " + quoted($0.label) }.joined(separator: ", ")
            case .value, .values:
                selection = "\"call\".\"value\" AS " + quoted(ObjectTemplate.valueMarker)
            case .none:
                selection = ""
            }
        }

        /// Whether a call naming `names` (and nothing else) calls this overload.
        func accepts(_ names: Set<String>) -> Bool {
            guard wholeBodyType == nil else { return false }
            for name in names where !arguments.contains(where: { $0.name == name }) { return false }
            return arguments.allSatisfy { $0.hasDefault || names.contains($0.name) }
        }
    }

    /// The function as the catalog names it, for messages (`public.add_them`).
    public let name: String
    public let overloads: [Overload]
    /// The graph whose resources read the rows of overloads that return rows.
    public let graph: ResourceGraph

    public init(name: String, overloads: [Overload], graph: ResourceGraph) {
        self.name = name
        self.overloads = overloads
        self.graph = graph
    }

    // MARK: - A request's call

    /// The query `request` makes: the overload its argument names choose,
    /// called with its arguments, answered as the overload's result says.
    public func query(_ request: RoutedRequest, limits: ReadLimits) throws -> Query {
        let isGet = request.isRead
        var readArguments: [(name: String, values: [String])] = []
        let names: Set<String>
        var json: String
        var wholeBody: Overload?
        var firstOfArray = false
        if isGet {
            // As PostgREST reads a GET: the read language's own names, embedded resources' (`rel.col`) and values
            // that are filters (`gt.2`) are read; every other value is an argument (its last, unless an array's).
            var sent: [(name: String, values: [String])] = []
            for argument in request.otherArguments {
                guard !Self.readNames.contains(argument.name), !argument.name.contains(".") else {
                    readArguments.append(argument)
                    continue
                }
                let filters = argument.values.filter(Self.isFilter)
                let values = argument.values.filter { !Self.isFilter($0) }
                if !filters.isEmpty { readArguments.append((argument.name, filters)) }
                if !values.isEmpty { sent.append((argument.name, values)) }
            }
            names = Set(sent.map(\.name))
            json = object(of: sent)
        } else {
            var chosen: Set<String>?
            for argument in request.otherArguments {
                guard argument.name == "columns" else {
                    readArguments.append(argument)
                    continue
                }
                chosen = Set(argument.values.flatMap { $0.split(separator: ",").map { String($0.filter { $0 != " " }) } })
            }
            let isForm = request.request.contentType == FormBody.contentType
            if request.request.body.isEmpty, !isForm || request.request.formFields.isEmpty {
                json = "{}"
                names = []
            } else {
                json = try TableWrite.bodyText(of: request, takesCSV: false)
                wholeBody = isForm ? nil : overloads.first { $0.wholeBodyType != nil }
                // A form's fields are its members; a JSON body is scanned for its first object's.
                var keys: [String]? = isForm ? request.request.formFields.map(\.name) : nil
                let shape =
                    isForm ? .object : try? JSONObjectKeys.scan(request.request.body) { found in if keys == nil { keys = found } }
                if shape == .object || (shape == .array && keys != nil) {
                    // An array, as PostgREST takes one: its first object's members are the arguments.
                    firstOfArray = shape == .array
                    let given = Set(keys ?? [])
                    names = chosen.map(given.intersection) ?? given
                } else if wholeBody != nil {
                    names = []
                } else {
                    throw HTTPError(.badRequest, detail: "The arguments are one JSON object, by name.", code: "PGRST102")
                }
            }
        }
        let overload = try choose(names, wholeBody: wholeBody)
        var arguments = SQLArguments()
        let from: String
        if let type = overload.wholeBodyType {
            from = overload.function + "(CAST(:rpcArguments AS " + type + "))"
            arguments[value: "rpcArguments"] = .text(json)
        } else {
            let sent = overload.arguments.filter { names.contains($0.name) }
            if sent.isEmpty {
                from = overload.function + "()"
            } else {
                let record = sent.map { quoted($0.name) + " " + $0.typeName }.joined(separator: ", ")
                let call = sent.map { ($0.isVariadic ? "VARIADIC " : "") + quoted($0.name) + " := \"arguments\"." + quoted($0.name) }
                from =
                    "json_to_record(CAST(:rpcArguments AS json)" + (firstOfArray ? " -> 0" : "") + ") AS \"arguments\"(" + record
                    + ") CROSS JOIN LATERAL "
                    + overload.function + "(" + call.joined(separator: ", ") + ")"
                // Bound only where the call reads it: a statement binds each argument it names, and no other.
                arguments[value: "rpcArguments"] = .text(json)
            }
        }
        let read = { (resource: Int) throws -> ReadRequest? in
            guard !readArguments.isEmpty else { return nil }
            do throws(ReadError) {
                return try ReadRequest(graph: graph, resource: resource, arguments: readArguments, limits: limits)
            } catch {
                throw error.httpError ?? HTTPError(.badRequest, detail: "The request cannot be read.")
            }
        }
        var query = try query(
            of: overload, from: from, arguments: arguments, read: read, readArguments: readArguments, request: request)
        // As PostgREST runs it: read-only by GET (a GET is), and a STABLE or IMMUTABLE function by POST too.
        query.readsOnly = !overload.isVolatile
        return query
    }

    /// The query of `overload`'s call `from`, answered as its result says.
    private func query(
        of overload: Overload, from: String, arguments: SQLArguments, read: (Int) throws -> ReadRequest?,
        readArguments: [(name: String, values: [String])], request: RoutedRequest
    ) throws -> Query {
        switch overload.result {
        case .rows(let resource, _):
            let query = Query.list(Self.selecting(overload, from: from), arguments)
            return try read(resource).map(query.reading) ?? query
        case .row(let resource, _):
            let query = Query.object(
                Self.selecting(overload, from: from), arguments,
                notFound: HTTPError(.notFound, detail: "The function \(name) returned no row."))
            return try read(resource).map(query.reading) ?? query
        case .value, .values:
            // JSON, or the 406 of an Accept that names nothing a read writes (`PGRST107`).
            _ = try ReadPreferences.representation(request.headers.values(for: "Accept"))
            if let first = readArguments.first {
                throw HTTPError(
                    .badRequest, detail: "\(first.name) is no argument of \(name), whose result is not rows to filter.",
                    parameter: first.name, code: "PGRST100")
            }
            let sql = "SELECT " + overload.selection + " FROM " + from + " AS \"call\"(\"value\")"
            if case .values = overload.result { return Query.list(sql, arguments) }
            return Query.object(sql, arguments, notFound: HTTPError(.notFound, detail: "The function \(name) returned nothing."))
        case .none:
            return Query.execute("SELECT FROM " + from + " AS \"call\"", arguments)
        }
    }

    /// The read language's own arguments, never a function's.
    static let readNames: Set<String> = ["select", "order", "limit", "offset", "or", "and", "not.or", "not.and", "columns"]

    /// Whether a query value is a filter (`gt.2`, `not.eq.x`, `eq(any).{1,2}`, `fts(english).cat`), not an argument.
    static func isFilter(_ value: String) -> Bool {
        var rest = Substring(value)
        if rest.hasPrefix("not.") { rest = rest.dropFirst(4) }
        // Read by bytes: an argument's value (a number, most often) is no operator, and is told so at its first byte past a word.
        guard let end = rest.utf8.firstIndex(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "(") }) else { return false }
        return ReadSyntax.Operator(rawValue: String(rest[..<end])) != nil
    }

    /// Whether an overload takes an argument of this name as an array.
    private func isArray(_ name: String) -> Bool {
        overloads.contains { $0.arguments.contains { $0.name == name && $0.isArray } }
    }

    /// The rows of `from` (aliased `call`), as `overload` returns them.
    private static func selecting(_ overload: Overload, from: String) -> String {
        "SELECT " + overload.selection + " FROM " + from + " AS \"call\""
    }

    /// The overload a call naming `names` calls: PostgREST's `PGRST202`
    /// (404) for none, `PGRST203` (300) for several.
    private func choose(_ names: Set<String>, wholeBody: Overload?) throws -> Overload {
        let candidates = overloads.filter { $0.accepts(names) }
        if candidates.count == 1 { return candidates[0] }
        if candidates.isEmpty, let wholeBody { return wholeBody }
        if candidates.isEmpty {
            let listed = names.sorted().joined(separator: ", ")
            throw HTTPError(
                .notFound, detail: "Could not find the function \(name)(\(listed)) in the schema cache", code: "PGRST202",
                hint: "Its arguments are: "
                    + overloads.map { "(" + $0.arguments.map { $0.name + ($0.hasDefault ? "?" : "") }.joined(separator: ", ") + ")" }
                    .joined(separator: " or "))
        }
        // The overload that takes exactly the names sent wins over those with defaults left out.
        let exact = candidates.filter { $0.arguments.count == names.count }
        if exact.count == 1 { return exact[0] }
        throw HTTPError(
            HTTPStatus(300),
            detail: "Could not choose the best candidate function between: "
                + candidates.map { name + "(" + $0.arguments.map { $0.name + " => " + $0.typeName }.joined(separator: ", ") + ")" }
                .joined(separator: ", "),
            code: "PGRST203", hint: "Name the arguments of one overload only.")
    }

    /// The query string's arguments of a `GET` as one JSON object: a value
    /// as a JSON string (PostgreSQL reads it as the argument's type), the
    /// values of an array argument as an array (or one value as written,
    /// `{1,2}`); any other argument has one value.
    private func object(of sent: [(name: String, values: [String])]) -> String {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        for (position, argument) in sent.enumerated() {
            if position > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONWriter.appendString(argument.name, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            if isArray(argument.name), !(argument.values.count == 1 && argument.values[0].hasPrefix("{")) {
                bytes.append(UInt8(ascii: "["))
                for (index, value) in argument.values.enumerated() {
                    if index > 0 { bytes.append(UInt8(ascii: ",")) }
                    JSONWriter.appendString(value, to: &bytes)
                }
                bytes.append(UInt8(ascii: "]"))
            } else {
                JSONWriter.appendString(argument.values[argument.values.count - 1], to: &bytes)
            }
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }
}
