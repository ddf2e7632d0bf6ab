import HTTPServer

/// A service as the router holds it: its routes evaluated once and grouped
/// by resource path, and its documentation rendered once, when first asked for.
struct MountedService: Sendable {
    let path: String
    let segments: [String]
    let resources: [Resource]
    private let pages: Lazy<DocumentationPages>

    var documentation: ServiceDocumentation { pages.value.documentation }

    init(_ service: any WebService, runners: [any Sendable], metrics: RouteMetrics? = nil) {
        segments = service.path.split(separator: "/").map(String.init)
        path = "/" + segments.joined(separator: "/")
        var routes: [BoundRoute] = []
        for route in service.routes {
            let bound = BoundRoute(route, servicePath: service.path, runners: runners, metrics: metrics)
            routes.append(bound)
            if let shortened = bound.withoutOptionalLastVariable { routes.append(shortened) }
        }
        var resources: [Resource] = []
        for route in routes {
            if let index = resources.firstIndex(where: { $0.shape == route.pattern.shape }) {
                resources[index].routes.append(route)
            } else {
                resources.append(Resource(routes: [route]))
            }
        }
        self.resources = resources
        let description = service.description
        pages = Lazy { [path, resources] in
            DocumentationPages(ServiceDocumentation(path: path, description: description, resources: resources))
        }
    }

    /// The resource whose path fits `remainder` best (literals before variables).
    func resource(matching remainder: ArraySlice<String>) -> Resource? {
        var best: Resource?
        for resource in resources where resource.pattern.matches(remainder) {
            if let current = best, !resource.pattern.precedes(current.pattern) { continue }
            best = resource
        }
        return best
    }

    /// `?api` as JSON or as HTML, whose example requests name `host`.
    func documentationResponse(json: Bool, host: String) -> HTTPResponse {
        let pages = pages.value
        return json
            ? HTTPResponse(json: pages.json(host: host))
            : HTTPResponse(status: .ok, headers: ["Content-Type": "text/html; charset=utf-8"], body: .bytes(pages.html(host: host)))
    }
}

/// The routes that share one resource path (up to variable names).
struct Resource: Sendable {
    var routes: [BoundRoute]

    var pattern: RoutePattern { routes[0].pattern }
    var shape: [String?] { pattern.shape }

    /// The `Allow` header value: the verbs declared, HEAD with GET, and OPTIONS.
    var allow: String {
        let declared = Set(routes.map(\.route.method))
        var methods: [HTTPMethod] = []
        for method in [HTTPMethod.get, .head, .post, .put, .patch, .delete] {
            if declared.contains(method) || (method == .head && declared.contains(.get)) { methods.append(method) }
        }
        methods.append(.options)
        return methods.map(\.rawValue).joined(separator: ", ")
    }
}

/// A route with what the router needs to know about it precomputed.
///
/// A class: the router reads a candidate's route, pattern, runner and
/// lists for every request, and a struct this size would be copied
/// (a dozen retains and releases) at each read.
final class BoundRoute: Sendable {
    let route: Route
    let pattern: RoutePattern
    /// Names of the arguments the route accepts outside its path.
    let argumentNames: [String]
    /// The same, as a set (for choosing among overloads).
    let acceptedNames: Set<String>
    /// Whether an input reads the arguments of other names (``InputDeclaration/acceptsOtherArguments``).
    let acceptsOtherArguments: Bool
    /// The names of the arguments its inputs read themselves (not as other arguments).
    let ownNames: Set<String>
    let takesBody: Bool
    /// The runner of the route's ``RunnableResult``, if it returns one.
    let runner: (any Sendable)?
    /// Its parameters that take lists of enumeration values (`details`).
    let detailParameters: [String]
    /// The route's record in the router's metrics, if it keeps them.
    let metrics: RouteMetrics.Slot?

    init(_ route: Route, servicePath: String, runners: [any Sendable], metrics: RouteMetrics? = nil) {
        self.route = route
        self.metrics = metrics?.slot(
            route: OpenAPIDocument.pathTemplate(servicePath + "/" + route.path).template, method: route.method.rawValue)
        if let runnerType = route.runnerType {
            guard let runner = runners.first(where: { type(of: $0) == runnerType }) else {
                // A program's code that gives no runner for its routes' results (a
                // service file's routes return queries, and `sql-rest` gives their runner):
                // it stops at its first start, before any request.
                preconditionFailure(
                    "\(route.method) \(servicePath)\(route.path) returns a result run by \(runnerType), "
                        + "which the router was not given: pass one in WebServiceRouter(services:runners:)")
            }
            self.runner = runner
        } else {
            runner = nil
        }
        pattern = RoutePattern(route.path)
        let variables = pattern.variableNames
        var names: [String] = []
        var details: [String] = []
        var takesBody = false
        for input in route.inputs {
            switch input.kind {
            case .argument(let name, let type, _, _) where !variables.contains(name):
                names.append(name)
                if case .array(.enumeration) = type.valueType { details.append(name) }
            case .runtimeArgument(let argument) where !variables.contains(argument.name):
                names.append(argument.name)
                if case .array(.enumeration) = argument.type { details.append(argument.name) }
            case .body: takesBody = true
            default: break
            }
            if input.readsBody { takesBody = true }
        }
        argumentNames = names
        acceptedNames = Set(names)
        acceptsOtherArguments = route.inputs.contains { $0.acceptsOtherArguments }
        ownNames = Self.namesReadBy(route)
        detailParameters = details
        self.takesBody = takesBody
    }

    /// The same route on its path without the last segment, when that
    /// segment is a named variable whose parameter can be absent (optional
    /// or with a default): `/?:id` with `Parameter<Int?>("id")` also
    /// answers `/`, where the parameter takes its value when absent.
    var withoutOptionalLastVariable: BoundRoute? {
        guard case .named(let name) = pattern.segments.last,
            route.inputs.contains(where: { input in
                guard case .argument(name, let type, let defaultTexts, _) = input.kind else { return false }
                return defaultTexts != nil || type.valueWhenAbsent != nil
            })
        else { return nil }
        // The variable left out is not an argument either: `?id=` on the
        // shorter path is an unknown argument.
        return BoundRoute(
            route, pattern: pattern.droppingLast(), runner: runner, argumentNames: argumentNames,
            detailParameters: detailParameters, takesBody: takesBody, metrics: metrics)
    }

    private init(
        _ route: Route, pattern: RoutePattern, runner: (any Sendable)?, argumentNames: [String], detailParameters: [String],
        takesBody: Bool, metrics: RouteMetrics.Slot?
    ) {
        self.route = route
        self.metrics = metrics
        self.pattern = pattern
        self.runner = runner
        self.argumentNames = argumentNames
        self.detailParameters = detailParameters
        self.acceptedNames = Set(argumentNames)
        self.acceptsOtherArguments = route.inputs.contains { $0.acceptsOtherArguments }
        self.ownNames = Self.namesReadBy(route)
        self.takesBody = takesBody
    }

    /// The argument names a route's inputs read themselves (not as other arguments).
    private static func namesReadBy(_ route: Route) -> Set<String> {
        var names: Set<String> = []
        for input in route.inputs where !input.isReadAsOtherArgument {
            switch input.kind {
            case .argument(let name, _, _, _): names.insert(name)
            case .runtimeArgument(let argument): names.insert(argument.name)
            default: break
            }
        }
        return names
    }
}
