import HTTPServer
import JSONStreaming

// MARK: - Async handlers

extension Route {
    /// A route whose `async` handler returns an `Encodable` value, sent as
    /// JSON. The handler runs as a task on the server's worker threads,
    /// never on an event loop.
    ///
    /// ```swift
    /// Route(.get, "/forecast", Parameter<String>("city")) { city in try await weather.forecast(for: city) }
    /// ```
    @inlinable
    public init<each Input: RouteInput, Result: Encodable & SendableMetatype>(
        _ method: HTTPMethod, _ path: String, description: String = "", returns: Any.Type? = nil,
        _ inputs: repeat each Input,
        handler: @escaping @Sendable (repeat (each Input).Value) async throws -> Result
    ) {
        self.init(
            method, path, description: description, inputs: Self.declarations(repeat each inputs),
            result: .value(returns ?? Result.self), execution: .task
        ) { context in
            HTTPResponse.async {
                do {
                    let result = try await handler(repeat (each inputs).value(in: context))
                    return context.validated(HTTPResponse(json: try OrderedJSONEncoder.encode(result)))
                } catch {
                    return context.response(for: error)
                }
            }
        }
    }

    /// A route whose `async` handler returns nothing: `204 No Content`.
    @inlinable
    public init<each Input: RouteInput>(
        _ method: HTTPMethod, _ path: String, description: String = "",
        _ inputs: repeat each Input,
        handler: @escaping @Sendable (repeat (each Input).Value) async throws -> Void
    ) {
        self.init(
            method, path, description: description, inputs: Self.declarations(repeat each inputs),
            result: .none, execution: .task
        ) { context in
            HTTPResponse.async {
                do {
                    try await handler(repeat (each inputs).value(in: context))
                    return HTTPResponse(status: .noContent)
                } catch {
                    return context.response(for: error)
                }
            }
        }
    }

    /// A route whose `async` handler builds the whole response itself.
    @inlinable
    public init<each Input: RouteInput>(
        _ method: HTTPMethod, _ path: String, description: String = "", returns: Any.Type? = nil,
        _ inputs: repeat each Input,
        handler: @escaping @Sendable (repeat (each Input).Value) async throws -> HTTPResponse
    ) {
        self.init(
            method, path, description: description, inputs: Self.declarations(repeat each inputs),
            result: .response(returns), execution: .task
        ) { context in
            HTTPResponse.async {
                do {
                    return context.validated(try await handler(repeat (each inputs).value(in: context)))
                } catch {
                    return context.response(for: error)
                }
            }
        }
    }
}
