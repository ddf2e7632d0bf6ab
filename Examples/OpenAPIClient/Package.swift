// swift-tools-version:6.0
import PackageDescription

// A client of the employees service generated from its OpenAPI document by
// swift-openapi-generator's build plugin (`make openapi-client-check`
// fetches the document from a live server into
// Sources/openapi-client-check/openapi.json first), calling the server with
// the URLSession transport.
let package = Package(
    name: "OpenAPIClient",
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-generator", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
    ],
    targets: [
        .executableTarget(
            name: "openapi-client-check",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
            ],
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        )
    ],
    swiftLanguageModes: [.v6]
)
