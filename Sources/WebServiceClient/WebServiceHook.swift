import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One step of the chain every call goes through, in the manner of
/// ROADWebService's request processors and error handlers: it receives the
/// request, may change it (sign it, add a header field from the app's
/// state, log it), hands it on with `next`, and may look at, replace or
/// throw on the answer (validate it, map a status, raise an error of the
/// app's own). `next` may be called again (``retry(_:)`` does), or not at
/// all (an answer made up by the hook).
///
/// ```swift
/// let stamp = WebServiceHook.request { request in
///     request.setValue(await session.deviceID, forHTTPHeaderField: "X-Device")
/// }
/// let notFoundIsNil = WebServiceHook.response { request, response in
///     response.status == 404 ? WebServiceResponse(status: 200, headers: [:], data: Data("null".utf8)) : response
/// }
/// let client = WebServiceClient(baseURL: url, configuration: .init(hooks: [.logging(), .retry(), stamp]))
/// var call = WebServiceRequest(.get, "/employees/{n}", arguments: ["n": 1])
/// call.hooks = [notFoundIsNil]
/// ```
///
/// **Order.** The client's credentials (``CredentialProvider``) come
/// first, so every hook sees the request as it will be sent, credentials
/// included, and a 401 that reaches them went through every hook; then the
/// client's hooks in their order, then the call's own; then the cache (when
/// the client has one), then the network. Each hook wraps the ones after it:
/// the first sees the request first and the answer last.
///
/// **Answers of any status** travel the chain as values: a 404 or a 503
/// reaches each hook as a ``WebServiceResponse``. Once the chain is done,
/// a status outside the success statuses
/// (``WebServiceClient/Configuration/successStatuses``) throws
/// ``WebServiceError``. A hook throwing ends the call with its error, as it
/// is (a type of the app's own stays that type).
///
/// **Streams** (``WebServiceClient/stream(_:arguments:headers:of:)``) go
/// through the same chain; their hooks receive the head of a successful
/// answer with an empty body, since the body is read as the elements are,
/// and the whole body of an error. Answers from the cache reach the hooks
/// too (``WebServiceResponse/isFromCache``).
public struct WebServiceHook: Sendable {
    /// The rest of the chain: sends a request on and returns its answer.
    public typealias Next = @Sendable (URLRequest) async throws -> WebServiceResponse

    let body: @Sendable (URLRequest, @escaping Next) async throws -> WebServiceResponse

    /// A hook of its own: `body` receives the request and the rest of the
    /// chain, and returns the answer.
    ///
    /// ```swift
    /// let timing = WebServiceHook { request, next in
    ///     let start = Date()
    ///     defer { print(request.url!.path, Date().timeIntervalSince(start)) }
    ///     return try await next(request)
    /// }
    /// ```
    public init(_ body: @escaping @Sendable (_ request: URLRequest, _ next: @escaping Next) async throws -> WebServiceResponse) {
        self.body = body
    }

    /// A hook that changes each request before it goes on (or throws to stop it).
    ///
    /// ```swift
    /// let signed = WebServiceHook.request { request in
    ///     request.setValue(try await signer.signature(of: request), forHTTPHeaderField: "X-Signature")
    /// }
    /// ```
    public static func request(_ change: @escaping @Sendable (_ request: inout URLRequest) async throws -> Void) -> WebServiceHook {
        WebServiceHook { request, next in
            var request = request
            try await change(&request)
            return try await next(request)
        }
    }

    /// A hook that sees each answer, of any status, with the request that
    /// got it; it returns the answer to go on with (the same, or another),
    /// or throws.
    ///
    /// ```swift
    /// struct Maintenance: Error {}
    /// let maintenance = WebServiceHook.response { _, response in
    ///     if response.status == 503, response.header("X-Maintenance") != nil { throw Maintenance() }
    ///     return response
    /// }
    /// ```
    public static func response(
        _ inspect: @escaping @Sendable (_ request: URLRequest, _ response: WebServiceResponse) async throws -> WebServiceResponse
    ) -> WebServiceHook {
        WebServiceHook { request, next in
            try await inspect(request, try await next(request))
        }
    }

    /// Runs `request` through `hooks` in order, then `last`.
    static func run(_ hooks: ArraySlice<WebServiceHook>, _ request: URLRequest, last: @escaping Next) async throws -> WebServiceResponse {
        guard let first = hooks.first else { return try await last(request) }
        let rest = hooks.dropFirst()
        return try await first.body(request) { try await run(rest, $0, last: last) }
    }
}

// MARK: - Credentials

extension WebServiceHook {
    /// The step that puts `provider`'s credential in each request's
    /// `Authorization` field and, after a 401, asks it to renew the
    /// credential and sends the request once more with the new one.
    ///
    /// Sending again is safe whatever the method: a 401 means the server
    /// refused the request before running it.
    static func credentials(_ provider: any CredentialProvider) -> WebServiceHook {
        WebServiceHook { request, next in
            var request = request
            let sent = try await provider.authorization(for: request)
            request.setValue(sent, forHTTPHeaderField: "Authorization")
            let response = try await next(request)
            guard response.status == 401, try await provider.renew(rejecting: sent) else { return response }
            request.setValue(try await provider.authorization(for: request), forHTTPHeaderField: "Authorization")
            return try await next(request)
        }
    }
}
