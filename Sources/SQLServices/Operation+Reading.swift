import HTTPServer
import PostgreSQLWebService
import WebService

// MARK: - The read language's parameters of a GET

extension Operation {
    /// The parameters of a GET on `graph.resources[resource]` beside its
    /// own (`taken`): those its documents state (`select`, `order`, `or`,
    /// `and`, a filter per filterable column: ``Resource/documentedArguments(taken:value:)``),
    /// and the one that reads every argument its own parameters do not
    /// name as a `ReadRequest`, refusing what the resource cannot take
    /// with PostgREST's problem (a 400 naming the argument).
    ///
    /// ```swift
    /// Operation.readParameters(graph: graph, resource: 0, taken: ["name", "limit", "offset"])
    /// ```
    static func readParameters(graph: ResourceGraph, resource: Int, taken: Set<String>) -> [Parameter] {
        let documented = graph.resources[resource].documentedArguments(taken: taken, value: Argument.documented).map {
            Parameter(role: .documented, runtime: $0)
        }
        let read = RuntimeParameter<Argument>.readingOtherArguments(
            description: "Filters, `or`, `and`, `order`, `select` and embedding, in PostgREST's syntax."
        ) { request throws(HTTPError) in
            do throws(ReadError) {
                return .read(
                    try ReadRequest(graph: graph, resource: resource, arguments: request.otherArguments, limits: ReadLimits(request.limits))
                )
            } catch {
                throw error.httpError ?? HTTPError(.badRequest, detail: "The request cannot be read.")
            }
        }
        return documented + [Parameter(role: .read, runtime: read)]
    }
}

// MARK: - The request of a table write

extension Operation {
    /// The parameter of a `@writes` operation that hands its handler the
    /// request (body, filters, `select`, `columns`, `on_conflict`,
    /// preferences), which `TableWrite` reads.
    static func writeParameter() -> Parameter {
        let runtime = RuntimeParameter<Argument>.readingOtherArguments(
            description: "The rows (a JSON object or array), and filters, `select`, `columns` and `on_conflict` in PostgREST's syntax.",
            readsBody: true
        ) { request throws(HTTPError) in .write(request) }
        return Parameter(role: .write, runtime: runtime)
    }
}

// MARK: - The request of a function call

extension Operation {
    /// The parameter of a `@function` operation that hands its handler the
    /// request (the arguments, in the body of a POST or the query string of
    /// a GET, and the read language's), which `FunctionCall` reads.
    static func callParameter(readsBody: Bool) -> Parameter {
        let runtime = RuntimeParameter<Argument>.readingOtherArguments(
            description: "The function's arguments by name"
                + (readsBody ? " (a JSON object)" : "") + ", and filters, `order`, `select` and embedding in PostgREST's syntax.",
            readsBody: readsBody
        ) { request throws(HTTPError) in .write(request) }
        return Parameter(role: .write, runtime: runtime)
    }
}
