#if canImport(Glibc)
import Glibc
#endif

/// A numeric IPv4 or IPv6 socket address to bind to.
///
/// ```swift
/// let address = try SocketAddress(host: "127.0.0.1", port: 8080)
/// ```
struct SocketAddress {
    private enum Storage {
        case v4(sockaddr_in)
        case v6(sockaddr_in6)
    }

    private let storage: Storage

    init(host: String, port: Int) throws {
        guard (0...65535).contains(port) else {
            throw HTTPServer.StartError(description: "port \(port) is out of range")
        }
        let numericHost = host == "localhost" ? "127.0.0.1" : host
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, numericHost, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(port).bigEndian)
            storage = .v4(v4)
            return
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, numericHost, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(port).bigEndian)
            storage = .v6(v6)
            return
        }
        throw HTTPServer.StartError(description: "host \"\(host)\" is not a numeric IPv4 or IPv6 address")
    }

    var isIPv6: Bool {
        if case .v6 = storage { return true }
        return false
    }

    func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>) throws -> Result) rethrows -> Result {
        switch storage {
        case .v4(var address):
            return try withUnsafePointer(to: &address) {
                try $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body)
            }
        case .v6(var address):
            return try withUnsafePointer(to: &address) {
                try $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body)
            }
        }
    }
}
