import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension SessionTransport {
    /// The request that follows a redirect from `origin` to `request`'s URL,
    /// or the error that refuses it.
    ///
    /// - A redirect from https to http is refused (``WebServiceError/Code/insecureRedirect``):
    ///   the call's credentials, arguments and answer would travel in clear.
    /// - A redirect to another origin (scheme, host or port) goes without the
    ///   credential header fields (``CredentialFields``): URLSession would
    ///   otherwise copy them to a server they were not meant for.
    ///
    /// ```swift
    /// SessionTransport.redirect(request, from: URL(string: "https://a.example/x")!)
    /// ```
    static func redirect(_ request: URLRequest, from origin: URL) -> Result<URLRequest, WebServiceError> {
        guard let target = request.url else { return .success(CredentialFields.removed(from: request)) }
        if origin.scheme?.lowercased() == "https", target.scheme?.lowercased() != "https" {
            return .failure(
                WebServiceError(
                    .insecureRedirect, detail: "The server redirected an https call to an unencrypted URL; the call was refused."))
        }
        return .success(isSameOrigin(origin, target) ? request : CredentialFields.removed(from: request))
    }

    /// Whether two URLs have the same scheme, host and port (a default port written or not).
    static func isSameOrigin(_ first: URL, _ second: URL) -> Bool {
        func origin(_ url: URL) -> (scheme: String, host: String, port: Int?) {
            let scheme = url.scheme?.lowercased() ?? ""
            let defaultPort: Int? =
                switch scheme {
                case "http": 80
                case "https": 443
                default: nil
                }
            return (scheme, url.host?.lowercased() ?? "", url.port ?? defaultPort)
        }
        let (a, b) = (origin(first), origin(second))
        return a.scheme == b.scheme && a.host == b.host && a.port == b.port
    }
}
