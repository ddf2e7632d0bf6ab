import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a client's credentials come from: asked before each request for
/// the `Authorization` header's value, and told when the server refused
/// one with 401, so that it can renew it; the request is then sent once
/// more with the renewed credential (never more than once per call).
///
/// ```swift
/// WebServiceClient(baseURL: url, configuration: .init(credentials: .basic(username: "ann", password: "secret")))
/// WebServiceClient(baseURL: url, configuration: .init(credentials: .bearer(token)))
/// WebServiceClient(baseURL: url, configuration: .init(credentials: .refreshingBearer { try await login() }))
/// ```
///
/// The value is set in the request before the hooks and the cache see it:
/// the cache keys its entries by the credential actually sent
/// (``ResponseCache``), and a renewed token reads and stores answers under
/// its own key. Redirects to another origin drop it (`CredentialFields`).
public protocol CredentialProvider: Sendable {
    /// The `Authorization` header's value for `request`; `nil` for none.
    func authorization(for request: URLRequest) async throws -> String?

    /// The server answered 401 to a request sent with `rejected`: whether
    /// a new credential is now there to send it with once more. A provider
    /// that cannot renew returns `false` (the default), and the 401 stands.
    func renew(rejecting rejected: String?) async throws -> Bool
}

extension CredentialProvider {
    public func renew(rejecting rejected: String?) async throws -> Bool { false }
}

/// Credentials that do not change: the same `Authorization` value with
/// every call, without a round trip for a challenge; a 401 stands.
///
/// ```swift
/// WebServiceClient(baseURL: url, configuration: .init(credentials: .bearer(token)))
/// ```
public struct Authorization: CredentialProvider, Hashable {
    /// The `Authorization` header's value.
    public var headerValue: String

    public init(headerValue: String) {
        self.headerValue = headerValue
    }

    public func authorization(for request: URLRequest) async throws -> String? { headerValue }
}

extension CredentialProvider where Self == Authorization {
    /// HTTP basic authentication (use it over HTTPS only: the password is merely encoded).
    ///
    /// ```swift
    /// let configuration = WebServiceClient.Configuration(credentials: .basic(username: "ann", password: "secret"))
    /// ```
    public static func basic(username: String, password: String) -> Authorization {
        Authorization(headerValue: "Basic " + Data("\(username):\(password)".utf8).base64EncodedString())
    }

    /// A bearer token that does not change (OAuth 2.0, RFC 6750).
    ///
    /// ```swift
    /// let configuration = WebServiceClient.Configuration(credentials: .bearer("eyJhbGciOi…"))
    /// ```
    public static func bearer(_ token: String) -> Authorization {
        Authorization(headerValue: "Bearer " + token)
    }
}

/// A bearer token fetched by the app's closure (a login, an OAuth refresh
/// grant), kept, and fetched again when the server refuses it with 401.
///
/// Calls that find the token refused at the same time share one fetch:
/// the closure runs once, and each of them is sent again with its result.
/// A call refused with a token older than the one now kept is sent again
/// with the kept one, without a fetch. A fetch that throws ends the calls
/// that waited for it with its error; the next call fetches again.
///
/// ```swift
/// let credentials = RefreshingBearerCredentials { try await authServer.newAccessToken() }
/// let client = WebServiceClient(baseURL: url, configuration: .init(credentials: credentials))
/// ```
public actor RefreshingBearerCredentials: CredentialProvider {
    private let fetch: @Sendable () async throws -> String
    private var token: String?
    private var fetching: Task<String, any Error>?

    /// Credentials that start with `token` (when the app has one already)
    /// and call `fetch` for each new one.
    public init(token: String? = nil, fetch: @escaping @Sendable () async throws -> String) {
        self.token = token
        self.fetch = fetch
    }

    public func authorization(for request: URLRequest) async throws -> String? {
        if let token { return "Bearer " + token }
        return "Bearer " + (try await refreshed())
    }

    public func renew(rejecting rejected: String?) async throws -> Bool {
        if let token, "Bearer " + token != rejected { return true }  // renewed since `rejected` was sent
        token = nil
        _ = try await refreshed()
        return true
    }

    /// A new token, from the fetch under way if there is one.
    private func refreshed() async throws -> String {
        if let fetching { return try await fetching.value }
        let task = Task { try await fetch() }
        fetching = task
        defer { fetching = nil }
        let token = try await task.value
        self.token = token
        return token
    }
}

extension CredentialProvider where Self == RefreshingBearerCredentials {
    /// A bearer token that `fetch` provides, fetched again after a 401
    /// (``RefreshingBearerCredentials``).
    ///
    /// ```swift
    /// let configuration = WebServiceClient.Configuration(credentials: .refreshingBearer { try await login() })
    /// ```
    public static func refreshingBearer(
        token: String? = nil, fetch: @escaping @Sendable () async throws -> String
    ) -> RefreshingBearerCredentials {
        RefreshingBearerCredentials(token: token, fetch: fetch)
    }
}
