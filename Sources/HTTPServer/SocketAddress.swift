#if canImport(Glibc)
import Glibc
#endif

/// A numeric IPv4 or IPv6 socket address to bind to.
///
/// ```swift
/// let address = try SocketAddress(host: "127.0.0.1", port: 8080)
/// ```
struct SocketAddress: CustomStringConvertible {
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

    /// The port (0: any free one).
    var port: Int {
        switch storage {
        case .v4(let address): Int(UInt16(bigEndian: address.sin_port))
        case .v6(let address): Int(UInt16(bigEndian: address.sin6_port))
        }
    }

    /// The same host with another port.
    func withPort(_ port: Int) -> SocketAddress {
        switch storage {
        case .v4(var address):
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            return SocketAddress(storage: .v4(address))
        case .v6(var address):
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            return SocketAddress(storage: .v6(address))
        }
    }

    private init(storage: Storage) {
        self.storage = storage
    }

    /// The size of the `sockaddr` that ``withSockaddr(_:)`` passes.
    var length: socklen_t {
        switch storage {
        case .v4: socklen_t(MemoryLayout<sockaddr_in>.size)
        case .v6: socklen_t(MemoryLayout<sockaddr_in6>.size)
        }
    }

    var isIPv6: Bool {
        if case .v6 = storage { return true }
        return false
    }

    /// `127.0.0.1:8080`, `[::1]:8080`.
    var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        switch storage {
        case .v4(var address):
            inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count))
            return "\(String(nulTerminated: text)):\(port)"
        case .v6(var address):
            inet_ntop(AF_INET6, &address.sin6_addr, &text, socklen_t(text.count))
            return "[\(String(nulTerminated: text))]:\(port)"
        }
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
