#if canImport(Glibc)
import Glibc
#endif

/// A numeric IPv4 or IPv6 socket address to bind to.
///
/// ```swift
/// let address = try SocketAddress(host: "127.0.0.1", port: 8080)
/// ```
struct SocketAddress: Sendable {
    private enum Storage: Sendable {
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

    /// A copy of a peer's IPv4 or IPv6 address; `nil` for other families.
    init?(copying address: UnsafePointer<sockaddr>) {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            storage = .v4(UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in.self))
        case AF_INET6:
            storage = .v6(UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in6.self))
        default:
            return nil
        }
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

    /// `host:port` (`[::1]:8080` for IPv6).
    var text: String? {
        withSockaddr(Self.describe)
    }

    /// `host:port` (`[::1]:8080` for IPv6) of a peer's address.
    static func describe(_ address: UnsafePointer<sockaddr>) -> String? {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                var addr = v4.pointee.sin_addr
                guard inet_ntop(AF_INET, &addr, &text, socklen_t(text.count)) != nil else { return nil }
                return "\(String(nulTerminated: text)):\(UInt16(bigEndian: v4.pointee.sin_port))"
            }
        case AF_INET6:
            return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                var addr = v6.pointee.sin6_addr
                guard inet_ntop(AF_INET6, &addr, &text, socklen_t(text.count)) != nil else { return nil }
                return "[\(String(nulTerminated: text))]:\(UInt16(bigEndian: v6.pointee.sin6_port))"
            }
        default:
            return nil
        }
    }
}

// MARK: - Peer address

/// The client's address as a request carries it: copied from the socket
/// address when the request arrives and made text only when read (most
/// handlers never read it), or text set by whoever built the request.
enum PeerAddress: Sendable {
    case socket(SocketAddress)
    case text(String?)

    var text: String? {
        switch self {
        case .socket(let address): address.text
        case .text(let text): text
        }
    }
}

extension String {
    /// The UTF-8 text of a NUL-terminated C buffer.
    init(nulTerminated buffer: [CChar]) {
        self.init(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
