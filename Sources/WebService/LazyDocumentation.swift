import Locking

/// A service's `?api` documentation, built and rendered when first asked for.
///
/// Building it introspects the parameter and result types of every route
/// (runs of `Decodable` and protocol-conformance lookups), the larger part
/// of a server's start-up work, for pages most runs never serve: so it is
/// not done at start.
// `@unchecked Sendable`: `built` is read and written only with `lock` held,
// and `build` is a `@Sendable` closure.
final class LazyDocumentation: @unchecked Sendable {
    struct Pages: Sendable {
        let documentation: ServiceDocumentation
        let html: [UInt8]
        let json: [UInt8]
    }

    private let build: @Sendable () -> ServiceDocumentation
    private let lock = ConditionLock()
    private var built: Pages?

    init(_ build: @escaping @Sendable () -> ServiceDocumentation) {
        self.build = build
    }

    /// The documentation and its two renderings, built by the first caller.
    var pages: Pages {
        lock.withLock {
            if let built { return built }
            let documentation = build()
            let pages = Pages(documentation: documentation, html: Array(documentation.html.utf8), json: documentation.json)
            built = pages
            return pages
        }
    }
}
