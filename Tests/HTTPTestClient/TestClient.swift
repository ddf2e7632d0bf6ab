#if canImport(Glibc)
import Glibc
#endif

/// A raw-socket HTTP/1.1 client for tests: sends exact bytes, reads one
/// response at a time with Content-Length or chunked framing, and tells a
/// chunked body that ends without its final chunk from a complete one.
/// Shared by the test targets that speak raw HTTP (a library target: test
/// targets cannot share sources).
///
/// ```swift
/// let client = try TestClient(port: server.port)
/// let response = try client.request("GET", "/math/sum?a=2&b=4")
/// #expect(response.status == 200)
/// ```
public final class TestClient {
    public enum Failure: Error, Equatable {
        case connect(errno: Int32)
        case send(errno: Int32)
        case receive(errno: Int32)
        /// The peer closed the connection (before a complete response).
        case closed
        /// A chunked body ended (connection closed) without the `0` chunk.
        case missingFinalChunk
        case malformed(String)
    }

    public struct Response {
        public var status: Int
        public var headers: [(name: String, value: String)]
        public var body: [UInt8]
        public var bodyText: String { String(decoding: body, as: UTF8.self) }

        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    private let socket: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    private var receivedTotal = 0
    /// Zeroes appended in one bulk copy to make room for `recv`.
    private let spare = [UInt8](repeating: 0, count: 256 << 10)

    /// Connects to 127.0.0.1:`port`. A small `receiveBufferSize` limits how
    /// much the kernel buffers for a client that does not read.
    public init(port: Int, receiveBufferSize: Int? = nil, timeoutSeconds: Int = 20) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failure.connect(errno: errno) }
        if var size = receiveBufferSize.map(Int32.init) {
            setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if result != 0 {
            let error = errno
            Glibc.close(socket)
            throw Failure.connect(errno: error)
        }
    }

    deinit {
        Glibc.close(socket)
    }

    // MARK: - Sending

    public func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let result = bytes.withUnsafeBytes {
                Glibc.send(socket, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            }
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else { throw Failure.send(errno: errno) }
            sent += result
        }
    }

    public func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    /// Sends a request with `Host` and, for a body, `Content-Length`.
    public func sendRequest(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) throws {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" || method == "PUT" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        try send(Array(head.utf8) + body)
    }

    /// Sends a request and reads its response.
    public func request(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) throws -> Response {
        try sendRequest(method, target, headers: headers, body: body)
        return try readResponse(isHead: method == "HEAD")
    }

    // MARK: - Receiving

    /// Reads one response. The body goes to `sink` if given (then
    /// `Response.body` stays empty), else into `Response.body`.
    public func readResponse(isHead: Bool = false, sink: ((UnsafeRawBufferPointer) -> Void)? = nil) throws -> Response {
        let statusLine = try readLine()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw Failure.malformed("status line \(statusLine)")
        }
        var response = Response(status: status, headers: [], body: [])
        while true {
            let line = try readLine()
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else { throw Failure.malformed("header \(line)") }
            let value = line[line.index(after: colon)...].drop { $0 == " " }
            response.headers.append((String(line[..<colon]), String(value)))
        }
        let deliver: (UnsafeRawBufferPointer) -> Void = sink ?? { response.body.append(contentsOf: $0) }
        if isHead || status == 204 || status == 304 || (100..<200).contains(status) {
            return response
        }
        if response.header("Transfer-Encoding")?.lowercased() == "chunked" {
            try readChunkedBody(into: deliver)
        } else if let length = response.header("Content-Length").flatMap({ Int($0) }) {
            try readExactly(length, into: deliver)
        } else {
            while try fillBuffer() { consume(buffer.count - start, into: deliver) }
        }
        return response
    }

    private func readChunkedBody(into deliver: (UnsafeRawBufferPointer) -> Void) throws {
        while true {
            let sizeLine: String
            do { sizeLine = try readLine() } catch Failure.closed { throw Failure.missingFinalChunk }
            let hex = sizeLine.split(separator: ";").first.map(String.init) ?? ""
            guard let size = Int(hex.trimmingCharacters(), radix: 16) else {
                throw Failure.malformed("chunk size \(sizeLine)")
            }
            if size == 0 {
                while try !readLine().isEmpty {}
                return
            }
            do {
                try readExactly(size, into: deliver)
                guard try readLine().isEmpty else { throw Failure.malformed("chunk end") }
            } catch Failure.closed {
                throw Failure.missingFinalChunk
            }
        }
    }

    private func readExactly(_ count: Int, into deliver: (UnsafeRawBufferPointer) -> Void) throws {
        var remaining = count
        while remaining > 0 {
            if start == buffer.count, try !fillBuffer() { throw Failure.closed }
            let taken = min(remaining, buffer.count - start)
            consume(taken, into: deliver)
            remaining -= taken
        }
    }

    private func consume(_ count: Int, into deliver: (UnsafeRawBufferPointer) -> Void) {
        buffer.withUnsafeBytes { deliver(UnsafeRawBufferPointer(rebasing: $0[start..<(start + count)])) }
        start += count
    }

    private func readLine() throws -> String {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                var end = newline
                if end > start && buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                let line = String(decoding: buffer[start..<end], as: UTF8.self)
                start = newline + 1
                return line
            }
            guard try fillBuffer() else { throw Failure.closed }
        }
    }

    /// Reads more bytes; `false` when the peer closed the connection.
    private func fillBuffer() throws -> Bool {
        let chunkSize = 256 << 10
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 0 {
            buffer.removeFirst(start)
            start = 0
        }
        let previous = buffer.count
        var received = 0
        var failure: Int32 = 0
        buffer.append(contentsOf: spare.prefix(chunkSize))
        repeat {
            received = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress! + previous, chunkSize, 0) }
            failure = received < 0 ? errno : 0
        } while received < 0 && failure == EINTR
        buffer.removeLast(chunkSize - max(received, 0))
        receivedTotal += max(received, 0)
        if received < 0 {
            if failure == ECONNRESET { return false }
            throw Failure.receive(errno: failure)
        }
        return received > 0
    }

    /// Reads the status line, the header fields and at least `count` bytes
    /// that follow them (the start of the body), then stops reading.
    /// Returns the status.
    public func readHeadAndFirstBytes(_ count: Int) throws -> Int {
        let statusLine = try readLine()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, let status = Int(parts[1]) else { throw Failure.malformed("status line \(statusLine)") }
        while try !readLine().isEmpty {}
        while buffer.count - start < count {
            guard try fillBuffer() else { throw Failure.closed }
        }
        return status
    }

    /// Sends `bytes` one at a time, `interval` seconds apart; stops with
    /// the number sent once the server has closed the connection.
    public func sendSlowly(_ bytes: [UInt8], interval: Double) -> Int {
        for (index, byte) in bytes.enumerated() {
            if index > 0 { usleep(UInt32(interval * 1_000_000)) }
            if peerHasClosed() { return index }
            do { try send([byte]) } catch { return index }
        }
        return bytes.count
    }

    /// Whether the server closed its end, checked without blocking.
    private func peerHasClosed() -> Bool {
        var byte: UInt8 = 0
        let result = recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if result == 0 { return true }
        return result < 0 && errno != EAGAIN && errno != EWOULDBLOCK
    }

    /// Whether any byte of a response has arrived on this connection.
    public var hasReceivedAnything: Bool { receivedTotal > 0 }

    /// Whether the server has closed the connection (reads nothing more).
    public func isClosedByPeer() throws -> Bool {
        start == buffer.count ? try !fillBuffer() : false
    }
}

extension StringProtocol {
    func trimmingCharacters() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
