import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension WebServiceHook {
    /// A hook that writes a line per exchange: the method, the URL (without
    /// a user or password), and the status, size and duration of the
    /// answer, or the error. Header fields are never written, so no
    /// credential reaches the log.
    ///
    /// ```swift
    /// let client = WebServiceClient(baseURL: url, configuration: .init(hooks: [.logging { os_log("%@", $0) }]))
    /// // GET http://127.0.0.1:8080/departments -> 200, 1042 bytes, 3 ms
    /// ```
    public static func logging(_ write: @escaping @Sendable (String) -> Void = { print($0) }) -> WebServiceHook {
        WebServiceHook { request, next in
            let start = Date()
            let url = request.url.map { CredentialFields.removed(from: $0).absoluteString } ?? "?"
            let call = (request.httpMethod ?? "GET") + " " + url
            func elapsed() -> String { "\(Int((Date().timeIntervalSince(start) * 1000).rounded())) ms" }
            do {
                let response = try await next(request)
                var line = "\(call) -> \(response.status), \(response.data.count) bytes, \(elapsed())"
                if response.isFromCache { line += response.isStale ? ", stale from the cache" : ", from the cache" }
                write(line)
                return response
            } catch {
                write("\(call) -> failed after \(elapsed()): \(error)")
                throw error
            }
        }
    }
}
