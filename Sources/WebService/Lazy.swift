import Locking

/// A value built by the first caller that asks for it, then kept: the
/// documentation pages (`?api`, `/openapi.json`).
///
/// Building documentation introspects the parameter and result types of
/// every route (runs of `Decodable` and protocol-conformance lookups): at
/// start it would cost every run the work that only the runs serving the
/// pages need.
///
/// ```swift
/// let document = Lazy { OpenAPIDocument(services: services, info: info).json }
/// document.value   // built now, once
/// ```
// `@unchecked Sendable`: `built` is read and written only with `lock` held,
// and `build` is a `@Sendable` closure.
final class Lazy<Value: Sendable>: @unchecked Sendable {
    private let build: @Sendable () -> Value
    private let lock = ConditionLock()
    private var built: Value?

    init(_ build: @escaping @Sendable () -> Value) {
        self.build = build
    }

    /// The value, built by the first caller.
    var value: Value {
        lock.withLock {
            if let built { return built }
            let value = build()
            built = value
            return value
        }
    }
}
