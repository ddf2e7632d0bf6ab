// swift-tools-version:6.2
// The lab's tools, apart from the product: a package of their own that
// depends on swift-sql-rest by path and uses only its library products,
// as any user's package would. `make bench` builds it (release).
import PackageDescription

let package = Package(
    name: "Benchmarks",
    products: [
        .executable(name: "sql-benchmark", targets: ["sql-benchmark"])
    ],
    dependencies: [
        .package(name: "swift-sql-rest", path: "..")
    ],
    targets: [
        // Nested JSON through ResultSetAdapter.attach against one
        // hand-written json_agg + LATERAL query run by psql.
        .executableTarget(
            name: "sql-benchmark",
            dependencies: [
                .product(name: "PostgreSQL", package: "swift-sql-rest"),
                .product(name: "PostgreSQLWebService", package: "swift-sql-rest"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
