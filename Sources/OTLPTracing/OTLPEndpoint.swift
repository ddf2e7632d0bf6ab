#if canImport(Glibc)
import Glibc
#endif

/// A collector's OTLP/HTTP endpoint: `http://host:port`, to which the
/// traces' path `/v1/traces` is added, or `http://host:port/path`, used as
/// it is. Plain HTTP only: the collector usually runs beside the server
/// (a sidecar, an agent on the host) and sends on over TLS itself.
///
/// ```swift
/// let endpoint = try OTLPEndpoint("http://127.0.0.1:4318")
/// endpoint.path    // "/v1/traces"
/// ```
public struct OTLPEndpoint: Sendable, CustomStringConvertible {
    /// The host name or address (an IPv6 address without its brackets).
    public let host: String
    public let port: Int
    /// The request's path, from `/`.
    public let path: String

    /// Why an endpoint cannot be used, said for the command line.
    public struct Problem: Error, CustomStringConvertible {
        public let description: String
    }

    /// Reads `url`; throws a ``Problem`` naming what is wrong with it.
    public init(_ url: String) throws {
        guard url.hasPrefix("http://") else {
            let scheme = url.split(separator: ":", maxSplits: 1).first.map(String.init) ?? url
            throw Problem(
                description: url.hasPrefix("https://")
                    ? "--otlp-endpoint \(url): https is not supported; send to a collector over http (beside the server), which forwards over TLS"
                    : "--otlp-endpoint \(url): not an http:// URL (\(scheme))")
        }
        let rest = url.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let remainder = rest.dropFirst(authority.count)
        guard !remainder.contains("?"), !remainder.contains("#") else {
            throw Problem(description: "--otlp-endpoint \(url): a query or fragment is not allowed")
        }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw Problem(description: "--otlp-endpoint \(url): unclosed [") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                throw Problem(description: "--otlp-endpoint \(url): bad host")
            }
        } else {
            let parts = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = parts[0]
            portText = parts.count > 1 ? parts[1] : nil
        }
        guard !host.isEmpty, !host.contains("@"), host.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            throw Problem(description: "--otlp-endpoint \(url): no host, or a host with credentials or spaces")
        }
        let port = portText.map { Int($0) } ?? 4318
        guard let port, (1...65535).contains(port) else { throw Problem(description: "--otlp-endpoint \(url): bad port") }
        guard remainder.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            throw Problem(description: "--otlp-endpoint \(url): the path holds spaces or controls")
        }
        self.host = String(host)
        self.port = port
        self.path = remainder.isEmpty || remainder == "/" ? "/v1/traces" : String(remainder)
    }

    public var description: String {
        "http://\(host.contains(":") ? "[\(host)]" : host):\(port)\(path)"
    }

    /// The `Host` header's value.
    var hostHeader: String {
        (host.contains(":") ? "[\(host)]" : host) + (port == 80 ? "" : ":\(port)")
    }
}

/// One keep-alive HTTP/1.1 connection to the collector, used by the export
/// thread alone: a `POST` at a time, blocking, within 10 s each way.
final class OTLPConnection {
    private let endpoint: OTLPEndpoint
    private var socket: Int32 = -1
    /// Bytes read past the last response.
    private var buffer: [UInt8] = []

    init(_ endpoint: OTLPEndpoint) {
        self.endpoint = endpoint
    }

    deinit { close() }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// POSTs `body` as `application/x-protobuf`; the response's status.
    /// A kept-alive connection the collector closed meanwhile is opened
    /// again once.
    func post(_ body: [UInt8]) throws -> Int {
        let reused = socket >= 0
        do {
            return try send(body)
        } catch  where reused {
            close()
            return try send(body)
        }
    }

    func close() {
        if socket >= 0 { Glibc.close(socket) }
        socket = -1
        buffer = []
    }

    private func send(_ body: [UInt8]) throws -> Int {
        if socket < 0 { try connect() }
        do {
            var request = Array(
                ("POST \(endpoint.path) HTTP/1.1\r\nHost: \(endpoint.hostHeader)\r\nContent-Type: application/x-protobuf\r\n"
                    + "Content-Length: \(body.count)\r\nUser-Agent: swift-sql-rest\r\n\r\n").utf8)
            request += body
            try write(request)
            let (status, keepsAlive) = try readResponse()
            if !keepsAlive { close() }
            return status
        } catch {
            close()
            throw error
        }
    }

    private func connect() throws {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var addresses: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(endpoint.host, String(endpoint.port), &hints, &addresses)
        guard status == 0, let first = addresses else {
            throw Failure(description: "cannot resolve \(endpoint.host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(addresses) }
        var lastError: Int32 = 0
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let address = next {
            next = address.pointee.ai_next
            let candidate = Glibc.socket(address.pointee.ai_family, address.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard candidate >= 0 else {
                lastError = errno
                continue
            }
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(candidate, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(candidate, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            if Glibc.connect(candidate, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 {
                socket = candidate
                return
            }
            lastError = errno
            Glibc.close(candidate)
        }
        throw Failure(description: "cannot connect to \(endpoint.hostHeader): \(String(cString: strerror(lastError)))")
    }

    private func write(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                throw Failure(description: "the connection to the collector failed: \(String(cString: strerror(errno)))")
            }
            sent += count
        }
    }

    /// Reads more bytes into `buffer`; `false` at the end of the stream.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw Failure(description: "no answer from the collector: \(String(cString: strerror(errno)))") }
            buffer += chunk.prefix(count)
            return count > 0
        }
    }

    /// The status and whether the connection stays open; the body is read and dropped.
    private func readResponse() throws -> (status: Int, keepsAlive: Bool) {
        var headerEnd: Int?
        while headerEnd == nil {
            headerEnd = Self.find([13, 10, 13, 10], in: buffer).map { $0 + 4 }
            if headerEnd == nil {
                guard buffer.count < 64 << 10, try fill() else { throw Failure(description: "the collector's answer has no header") }
            }
        }
        let head = String(decoding: buffer[..<headerEnd!], as: UTF8.self)
        buffer.removeFirst(headerEnd!)
        let lines = head.split(separator: "\r\n")
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw Failure(description: "the collector's answer is not HTTP/1.1")
        }
        var length: Int?
        var isChunked = false
        var keepsAlive = statusParts[0] == "HTTP/1.1"
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let name = parts[0].lowercased()
            let value = parts[1].drop { $0 == " " || $0 == "\t" }.lowercased()
            if name == "content-length" { length = Int(value) }
            if name == "transfer-encoding" { isChunked = value.contains("chunked") }
            if name == "connection" { keepsAlive = value != "close" }
        }
        if isChunked {
            try skipChunked()
        } else if let length {
            while buffer.count < length {
                guard try fill() else { throw Failure(description: "the collector's answer ended early") }
            }
            buffer.removeFirst(length)
        } else if status >= 200, status != 204, status != 304 {
            while try fill() {}
            return (status, false)
        }
        return (status, keepsAlive)
    }

    private func skipChunked() throws {
        while true {
            var lineEnd = Self.find([13, 10], in: buffer)
            while lineEnd == nil {
                guard try fill() else { throw Failure(description: "the collector's answer ended early") }
                lineEnd = Self.find([13, 10], in: buffer)
            }
            let sizeText = String(decoding: buffer[..<lineEnd!], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingSpaces, radix: 16), size >= 0, size < 1 << 24 else {
                throw Failure(description: "the collector's answer has a bad chunk")
            }
            buffer.removeFirst(lineEnd! + 2)
            while buffer.count < size + 2 {
                guard try fill() else { throw Failure(description: "the collector's answer ended early") }
            }
            buffer.removeFirst(size + 2)
            if size == 0 { return }
        }
    }

    private static func find(_ pattern: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= pattern.count else { return nil }
        for start in 0...(bytes.count - pattern.count) where bytes[start..<(start + pattern.count)].elementsEqual(pattern) {
            return start
        }
        return nil
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
