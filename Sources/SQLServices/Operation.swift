import HTTPServer
import PostgreSQL
import PostgreSQLWebService
import WebService

/// One operation of a service folder: a service file checked against the
/// database, ready to answer. Its route takes the parameters PostgreSQL
/// described, and its handler returns a `Query` that the router's
/// `QueryRunner` runs, as for a hand-written service.
public struct Operation: Sendable {
    /// The file it was read from.
    public let file: String
    public let method: HTTPMethod
    /// The path as the file wrote it: `/employees/{employeeNumber}`.
    public let path: String
    /// The service it belongs to: the path's first segment.
    public let serviceName: String
    public let description: String
    /// What it answers with.
    public let kind: Kind
    /// The names of the details a request can ask for (the `details` parameter's values).
    public let detailNames: [String]
    /// The route's parameters, in order: what `?api` lists and the handler receives.
    let parameters: [Parameter]
    /// The statements: one for a GET, one or more (one transaction) for a write.
    let statements: [String]
    /// The details a request can ask for, by name.
    let details: [String: Detail]
    /// The names of the main statements' parameters, with their index among `parameters`.
    let bindings: [(index: Int, name: String)]
    /// The request's arguments that the details embedded from the row bind
    /// (whether `details` or `select` asks for them), with their index.
    let detailBindings: [(index: Int, name: String)]
    /// A GET's resource in the folder's `ResourceGraph`.
    let resource: Int?
    /// The 404's detail (`{name}` placeholders filled) and the variable it names, for objects.
    let notFound: (template: String, parameter: String?)?
    /// For a POST: where the returned row is read again (`/employees/{employeeNumber}`).
    let location: String?
    /// The documented result.
    let result: ResultDescription
    /// `@listen`: the channel a list's event streams relay after its rows.
    let channel: String?
    /// What a `@writes` file writes.
    let tableWrite: TableWrite?
    /// What a `@function` file calls.
    let functionCall: FunctionCall?

    /// What an operation answers with.
    public enum Kind: Sendable, Equatable {
        /// Every row, streamed; `paged`: a page by `limit` and `offset`.
        case list(paged: Bool)
        /// The first row; 404 without one.
        case object
        /// A write: its statements in one transaction, the last one's rows answer.
        case write(returning: Query.Returning)
        /// `@writes`: a table's rows written as PostgREST's clients send them (`TableWrite`).
        case tableWrite
        /// `@function`: a call of a PostgreSQL function as PostgREST's `/rpc` makes it (`FunctionCall`).
        case function
    }

    /// A parameter of the route and what its value is for.
    struct Parameter: Sendable {
        enum Role: Sendable {
            /// A value bound to the statements' `:name` parameters.
            case value
            /// The list of details asked for.
            case details
            /// A page's `limit` or `offset`.
            case limit, offset
            /// An argument of the read language, documented (`select`, a
            /// filter); the `read` parameter reads them all.
            case documented
            /// Every argument no other parameter names, read in PostgREST's
            /// language against the operation's resource (`ReadRequest`).
            case read
            /// The request a table write reads (body, filters, preferences: `TableWrite`).
            case write
        }

        let role: Role
        let runtime: RuntimeParameter<Argument>
        var name: String { runtime.name }
    }

    /// A converted argument: what the handler receives for each parameter.
    enum Argument: Sendable {
        case value(SQLValue)
        case names([String])
        case count(Int?)
        case read(ReadRequest)
        case documented
        case write(RoutedRequest)
    }

    /// A detail a request may ask for: a relationship of the operation's
    /// resource (``ReadRequest/embedding(_:)``), or a streamed member.
    struct Detail: Sendable {
        /// `@stream`: a list streamed as a member, bound from the request's arguments.
        let isStreamed: Bool
        /// Its SQL (for a streamed detail).
        let sql: String
        /// The request's arguments it (or a detail nested in it) binds, by index among the parameters.
        let requestBindings: [(index: Int, name: String)]
    }

    // MARK: - Answering

    /// The route that answers for this operation, below its service's path.
    ///
    /// The handler holds the operation through a reference: captured as a
    /// structure, it would be copied (each of its arrays, strings and
    /// dictionaries retained, then released) on every request.
    var route: Route {
        let operation = Reference(self)
        return Route(method, routePath, description: description, parameters: parameters.map(\.runtime), returns: result) { values in
            try operation.value.query(values)
        }
    }

    private final class Reference: Sendable {
        let value: Operation
        init(_ value: Operation) { self.value = value }
    }

    /// The router's form of the path below the service: `/?:employeeNumber`.
    var routePath: String {
        "/"
            + path.split(separator: "/").dropFirst().map { part in
                part.hasPrefix("{") ? "?:" + part.dropFirst().dropLast() : part
            }.joined(separator: "/")
    }

    /// The query one request runs, from its parameters' values. A GET's
    /// details that are relationships, and those `select` embeds, bind
    /// the request's arguments they use from the query's.
    func query(_ values: [Argument]) throws -> Query {
        var arguments = SQLArguments()
        for (index, name) in bindings {
            if case .value(let value) = values[index] { arguments[value: name] = value }
        }
        if method == .get { bind(detailBindings, from: values, into: &arguments) }
        switch kind {
        case .tableWrite:
            guard let tableWrite else { throw HTTPError(.internalServerError, detail: "The write has no table.") }
            var keyFilters: [(name: String, values: [String])] = []
            var request: RoutedRequest?
            for (parameter, value) in zip(parameters, values) {
                if case .value(.text(let text)) = value { keyFilters.append((parameter.name, ["eq." + text])) }
                if case .write(let routed) = value { request = routed }
            }
            guard let request else { throw HTTPError(.internalServerError, detail: "The write has no request.") }
            return try tableWrite.query(request, keyFilters: keyFilters, limits: ReadLimits(request.limits))
        case .function:
            for value in values {
                if case .write(let request) = value, let functionCall {
                    return try functionCall.query(request, limits: ReadLimits(request.limits))
                }
            }
            throw HTTPError(.internalServerError, detail: "The call has no request.")
        case .write(let returning):
            let query = Query.transaction(statements, arguments, returning: returning)
            return location.map(query.created(at:)) ?? query
        case .object:
            let names = askedNames(values)
            let asked = details(named: names)
            // The 404 is built only when no row comes, from what its closure
            // captures: these two, not the whole operation (a copy per request).
            let (notFound, parameters) = (self.notFound, self.parameters)
            var query = Query.object(statements[0], arguments, notFound: Self.notFoundError(notFound, parameters, values))
            var embedded: [String] = []
            for (name, detail) in zip(names, asked) {
                if detail.isStreamed {
                    var memberArguments = SQLArguments()
                    bind(detail.requestBindings, from: values, into: &memberArguments)
                    query = query.streaming(name, Query.list(detail.sql, memberArguments))
                } else {
                    embedded.append(name)
                }
            }
            return try reading(query, values, embedding: embedded)
        case .list(let paged):
            let names = askedNames(values)
            var query = Query.list(statements[0], arguments)
            if paged {
                var limit: Int?
                var offset = 0
                for (index, parameter) in parameters.enumerated() {
                    guard case .count(let count) = values[index] else { continue }
                    if case .limit = parameter.role { limit = count }
                    if case .offset = parameter.role { offset = count ?? 0 }
                }
                query = query.paged(limit: limit, offset: offset)
            }
            query = try reading(query, values, embedding: names)
            return channel.map(query.listening(to:)) ?? query
        }
    }

    /// `query` read as the request asks, with the details `names` embedded.
    private func reading(_ query: Query, _ values: [Argument], embedding names: [String]) throws -> Query {
        for value in values {
            if case .read(let request) = value { return query.reading(try request.embedding(names)) }
        }
        return query
    }

    /// The details of these names (the `details` parameter takes no other
    /// name). A loop, not `names.compactMap { details[$0] }`, whose closure
    /// would copy the whole operation on every request.
    private func details(named names: [String]) -> [Detail] {
        var asked: [Detail] = []
        asked.reserveCapacity(names.count)
        for name in names { if let detail = details[name] { asked.append(detail) } }
        return asked
    }

    private func askedNames(_ values: [Argument]) -> [String] {
        for value in values { if case .names(let names) = value { return names } }
        return []
    }

    private func bind(_ bindings: [(index: Int, name: String)], from values: [Argument], into arguments: inout SQLArguments) {
        for (index, name) in bindings {
            if case .value(let value) = values[index] { arguments[value: name] = value }
        }
    }

    /// The 404 for an object without a row: the `@notfound` text with its
    /// `{name}` placeholders filled with the parameters' values.
    static func notFoundError(
        _ notFound: (template: String, parameter: String?)?, _ parameters: [Parameter], _ values: [Argument]
    ) -> HTTPError {
        guard let notFound else { return HTTPError(.notFound, detail: "There is no such record.") }
        var detail = ""
        var rest = Substring(notFound.template)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            detail += rest[..<open]
            let name = String(rest[rest.index(after: open)..<close])
            if let index = parameters.firstIndex(where: { $0.name == name }), case .value(let value) = values[index] {
                if case .text(let text) = value { detail += text } else { detail += "null" }
            } else {
                detail += "{\(name)}"
            }
            rest = rest[rest.index(after: close)...]
        }
        detail += rest
        return HTTPError(.notFound, detail: detail, parameter: notFound.parameter)
    }
}
