// swift-tools-version:6.0
// A service in its own package, depending on swift-sql-rest as any user's
// package would (here by path; elsewhere by its git URL).
import PackageDescription

let package = Package(
    name: "Products",
    dependencies: [
        .package(name: "swift-sql-rest", path: "../..")
    ],
    targets: [
        .executableTarget(
            name: "products-server",
            dependencies: [
                .product(name: "SQLRest", package: "swift-sql-rest")
            ]
        )
    ]
)
