// swift-tools-version:6.2
// 6.2: the code uses SendableMetatype.
import PackageDescription

let package = Package(
    name: "swift-sql-rest",
    // Linux only (no `platforms:` claim): the code imports Glibc, and the C
    // libraries come from Debian's libpq-dev and libmicrohttpd-dev.
    products: [
        // What a service imports: WebService, PostgreSQL, PostgreSQLWebService and ServiceHost in one module.
        .library(name: "SQLRest", targets: ["SQLRest"]),
        .library(name: "HTTPServer", targets: ["HTTPServer"]),
        .library(name: "WebService", targets: ["WebService"]),
        .library(name: "PostgreSQL", targets: ["PostgreSQL"]),
        .library(name: "PostgreSQLWebService", targets: ["PostgreSQLWebService"]),
        .library(name: "ServiceHost", targets: ["ServiceHost"]),
        .library(name: "WebServiceClient", targets: ["WebServiceClient"]),
        .library(name: "SQLServices", targets: ["SQLServices"]),
        .library(name: "Authentication", targets: ["Authentication"]),
        .executable(name: "employees-server", targets: ["employees-server"]),
        .executable(name: "employees-client", targets: ["employees-client"]),
        .executable(name: "sql-rest", targets: ["sql-rest"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // The tracing API (spans, their context) and the metrics API (`Counter(label:)`), both without Foundation.
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // `swift package generate-documentation` (make docs, make test); no target links it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // MARK: - C bindings
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // Linux's epoll and eventfd, for the event loops.
        .systemLibrary(name: "CEpoll"),
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // libmicrohttpd's TLS library: certificates loaded and replaced while serving.
        .systemLibrary(
            name: "CGnuTLS",
            pkgConfig: "gnutls",
            providers: [.apt(["libgnutls28-dev"])]
        ),
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // The patches of libmicrohttpd's behaviour (error pages, pool
        // release), each gated by HTTPServer's LibraryPatches.
        .target(name: "CMicroHTTPDPatches", dependencies: ["CMicroHTTPD"]),

        // MARK: - Layers
        .target(name: "JSONStreaming"),
        .target(name: "Locking"),
        .target(name: "EventLoops", dependencies: ["CEpoll", "Locking"]),
        .target(name: "PrometheusMetrics", dependencies: ["Locking", .product(name: "CoreMetrics", package: "swift-metrics")]),
        // What a request's work needs to start spans of its own (the tracer and the parent's context).
        .target(name: "RequestTracing", dependencies: [.product(name: "Tracing", package: "swift-distributed-tracing")]),
        // A tracer that exports spans by OTLP/HTTP (protobuf), W3C Trace Context, sampling.
        .target(name: "OTLPTracing", dependencies: ["Locking", "RequestTracing", .product(name: "Logging", package: "swift-log")]),
        // Days (CalendarDate), ISO 8601 and the calendar arithmetic, shared by WebService and PostgreSQL.
        .target(name: "CalendarDates"),
        // The release that `--version` prints (Sources/SQLRestVersion), for servers and clients alike.
        .target(name: "SQLRestVersion"),
        .target(
            name: "HTTPServer",
            dependencies: [
                "CGnuTLS",
                "CMicroHTTPD",
                "CZlib",
                "CMicroHTTPDPatches",
                "EventLoops",
                "JSONStreaming",
                "Locking",
                "RequestTracing",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "WebService",
            dependencies: [
                "CalendarDates",
                "HTTPServer",
                "PrometheusMetrics",
                "JSONStreaming",
                "Locking",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "PostgreSQL",
            dependencies: ["CalendarDates", "CLibPQ", "EventLoops", "PrometheusMetrics", "Locking", "RequestTracing"]
        ),
        .target(
            name: "PostgreSQLWebService",
            dependencies: [
                "EventLoops", "HTTPServer", "Locking", "PrometheusMetrics", "JSONStreaming", "PostgreSQL", "RequestTracing",
                "WebService", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "EmployeesService",
            dependencies: ["WebService", "PostgreSQL", "PostgreSQLWebService", .product(name: "CoreMetrics", package: "swift-metrics")]
        ),
        // HTTP basic and bearer-token authentication, and the role each request acts as.
        .target(
            name: "Authentication",
            dependencies: ["CLibCrypto", "HTTPServer", "Locking", "WebService", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "ServiceHost",
            dependencies: [
                "Authentication",
                "HTTPServer",
                "PrometheusMetrics",
                "JSONStreaming",
                "WebService",
                "PostgreSQL",
                "PostgreSQLWebService",
                "Locking",
                "OTLPTracing",
                "RequestTracing",
                "SQLRestVersion",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "SQLRest", dependencies: ["PostgreSQL", "PostgreSQLWebService", "ServiceHost", "WebService"]),
        // The client: Foundation's URLSession only, so that an app on any
        // platform can use it without the server's C libraries.
        .target(name: "WebServiceClient"),
        .executableTarget(
            name: "employees-client",
            dependencies: ["SQLRestVersion", "WebServiceClient", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        .target(
            name: "SQLServices",
            dependencies: ["CalendarDates", "HTTPServer", "WebService", "PostgreSQL", "PostgreSQLWebService"]
        ),
        .executableTarget(
            name: "sql-rest",
            dependencies: [
                "SQLRest", "SQLServices", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .executableTarget(name: "employees-server", dependencies: ["EmployeesService", "ServiceHost"]),

        // MARK: - Tests
        .testTarget(name: "JSONStreamingTests", dependencies: ["JSONStreaming"]),
        .testTarget(name: "LockingTests", dependencies: ["Locking"]),
        .testTarget(name: "EventLoopsTests", dependencies: ["EventLoops", "Locking"]),
        .testTarget(
            name: "PrometheusMetricsTests", dependencies: ["PrometheusMetrics", .product(name: "CoreMetrics", package: "swift-metrics")]),
        .testTarget(name: "OTLPTracingTests", dependencies: ["OTLPTracing", "RequestTracing"]),
        .testTarget(name: "CalendarDatesTests", dependencies: ["CalendarDates"]),
        .target(name: "HTTPTestClient", dependencies: ["HTTPServer", "Locking"], path: "Tests/HTTPTestClient"),
        .testTarget(
            name: "HTTPServerTests",
            dependencies: [
                "EventLoops", "HTTPServer", "HTTPTestClient", "JSONStreaming", "Locking",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "WebServiceTests",
            dependencies: ["WebService", "HTTPServer", "HTTPTestClient", "Locking", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "PostgreSQLTests", dependencies: ["PostgreSQL", "PostgreSQLWebService", "HTTPTestClient", "Locking", "EventLoops"]),
        .testTarget(name: "PostgreSQLWebServiceTests", dependencies: ["HTTPServer", "PostgreSQL", "PostgreSQLWebService", "WebService"]),
        .testTarget(
            name: "EmployeesServiceTests",
            dependencies: [
                "EmployeesService", "HTTPTestClient", "Locking", "PostgreSQL", "PostgreSQLWebService", "ServiceHost", "WebService",
            ]
        ),
        .testTarget(name: "ServiceHostTests", dependencies: ["ServiceHost"]),
        .testTarget(name: "AuthenticationTests", dependencies: ["Authentication", "Locking", "WebService", "HTTPTestClient"]),
        .testTarget(
            name: "WebServiceClientTests",
            dependencies: [
                "WebServiceClient", "EmployeesService", "ServiceHost", "WebService", "HTTPServer", "PostgreSQL",
                "PostgreSQLWebService", "HTTPTestClient",
            ]
        ),
        .testTarget(
            name: "SQLServicesTests",
            dependencies: [
                "SQLServices", "EmployeesService", "HTTPServer", "PostgreSQL", "PostgreSQLWebService", "HTTPTestClient", "Locking",
                "WebService", "WebServiceClient",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Fault tests: a private second cluster and the employees-server executable
        // (`swift test --filter ReliabilityTests` runs them alone).
        .testTarget(name: "ReliabilityTests", dependencies: ["PostgreSQL", "HTTPTestClient", "Locking"]),
        .testTarget(
            name: "LiveTests",
            dependencies: [
                "Authentication", "HTTPServer", "HTTPTestClient", "Locking", "PostgreSQL", "PostgreSQLWebService", "SQLServices",
                "WebService", "WebServiceClient", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "HostileInputTests",
            dependencies: [
                "EmployeesService", "PostgreSQL", "PostgreSQLWebService", "HTTPTestClient", "ServiceHost", "WebService",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
