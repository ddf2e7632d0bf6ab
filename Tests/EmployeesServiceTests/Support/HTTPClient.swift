import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A response as read off the socket.
struct HTTPReply: CustomStringConvertible {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed as JSON (any top-level value).
    func json() throws -> Any {
        try JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])
    }

    /// The body as a JSON object; empty when it is not one.
    var object: [String: Any] {
        ((try? json()) as? [String: Any]) ?? [:]
    }

    /// The body as a JSON array of objects; empty when it is not one.
    var objects: [[String: Any]] {
        ((try? json()) as? [[String: Any]]) ?? []
    }

    var description: String { "\(status) \(text.prefix(300))" }
}

/// A minimal HTTP/1.1 client over a blocking socket to 127.0.0.1, so that
/// the tests control exactly the bytes sent (quotes, `%00`, non-ASCII) and
/// how fast the response is read.
final class HTTPClient {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let socket: Int32
    private var buffer: [UInt8] = []

    /// Connects to `127.0.0.1:port`; reads time out after `timeout` seconds.
    init(port: Int, timeout: Int = 60) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failure(description: "socket() failed: errno \(errno)") }
        var time = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            Glibc.close(socket)
            throw Failure(description: "cannot connect to 127.0.0.1:\(port): errno \(errno)")
        }
    }

    deinit {
        Glibc.close(socket)
    }

    /// Sends one request with `Connection: close`.
    func sendRequest(_ method: String, _ target: String, headers: [String: String] = [:]) throws {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        let bytes = Array(head.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                Glibc.send(socket, buffer.baseAddress! + sent, buffer.count - sent, Int32(MSG_NOSIGNAL))
            }
            guard count > 0 else { throw Failure(description: "send failed: errno \(errno)") }
            sent += count
        }
    }

    /// Reads up to `maximum` bytes; empty at the end of the stream.
    func read(maximum: Int = 65536) throws -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: maximum)
        let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, maximum, 0) }
        guard count >= 0 else { throw Failure(description: "recv failed: errno \(errno)") }
        return Array(chunk[0..<count])
    }

    /// Reads until the server closes the connection.
    func readToEnd() throws -> [UInt8] {
        var all: [UInt8] = []
        while true {
            let chunk = try read()
            if chunk.isEmpty { return all }
            all += chunk
        }
    }

    /// Sends a request on a new connection and reads the whole response.
    static func send(_ method: String, _ target: String, port: Int, headers: [String: String] = [:]) throws -> HTTPReply {
        let client = try HTTPClient(port: port)
        try client.sendRequest(method, target, headers: headers)
        return try parse(try client.readToEnd(), method: method)
    }

    // MARK: - Parsing

    /// Splits a complete response into status, header fields and body,
    /// undoing chunked transfer coding.
    static func parse(_ raw: [UInt8], method: String = "GET") throws -> HTTPReply {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = raw.firstRange(of: separator) else {
            throw Failure(description: "no complete response head in \(raw.count) bytes")
        }
        let lines = String(decoding: raw[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw Failure(description: "bad status line \(lines[0])")
        }
        let headers = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var reply = HTTPReply(status: status, headers: headers, body: Array(raw[end.upperBound...]))
        if reply.header("Transfer-Encoding")?.lowercased() == "chunked" {
            reply.body = try dechunk(reply.body)
        } else if let length = reply.header("Content-Length").flatMap(Int.init), method != "HEAD" {
            guard reply.body.count == length else {
                throw Failure(description: "Content-Length \(length) but \(reply.body.count) bytes")
            }
        }
        return reply
    }

    static func dechunk(_ data: [UInt8]) throws -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(data.count)
        var index = 0
        let crlf: [UInt8] = [13, 10]
        while true {
            guard let lineEnd = data[index...].firstRange(of: crlf) else {
                throw Failure(description: "truncated chunked body after \(body.count) bytes")
            }
            let sizeText = String(decoding: data[index..<lineEnd.lowerBound], as: UTF8.self)
            guard let size = Int(sizeText.split(separator: ";").first ?? "", radix: 16) else {
                throw Failure(description: "bad chunk size \(sizeText)")
            }
            index = lineEnd.upperBound
            if size == 0 { return body }
            guard index + size + 2 <= data.count else {
                throw Failure(description: "truncated chunk after \(body.count) bytes")
            }
            body += data[index..<index + size]
            index += size + 2
        }
    }
}
