import WebService

/// The arguments of a route that reads a ``Resource`` in PostgREST's
/// language: `select`, filters, `or`, `and`, `order`, `limit` and
/// `offset`, at the root and along embedded resources, read from every
/// argument the route's other inputs do not name. Its value, a
/// ``ReadRequest``, is handed to ``Query/reading(_:)``; an argument the
/// resource cannot take is a 400 naming it, before the handler runs.
///
/// ```swift
/// Route(.get, "/", returns: [Employee].self, ReadArguments(graph: Self.graph, resource: 0)) { read in
///     Query.list(Self.employeesSQL).reading(read)
/// }
/// ```
public struct ReadArguments: RouteInput {
    public let graph: ResourceGraph
    public let resource: Int
    /// What `?api` documents: `select`, `order`, `or`, `and` and the
    /// filters of the resource's columns (``Resource/documentedArguments(taken:value:)``).
    public let declarations: [InputDeclaration]

    /// The arguments of `graph.resources[resource]`; `taken` are the
    /// names of the route's own arguments, which the documents leave to
    /// them. The request's limits are the router's (`RequestLimits`).
    public init(graph: ResourceGraph, resource: Int, taken: Set<String> = []) {
        self.graph = graph
        self.resource = resource
        declarations =
            graph.resources[resource].documentedArguments(taken: taken, value: ()).map(\.declaration)
            + [.otherArguments(description: "Filters, `or`, `and`, `order`, `select` and embedding, in PostgREST's syntax.")]
    }

    public func value(in context: RoutedRequest) throws -> ReadRequest {
        try ReadRequest(graph: graph, resource: resource, arguments: context.otherArguments, limits: ReadLimits(context.limits))
    }
}

extension Query {
    /// This list or object read as `request` asks (see ``ReadRequest``):
    /// its statement (which must be `request`'s resource's, or one with
    /// the same columns, such as the resource's rows narrowed to one key)
    /// narrowed, filtered and ordered, with the resources it embeds.
    ///
    /// ```swift
    /// Query.list(sql).reading(try ReadRequest(graph: graph, resource: 0, arguments: [("select", ["*,titles(*)"])]))
    /// ```
    public func reading(_ request: ReadRequest) -> Query {
        // Kept also when it reads the rows as they are (resolvingChoices()
        // then applies nothing): an event stream follows its resource.
        var query = self
        query.reading = request
        return query
    }
}
