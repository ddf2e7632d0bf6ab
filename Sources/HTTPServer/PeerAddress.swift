#if canImport(Glibc)
import Glibc
#endif

/// The client's address as a request carries it: the socket address,
/// copied when the request arrives and made text only when read (most
/// handlers never read it), or text set by whoever built the request.
///
/// ```swift
/// PeerAddress(copying: sockaddrPointer).text   // "127.0.0.1:53122"
/// ```
enum PeerAddress: Sendable {
    case ipv4(sockaddr_in)
    case ipv6(sockaddr_in6)
    case text(String?)

    /// A copy of an IPv4 or IPv6 address; no address for other families.
    init(copying address: UnsafePointer<sockaddr>) {
        switch Int32(address.pointee.sa_family) {
        case AF_INET: self = .ipv4(UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in.self))
        case AF_INET6: self = .ipv6(UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in6.self))
        default: self = .text(nil)
        }
    }

    /// `host:port` (`[::1]:8080` for IPv6).
    var text: String? {
        switch self {
        case .ipv4(var address):
            withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, Self.describe) }
        case .ipv6(var address):
            withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, Self.describe) }
        case .text(let text):
            text
        }
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

extension String {
    /// The UTF-8 text of a NUL-terminated C buffer.
    init(nulTerminated buffer: [CChar]) {
        self.init(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
