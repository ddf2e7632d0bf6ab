import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Sends exact bytes to 127.0.0.1 and reads the one response that comes
/// back, until the server closes the connection (requests carry
/// `Connection: close`). A chunked body is de-chunked.
enum RawClient {
    enum Failure: Error {
        case connect(Int32)
        case noResponse(String)
    }

    struct Response: CustomStringConvertible {
        var status: Int
        var headers: [(name: String, value: String)]
        var body: [UInt8]

        var text: String { String(decoding: body, as: UTF8.self) }

        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        /// The body parsed as a JSON object, or nil.
        var object: [String: Any]? {
            (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
        }

        var description: String { "\(status) \(header("Content-Type") ?? "-") \(text.prefix(300))" }
    }

    /// `GET target` (any bytes) with extra header lines and a body.
    static func request(
        port: Int, method: String = "GET", target: [UInt8], headers: [String] = [], body: [UInt8] = [],
        contentLength: Int? = nil
    ) throws -> Response {
        var head = Array("\(method) ".utf8) + target + Array(" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n".utf8)
        for header in headers { head += Array("\(header)\r\n".utf8) }
        if !body.isEmpty || contentLength != nil { head += Array("Content-Length: \(contentLength ?? body.count)\r\n".utf8) }
        head += Array("\r\n".utf8)
        return try exchange(port: port, head + body)
    }

    static func request(port: Int, method: String = "GET", _ target: String, headers: [String] = [], body: [UInt8] = []) throws -> Response {
        try request(port: port, method: method, target: Array(target.utf8), headers: headers, body: body)
    }

    /// Sends `bytes` (as much as the server reads before answering) and
    /// reads until the server closes.
    static func exchange(port: Int, _ bytes: [UInt8]) throws -> Response {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failure.connect(errno) }
        defer { Glibc.close(socket) }
        // Generous: under ThreadSanitizer, on a loaded machine, parsing a
        // 60,000-member body took more than 30 s.
        var timeout = timeval(tv_sec: 180, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure.connect(errno) }

        // The server may answer (and close) before reading everything, as
        // for a body over the limit: a failed send is not an error.
        var sent = 0
        while sent < bytes.count {
            let result = bytes.withUnsafeBytes { send(socket, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if result < 0 && errno == EINTR { continue }
            if result <= 0 { break }
            sent += result
        }
        shutdown(socket, Int32(SHUT_WR))

        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            received += chunk[..<count]
        }
        return try parse(received)
    }

    private static func parse(_ bytes: [UInt8]) throws -> Response {
        let separator = Array("\r\n\r\n".utf8)
        guard let end = bytes.firstRange(of: separator) else {
            throw Failure.noResponse(String(decoding: bytes.prefix(200), as: UTF8.self))
        }
        let lines = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let parts = lines[0].split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { throw Failure.noResponse(lines[0]) }
        var response = Response(status: status, headers: [], body: Array(bytes[end.upperBound...]))
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            response.headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        if response.header("Transfer-Encoding")?.lowercased() == "chunked" {
            response.body = dechunk(response.body)
        }
        return response
    }

    private static func dechunk(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        var index = bytes.startIndex
        let crlf = Array("\r\n".utf8)
        while let lineEnd = bytes[index...].firstRange(of: crlf) {
            let sizeText = String(decoding: bytes[index..<lineEnd.lowerBound], as: UTF8.self)
            guard let size = Int(sizeText.split(separator: ";").first ?? "", radix: 16), size > 0,
                  lineEnd.upperBound + size <= bytes.endIndex
            else { break }
            output += bytes[lineEnd.upperBound..<(lineEnd.upperBound + size)]
            index = min(lineEnd.upperBound + size + 2, bytes.endIndex)
        }
        return output
    }
}
