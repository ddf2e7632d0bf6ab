/// The bytes received and not yet consumed, read as HTTP/1.1 responses:
/// a status line, header fields, then a body framed by Content-Length, by
/// chunked coding or by the end of the stream. Reads from a socket, or
/// from bytes already received (`init(bytes:)`), so a response read off
/// the wire and one parsed afterwards go through the same code.
final class ResponseReader {
    private static let chunkSize = 256 << 10
    /// Zeroes appended in one bulk copy to make room for `recv`.
    private static let spare = [UInt8](repeating: 0, count: chunkSize)

    private let socket: Socket?
    private var buffer: [UInt8]
    private var start = 0
    /// Every byte received from the socket so far.
    private(set) var receivedCount = 0

    init(socket: Socket) {
        self.socket = socket
        buffer = []
    }

    /// A reader of `bytes` alone: their end is the end of the stream.
    init(bytes: [UInt8]) {
        socket = nil
        buffer = bytes
    }

    /// Bytes received and not yet consumed.
    var unreadCount: Int { buffer.count - start }

    // MARK: - Responses

    /// Reads one response. The body goes to `sink` if given (then
    /// `Response.body` stays empty), else into `Response.body`.
    func readResponse(isHead: Bool, sink: ((UnsafeRawBufferPointer) -> Void)?) throws -> TestClient.Response {
        var response = try readHead()
        let status = response.status
        let deliver: (UnsafeRawBufferPointer) -> Void = sink ?? { response.body.append(contentsOf: $0) }
        if isHead || status == 204 || status == 304 || (100..<200).contains(status) {
            return response
        }
        if response.header("Transfer-Encoding")?.lowercased() == "chunked" {
            try readChunkedBody(into: deliver)
        } else if let length = response.header("Content-Length").flatMap({ Int($0) }) {
            try readExactly(length, into: deliver)
        } else {
            while try fill() { consume(unreadCount, into: deliver) }
        }
        return response
    }

    /// Reads the status line and the header fields.
    func readHead() throws -> TestClient.Response {
        let statusLine = try readLine()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw TestClient.Failure.malformed("status line \(statusLine)")
        }
        var response = TestClient.Response(status: status, headers: [], body: [])
        while true {
            let line = try readLine()
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else { throw TestClient.Failure.malformed("header \(line)") }
            response.headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingBlanks()))
        }
        return response
    }

    private func readChunkedBody(into deliver: (UnsafeRawBufferPointer) -> Void) throws {
        while true {
            let sizeLine: String
            do { sizeLine = try readLine() } catch TestClient.Failure.closed { throw TestClient.Failure.missingFinalChunk }
            let hex = sizeLine.split(separator: ";").first.map(String.init) ?? ""
            guard let size = Int(hex.trimmingBlanks(), radix: 16) else {
                throw TestClient.Failure.malformed("chunk size \(sizeLine)")
            }
            if size == 0 {
                while try !readLine().isEmpty {}
                return
            }
            do {
                try readExactly(size, into: deliver)
                guard try readLine().isEmpty else { throw TestClient.Failure.malformed("chunk end") }
            } catch TestClient.Failure.closed {
                throw TestClient.Failure.missingFinalChunk
            }
        }
    }

    // MARK: - Bytes

    /// Up to `maximum` bytes: those already received, else what one read
    /// of at most `maximum` bytes returns; empty at the end of the stream.
    func read(maximum: Int) throws -> [UInt8] {
        if unreadCount == 0, try !fill(upTo: maximum) { return [] }
        let taken = min(maximum, unreadCount)
        defer { start += taken }
        return Array(buffer[start..<(start + taken)])
    }

    /// Everything until the peer closes the connection.
    func readToEnd() throws -> [UInt8] {
        while try fill() {}
        defer { start = buffer.count }
        return Array(buffer[start...])
    }

    /// Waits until at least `count` bytes are received and not consumed.
    func waitForUnread(_ count: Int) throws {
        while unreadCount < count {
            guard try fill() else { throw TestClient.Failure.closed }
        }
    }

    private func readExactly(_ count: Int, into deliver: (UnsafeRawBufferPointer) -> Void) throws {
        var remaining = count
        while remaining > 0 {
            if unreadCount == 0, try !fill() { throw TestClient.Failure.closed }
            let taken = min(remaining, unreadCount)
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
            guard try fill() else { throw TestClient.Failure.closed }
        }
    }

    /// Receives up to `limit` more bytes after the unread ones; `false`
    /// at the end of the stream.
    private func fill(upTo limit: Int = chunkSize) throws -> Bool {
        guard let socket else { return false }
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 0 {
            buffer.removeFirst(start)
            start = 0
        }
        let count = min(limit, Self.chunkSize)
        let previous = buffer.count
        buffer.append(contentsOf: Self.spare.prefix(count))
        let received: Int
        do {
            received = try buffer.withUnsafeMutableBytes {
                try socket.receive(into: UnsafeMutableRawBufferPointer(rebasing: $0[previous..<(previous + count)]))
            }
        } catch {
            buffer.removeLast(count)
            throw error
        }
        buffer.removeLast(count - received)
        receivedCount += received
        return received > 0
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    func trimmingBlanks() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
