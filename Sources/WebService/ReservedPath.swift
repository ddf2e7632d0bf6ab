/// A path the server answers itself, where no service may be mounted: the
/// list of services, the OpenAPI document, the JSON-RPC endpoint, the health
/// checks and the metrics. ``all`` is the one list: the router refuses a
/// service there (``WebServiceRouter/init(services:runners:logger:openAPI:metrics:limits:serverServices:)``
/// throws a ``MountError``), and `sql-rest check`, `serve` and their reloads
/// report a file that claims one as a problem at its line.
///
/// ```swift
/// ReservedPath.claimed(by: "/jsonrpc")?.purpose       // "the JSON-RPC endpoint"
/// ReservedPath.claimed(by: "/health/extra")?.path     // "/health"
/// ReservedPath.claimed(by: "/employees")              // nil
/// ```
public struct ReservedPath: Sendable, Hashable, CustomStringConvertible {
    /// The path: `/health`.
    public let path: String
    /// What the server answers there: `the server's health checks`.
    public let purpose: String
    /// Whether the paths below it are reserved too (`/health/live`); `/`
    /// reserves itself only, since every path is below it.
    public let coversBelow: Bool

    init(_ path: String, _ purpose: String, coversBelow: Bool = true) {
        self.path = path
        self.purpose = purpose
        self.coversBelow = coversBelow
    }

    /// Every reserved path.
    public static let all: [ReservedPath] = [
        ReservedPath("/", "the list of services", coversBelow: false),
        ReservedPath("/openapi.json", "the OpenAPI document"),
        ReservedPath("/jsonrpc", "the JSON-RPC endpoint"),
        ReservedPath("/health", "the server's health checks"),
        ReservedPath("/metrics", "the server's metrics"),
    ]

    /// The reserved path that a service or an operation at `path` would
    /// take: `path` is it, or lies below one that covers what is below it.
    /// Empty segments do not count (`//jsonrpc/` is `/jsonrpc`).
    ///
    /// ```swift
    /// ReservedPath.claimed(by: "/metrics")?.path   // "/metrics"
    /// ```
    public static func claimed(by path: String) -> ReservedPath? {
        claimed(bySegments: path.split(separator: "/").map(String.init))
    }

    static func claimed(bySegments segments: [String]) -> ReservedPath? {
        all.first { reserved in
            let own = reserved.segments
            return segments == own || (reserved.coversBelow && segments.starts(with: own))
        }
    }

    var segments: [String] { path.split(separator: "/").map(String.init) }

    /// `/jsonrpc, the JSON-RPC endpoint`.
    public var description: String { "\(path), \(purpose)" }
}

/// Why the router cannot mount its services: one at a reserved path
/// (``ReservedPath``), or two at one path. A program reports it when it
/// starts, and a reload that meets it keeps the services that serve.
///
/// ```swift
/// do { _ = try WebServiceRouter(services: services) }
/// catch let error as MountError { print(error) }   // A service cannot be mounted at /jsonrpc, the JSON-RPC endpoint.
/// ```
public struct MountError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The path of the service that could not be mounted.
    public let path: String
    /// The reserved path it claims; `nil` when another service holds its path.
    public let reserved: ReservedPath?

    public var description: String {
        guard let reserved else { return "Two services are mounted at \(path)." }
        return reserved.path == path
            ? "A service cannot be mounted at \(reserved)."
            : "A service cannot be mounted at \(path), below \(reserved)."
    }
}
