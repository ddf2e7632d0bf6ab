import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The parts of a request that say who is calling: the header fields that
/// carry credentials, and the user and password of the URL. The cache keys
/// its entries by their digest, and a redirect to another origin drops them.
///
/// ```swift
/// CredentialFields.digest(of: request)  // nil for an anonymous request
/// ```
enum CredentialFields {
    /// The header fields that carry credentials.
    static let names = ["Authorization", "Proxy-Authorization", "Cookie"]

    /// A SHA-256 digest of `request`'s credentials; `nil` when it carries none.
    static func digest(of request: URLRequest) -> String? {
        var text = ""
        for name in names {
            if let value = request.value(forHTTPHeaderField: name) { text += name + ": " + value + "\n" }
        }
        if let url = request.url, let components = URLComponents(url: url, resolvingAgainstBaseURL: true) {
            if let user = components.percentEncodedUser { text += "user: " + user + "\n" }
            if let password = components.percentEncodedPassword { text += "password: " + password + "\n" }
        }
        return text.isEmpty ? nil : SHA256.hexDigest("credentials\n" + text)
    }

    /// `request` without its credential header fields.
    static func removed(from request: URLRequest) -> URLRequest {
        var request = request
        for name in names { request.setValue(nil, forHTTPHeaderField: name) }
        return request
    }

    /// `url` without its user and password.
    static func removed(from url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            components.percentEncodedUser != nil || components.percentEncodedPassword != nil
        else { return url }
        components.percentEncodedUser = nil
        components.percentEncodedPassword = nil
        return components.url ?? url
    }
}
