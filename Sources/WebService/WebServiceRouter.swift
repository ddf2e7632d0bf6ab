import FoundationEssentials
import HTTPServer
import Logging

/// Dispatches requests to the routes of the mounted ``WebService``s and
/// serves their documentation: `GET /` lists the services,
/// `GET /<service>?api` describes one (HTML, or JSON on
/// `Accept: application/json`) and `GET /openapi.json` describes them all
/// in one OpenAPI 3.1.0 document (``OpenAPIInfo`` gives its title and
/// version), and `POST /jsonrpc` calls every operation by JSON-RPC 2.0
/// (`WebServiceRouter+JSONRPC.swift`). Each page is built when first
/// asked for, then kept.
///
/// `respond(to:)` never throws and never blocks: every error becomes a
/// problem-details response, and a handler that may block runs later, off
/// the calling event loop (see ``Route``).
///
/// ```swift
/// let router = try WebServiceRouter(services: [ProductsService()], runners: [QueryRunner(pool: pool)])
/// let server = HTTPServer(configuration: .init(port: 8080)) { router.respond(to: $0) }
/// ```
public final class WebServiceRouter: Sendable {
    let services: [MountedService]
    let logger: Logger
    /// What one request may ask for: argument values, filters, list items, JSON-RPC calls and bytes.
    public let limits: RequestLimits
    private let openAPIDocument: Lazy<[UInt8]>
    /// The operations as JSON-RPC methods, and their OpenRPC document.
    let jsonRPCMethods: Lazy<JSONRPCMethods>

    /// The path of the OpenAPI document.
    static let openAPIPath = ["openapi.json"]
    /// Where the router counts requests; `nil`: it does not.
    private let metrics: RouteMetrics?
    /// The records of what the router answers itself.
    private let unmatchedMetrics, indexMetrics, openAPIMetrics, jsonRPCMetrics: RouteMetrics.Slot?

    /// Mounts `services`, each at its own path, and `serverServices`, the
    /// server's own at the paths reserved for them (its health checks and
    /// metrics: ``ReservedPath``). `runners` run what the routes return as
    /// ``RunnableResult``s (a `QueryRunner` for query values, say); a route
    /// whose result has no runner here stops the program at once, not at
    /// its first request. `openAPI` titles the OpenAPI document. With
    /// `metrics`, each request is counted there under its route
    /// (``RouteMetrics``). `limits` bound what one request may ask for.
    ///
    /// - Throws: ``MountError`` when one of `services` is at a reserved
    ///   path or below one, or two services share a path.
    public init(
        services: [any WebService], runners: [any Sendable] = [], logger: Logger = Logger(label: "web"),
        openAPI: OpenAPIInfo = OpenAPIInfo(), metrics: RouteMetrics? = nil, limits: RequestLimits = RequestLimits(),
        serverServices: [any WebService] = []
    ) throws(MountError) {
        var seen: Set<[String]> = []
        for (index, service) in (services + serverServices).enumerated() {
            let segments = service.path.split(separator: "/").map(String.init)
            let path = "/" + segments.joined(separator: "/")
            if index < services.count, let reserved = ReservedPath.claimed(bySegments: segments) {
                throw MountError(path: path, reserved: reserved)
            }
            guard seen.insert(segments).inserted else { throw MountError(path: path, reserved: nil) }
        }
        let mounted = (services + serverServices).map { MountedService($0, runners: runners, metrics: metrics) }
        self.services = mounted
        self.logger = logger
        self.metrics = metrics
        self.limits = limits
        unmatchedMetrics = metrics?.slot(route: "unmatched", method: "*")
        indexMetrics = metrics?.slot(route: "/", method: "GET")
        openAPIMetrics = metrics?.slot(route: "/openapi.json", method: "GET")
        jsonRPCMetrics = metrics?.slot(route: "/jsonrpc", method: "POST")
        openAPIDocument = Lazy { OpenAPIDocument(services: mounted.map(\.documentation), info: openAPI).json }
        jsonRPCMethods = Lazy { JSONRPCMethods(services: mounted.map(\.documentation), info: openAPI) }
    }

    /// The limits the server applies to the bodies of requests to the
    /// router's own paths, below its general one, before it reads them:
    /// `/jsonrpc` takes at most ``RequestLimits/jsonRPCBytes``. For
    /// `HTTPServer.Configuration.maximumBodySizeByPath`.
    ///
    /// ```swift
    /// configuration.maximumBodySizeByPath = router.maximumBodySizeByPath
    /// ```
    public var maximumBodySizeByPath: [String: Int] {
        ["/" + Self.jsonRPCPath.joined(separator: "/"): limits.jsonRPCBytes]
    }

    /// The documentation of every mounted service, as `?api` shows it.
    public var documentation: [ServiceDocumentation] {
        services.map(\.documentation)
    }

    /// Answers one request without blocking the calling thread (an event
    /// loop): routing, arguments, documentation and the handlers of
    /// ``RunnableResult``s run here; a synchronous handler that may block
    /// runs in an `HTTPResponse.blocking` response, which the server runs
    /// on a worker; an `async` handler in an `HTTPResponse.async` one.
    ///
    /// The request is consumed: it moves into the route's context rather
    /// than being copied there (a retain and a release of each of its
    /// buffers per request).
    public func respond(to request: consuming HTTPRequest) -> HTTPResponse {
        let method = request.method
        let rawPath = request.rawPath
        // Which record counts the request: set by `dispatch` as soon as it
        // knows the route (or the page), so that an error found afterwards
        // (a bad argument) counts under the route too.
        var slot = unmatchedMetrics
        var response: HTTPResponse
        do {
            switch try dispatch(request, slot: &slot) {
            case .response(let answer):
                response = answer
            case .route(let route, let context):
                if route.execution == .worker {
                    response = HTTPResponse.blocking { self.run(route, context, method: method, rawPath: rawPath) }
                } else {
                    response = run(route, context, method: method, rawPath: rawPath)
                }
            }
        } catch {
            response = self.response(for: error, method: method, rawPath: rawPath)
        }
        if let slot { response.observer = slot }
        return response
    }

    private func run(_ route: Route, _ context: RoutedRequest, method: HTTPMethod, rawPath: String) -> HTTPResponse {
        do {
            // A HEAD's streamed body goes to the server too, which sends
            // the GET's headers without it.
            return try route.handler(context).validated(
                for: method, headers: context.request.headers, cacheControl: route.cacheControl)
        } catch {
            return response(for: error, method: method, rawPath: rawPath)
        }
    }

    private func response(for error: any Error, method: HTTPMethod, rawPath: String) -> HTTPResponse {
        HTTPError.response(for: error, method: method, path: rawPath, logger: logger)
    }

    // MARK: - Dispatch

    private enum Dispatch {
        /// Answered without a handler (documentation, OPTIONS).
        case response(HTTPResponse)
        case route(Route, RoutedRequest)
    }

    private func dispatch(_ request: consuming HTTPRequest, slot: inout RouteMetrics.Slot?) throws -> Dispatch {
        let segments = request.pathSegments
        if segments.isEmpty {
            slot = indexMetrics
            return .response(try respondWithIndex(to: request))
        }
        if segments == Self.openAPIPath {
            slot = openAPIMetrics
            return .response(try respondWithOpenAPIDocument(to: request))
        }
        if segments == Self.jsonRPCPath {
            slot = jsonRPCMetrics
            return .response(try respondWithJSONRPC(to: request))
        }
        // The service mounted at the longest prefix of the path.
        var longest: Int?
        for index in services.indices where segments.starts(with: services[index].segments) {
            if longest.map({ services[index].segments.count > services[$0].segments.count }) ?? true {
                longest = index
            }
        }
        guard let longest else {
            throw notFound(request)
        }
        let service = services[longest]
        let remainder = segments.dropFirst(service.segments.count)
        if remainder.isEmpty, request.rawQuery == "api", request.method == .get || request.method == .head {
            slot = metrics?.slot(route: service.path + "?api", method: "GET")
            return .response(service.documentationResponse(json: Self.acceptsJSON(request), host: DocumentationPages.host(of: request)))
        }
        guard let resource = service.resource(matching: remainder) else {
            throw notFound(request)
        }
        let method = request.method == .head ? .get : request.method
        if request.method == .options {
            return .response(HTTPResponse(status: .noContent, headers: ["Allow": resource.allow]))
        }
        // Most resources declare one verb: their routes are the candidates
        // as they are, without the array `filter` allocates per request.
        let candidates =
            resource.routes.allSatisfy { $0.route.method == method }
            ? resource.routes : resource.routes.filter { $0.route.method == method }
        if let first = candidates.first { slot = first.metrics }
        guard !candidates.isEmpty else {
            throw HTTPError(
                .methodNotAllowed,
                detail: "\(request.method) is not allowed on \(request.rawPath); use \(resource.allow).",
                headers: ["Allow": resource.allow]
            )
        }
        let arguments = try Self.arguments(of: request, bodyIsArguments: !candidates.contains { $0.takesBody }, limit: limits.arguments)
        let chosen = try Self.choose(among: candidates, for: arguments, request: request)
        slot = candidates[chosen].metrics
        let context = RoutedRequest(
            request: consume request, pattern: candidates[chosen].pattern, path: remainder, arguments: arguments.values,
            runner: candidates[chosen].runner, detailParameters: candidates[chosen].detailParameters,
            cacheControl: candidates[chosen].route.cacheControl, logger: logger,
            declaredNames: candidates[chosen].acceptsOtherArguments ? candidates[chosen].ownNames : [], limits: limits
        )
        return .route(candidates[chosen].route, context)
    }

    private func notFound(_ request: HTTPRequest) -> HTTPError {
        HTTPError(.notFound, detail: "There is no resource at \(request.rawPath).")
    }

    private func respondWithIndex(to request: HTTPRequest) throws -> HTTPResponse {
        switch request.method {
        case .get, .head:
            return Self.acceptsJSON(request)
                ? HTTPResponse(json: ServiceDocumentation.indexJSON(services.map(\.documentation)))
                : HTTPResponse.html(ServiceDocumentation.indexHTML(services.map(\.documentation)))
        case .options:
            return HTTPResponse(status: .noContent, headers: ["Allow": "GET, HEAD, OPTIONS"])
        default:
            throw HTTPError(
                .methodNotAllowed,
                detail: "\(request.method) is not allowed on /; use GET, HEAD, OPTIONS.",
                headers: ["Allow": "GET, HEAD, OPTIONS"]
            )
        }
    }

    private func respondWithOpenAPIDocument(to request: HTTPRequest) throws -> HTTPResponse {
        switch request.method {
        case .get, .head:
            return HTTPResponse(json: openAPIDocument.value)
        case .options:
            return HTTPResponse(status: .noContent, headers: ["Allow": "GET, HEAD, OPTIONS"])
        default:
            throw HTTPError(
                .methodNotAllowed,
                detail: "\(request.method) is not allowed on /openapi.json; use GET, HEAD, OPTIONS.",
                headers: ["Allow": "GET, HEAD, OPTIONS"]
            )
        }
    }

    static func acceptsJSON(_ request: HTTPRequest) -> Bool {
        request.headers.values(for: "Accept").contains { $0.lowercased().contains("application/json") }
    }
}

extension HTTPError {
    /// The problem response for an error a handler threw: its own status
    /// when it has one (``HTTPErrorConvertible``), else 500 with an
    /// `errorId` that the log line (with the error) repeats.
    ///
    /// ```swift
    /// promise.succeed(HTTPError.response(for: error, method: .get, path: "/employees/1", logger: logger))
    /// ```
    public static func response(for error: any Error, method: HTTPMethod, path: String, logger: Logger) -> HTTPResponse {
        if let convertible = error as? any HTTPErrorConvertible, let httpError = convertible.httpError {
            return httpError.response
        }
        let errorID = UUID().uuidString.lowercased()
        logger.error(
            "Request failed",
            metadata: [
                "errorId": "\(errorID)",
                "method": "\(LogText.escaping(method.rawValue))",
                "path": "\(LogText.escaping(path))",
                "error": "\(String(reflecting: error))",
            ])
        return HTTPError(
            .internalServerError,
            detail: "The server could not complete the request.",
            extensions: [("errorId", .string(errorID))]
        ).response
    }
}

extension HTTPResponse {
    /// An HTML page (UTF-8).
    static func html(_ page: String) -> HTTPResponse {
        HTTPResponse(status: .ok, headers: ["Content-Type": "text/html; charset=utf-8"], body: .bytes(Array(page.utf8)))
    }
}
