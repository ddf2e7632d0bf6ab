#if canImport(Glibc)
import Glibc
#endif

/// The names a server answers for (``HTTPServer/Configuration/allowedHosts``).
///
/// The host part of a request's `Host` (or of its absolute-form target),
/// without the port, must be one of them; any other is answered 421
/// Misdirected Request before anything else runs (the admission, the body,
/// the handler). A web page that rebinds its own name to the server's
/// address (DNS rebinding) has its browser send that name in `Host`, and
/// its reads and writes, same-origin to the browser, never reach a
/// handler. A request without `Host` on HTTP/1.1, with two, or with one
/// that is not a host and port, is answered 400 (RFC 9112, section 3.2).
///
/// Names compare without regard to case and to a final dot; an IPv6
/// address is written without brackets, as `inet_ntop` writes it (`::1`).
///
/// ```swift
/// let hosts = AllowedHosts(configured: nil, listeningOn: "127.0.0.1")   // 127.0.0.1, localhost
/// hosts.allows("LOCALHOST")   // true
/// hosts.allows("evil.example")   // false
/// ```
struct AllowedHosts: Sendable, CustomStringConvertible {
    /// Lower-cased, without brackets or a final dot; `nil`: any name.
    let names: [String]?
    /// The names' bytes, for the check every request passes.
    private let nameBytes: [[UInt8]]

    /// `configured` (`*` among them: any name), or the default names of
    /// the address `host` when `nil`.
    init(configured: [String]?, listeningOn host: String) {
        let names = configured ?? Self.defaultNames(listeningOn: host)
        self.names = names.contains("*") ? nil : Array(Set(names.map(Self.normalized))).sorted()
        nameBytes = self.names?.map { Array($0.utf8) } ?? []
    }

    var description: String {
        names?.joined(separator: ", ") ?? "any name"
    }

    /// The names of the address the server listens on: a loopback address
    /// and `localhost`; for `localhost`, `127.0.0.1` and `::1` too; for
    /// every address (`0.0.0.0`, `::`), the machine's host name,
    /// `localhost` and the address of each network interface; for another
    /// address, that address and the machine's host name.
    static func defaultNames(listeningOn host: String) -> [String] {
        let address = normalized(host)
        switch address {
        case "localhost":
            return ["localhost", "127.0.0.1", "::1"]
        case "0.0.0.0", "::":
            return ["localhost"] + hostName() + interfaceAddresses()
        case _ where address == "::1" || address.hasPrefix("127."):
            return [address, "localhost"]
        default:
            return [address] + hostName()
        }
    }

    /// Whether `name`, a host part without its port, is one of the names.
    func allows(_ name: Substring) -> Bool {
        guard let names else { return true }
        return names.contains { Self.matches(name, $0) }
    }

    /// Whether `name`, the host of an `Origin`, is one of the server's names:
    /// one of ``names``, or with any name allowed, the host `Host` names.
    func isServerName(_ name: Substring, requestHost: Substring) -> Bool {
        guard names != nil else { return Self.matches(name, requestHost) }
        return allows(name)
    }

    /// Whether two host names are the same, ignoring ASCII case and a final dot.
    private static func matches(_ first: some StringProtocol, _ second: some StringProtocol) -> Bool {
        matches(Substring(first).utf8, Substring(second).utf8)
    }

    private static func matches<First: BidirectionalCollection<UInt8>, Second: BidirectionalCollection<UInt8>>(
        _ first: First, _ second: Second
    ) -> Bool {
        let first = first.last == UInt8(ascii: ".") ? first.dropLast() : first[...]
        let second = second.last == UInt8(ascii: ".") ? second.dropLast() : second[...]
        return first.count == second.count && zip(first, second).allSatisfy { ($0 | 0x20) == ($1 | 0x20) && ($0 == $1 || isLetter($0)) }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }

    // MARK: - The check

    /// The refusal of a request whose `Host` is missing (on HTTP/1.1),
    /// repeated, malformed (400) or not one of the names (421); `nil` when
    /// it may go on. An absolute-form target (`http://host/path`) names the
    /// host instead of `Host` (RFC 9112, section 3.2.2).
    ///
    /// It runs on every request: the authority is read in place, as bytes.
    func problem(headers: HTTPHeaders, rawTarget: [UInt8], isHTTP10: Bool) -> HTTPError? {
        var host: String?
        for field in headers.fields where field.name.utf8.count == 4 && HTTPHeaders.namesMatch(field.name, "Host") {
            guard host == nil else { return HTTPError(.badRequest, detail: "The request has more than one Host field.") }
            host = field.value
        }
        let verdict: Verdict
        if let fromTarget = Self.absoluteFormAuthority(rawTarget) {
            verdict = rawTarget.withUnsafeBufferPointer { check(UnsafeBufferPointer(rebasing: $0[fromTarget])) }
        } else if var host {
            verdict = host.withUTF8 { check($0) }
        } else {
            return isHTTP10 ? nil : HTTPError(.badRequest, detail: "An HTTP/1.1 request must have a Host field.")
        }
        switch verdict {
        case .allowed:
            return nil
        case .malformed:
            return HTTPError(.badRequest, detail: "The request's Host is not a host name or address, with a port or not.")
        case .refused(let name):
            return HTTPError(
                .misdirectedRequest, detail: "This server does not answer for the host \"\(LogText.escaping(String(name.prefix(255))))\".")
        }
    }

    private enum Verdict {
        case allowed, malformed
        case refused(String)
    }

    private func check(_ authority: UnsafeBufferPointer<UInt8>) -> Verdict {
        guard let host = Self.hostRange(authority) else { return .malformed }
        let name = UnsafeBufferPointer(rebasing: authority[host])
        guard names != nil else { return .allowed }
        for allowed in nameBytes where Self.isNamed(name, allowed) { return .allowed }
        return .refused(String(decoding: name, as: UTF8.self))
    }

    /// Whether a request's host is `allowed` (lower-cased, without a final
    /// dot): the same bytes but for ASCII case and a final dot.
    private static func isNamed(_ name: UnsafeBufferPointer<UInt8>, _ allowed: [UInt8]) -> Bool {
        var count = name.count
        if count > 1, name[count - 1] == UInt8(ascii: ".") { count -= 1 }
        guard count == allowed.count else { return false }
        return allowed.withUnsafeBufferPointer { allowed in
            for index in 0..<count {
                let byte = name[index]
                let lower = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
                if lower != allowed[index] { return false }
            }
            return true
        }
    }

    /// The range of the host in `authority` (`host[:port]` or
    /// `[IPv6]:port`, without the brackets); `nil` when it is not one.
    private static func hostRange(_ authority: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        let host: Range<Int>
        var rest: Int
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            host = 1..<close
            rest = close + 1
            guard !host.isEmpty, authority[host].allSatisfy({ isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") })
            else { return nil }
        } else {
            let colon = authority.firstIndex(of: UInt8(ascii: ":")) ?? authority.count
            host = 0..<colon
            rest = colon
            guard !host.isEmpty, authority[host].allSatisfy(isNameByte) else { return nil }
        }
        guard rest < authority.count else { return host }
        guard authority[rest] == UInt8(ascii: ":") else { return nil }
        rest += 1
        guard authority.count - rest <= 5, authority[rest...].allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return host
    }

    /// The host and the port (`nil` when absent or empty) of `authority`,
    /// `host[:port]` or `[IPv6]:port`, the brackets removed; `nil` when it
    /// is not one.
    static func hostAndPort(_ authority: Substring) -> (host: Substring, port: Substring?)? {
        var bytes = authority
        guard let range = bytes.withUTF8({ hostRange($0) }) else { return nil }
        let utf8 = authority.utf8
        let hostStart = utf8.index(utf8.startIndex, offsetBy: range.lowerBound)
        let hostEnd = utf8.index(utf8.startIndex, offsetBy: range.upperBound)
        // After the host: `]` for an address in brackets, then `:` and the port.
        var portStart = authority.first == "[" ? utf8.index(after: hostEnd) : hostEnd
        if portStart < utf8.endIndex { portStart = utf8.index(after: portStart) }
        let port = authority[portStart...]
        return (authority[hostStart..<hostEnd], port.isEmpty ? nil : port)
    }

    /// The range of the authority of an absolute-form target
    /// (`http://host:8080/path`), `nil` for any other form.
    private static func absoluteFormAuthority(_ target: [UInt8]) -> Range<Int>? {
        guard target.first != UInt8(ascii: "/"), let colon = target.firstIndex(of: UInt8(ascii: ":")),
            target[colon...].starts(with: "://".utf8)
        else { return nil }
        let start = colon + 3
        let end = target[start...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? target.count
        return start..<end
    }

    /// A byte of a registered name (RFC 3986: unreserved, sub-delims, `%`).
    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "!"), UInt8(ascii: "$"),
            UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"),
            UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: "%"):
            true
        default:
            false
        }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }

    // MARK: - The machine's names

    /// A configured name as compared: lower-cased, without a port,
    /// brackets or a final dot (`[::1]:8080` is `::1`).
    private static func normalized(_ name: String) -> String {
        var name = Substring(name.lowercased())
        if let (host, _) = hostAndPort(name) { name = host }
        if name.last == ".", name.count > 1 { name = name.dropLast() }
        return String(name)
    }

    /// The machine's host name (`gethostname`), if it has one.
    private static func hostName() -> [String] {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return [] }
        let name = String(nulTerminated: buffer)
        return name.isEmpty ? [] : [name]
    }

    /// The IPv4 and IPv6 addresses of the machine's network interfaces.
    private static func interfaceAddresses() -> [String] {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0 else { return [] }
        defer { freeifaddrs(first) }
        var addresses: [String] = []
        var current = first
        while let interface = current {
            current = interface.pointee.ifa_next
            guard let address = interface.pointee.ifa_addr else { continue }
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            let family = Int32(address.pointee.sa_family)
            let written: UnsafePointer<CChar>? =
                switch family {
                case AF_INET:
                    address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
                        withUnsafePointer(to: inet.pointee.sin_addr) { inet_ntop(AF_INET, $0, &text, socklen_t(text.count)) }
                    }
                case AF_INET6:
                    address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { inet in
                        withUnsafePointer(to: inet.pointee.sin6_addr) { inet_ntop(AF_INET6, $0, &text, socklen_t(text.count)) }
                    }
                default: nil
                }
            if written != nil { addresses.append(String(nulTerminated: text)) }
        }
        return addresses
    }
}
