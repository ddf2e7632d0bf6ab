#if canImport(Glibc)
import Glibc
#endif

/// Bytes as they are: what no well-behaved client sends, read as it comes.
extension TestClient {
    // MARK: - Sending

    /// Sends `bytes` exactly.
    ///
    /// ```swift
    /// try client.send(Array(repeating: UInt8(ascii: "a"), count: 100_000))
    /// ```
    public func send(_ bytes: [UInt8]) throws {
        try socket.send(bytes)
    }

    /// Sends the UTF-8 bytes of `text` exactly.
    ///
    /// ```swift
    /// try client.send("POST /big HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5000\r\n\r\n")
    /// ```
    public func send(_ text: String) throws {
        try socket.send(Array(text.utf8))
    }

    /// Sends `bytes` one at a time, `interval` seconds apart; stops with
    /// the number sent once the server has closed the connection.
    ///
    /// ```swift
    /// let sent = client.sendSlowly(Array("GET / HTTP/1.1\r\n".utf8), interval: 1)
    /// ```
    public func sendSlowly(_ bytes: [UInt8], interval: Double) -> Int {
        for (index, byte) in bytes.enumerated() {
            if index > 0 { usleep(UInt32(interval * 1_000_000)) }
            if socket.peerHasClosed { return index }
            do { try socket.send([byte]) } catch { return index }
        }
        return bytes.count
    }

    /// Closes the sending side (half-close): the server reads the end of
    /// the stream and can still answer.
    ///
    /// ```swift
    /// try client.send(head)
    /// client.closeSending()
    /// ```
    public func closeSending() {
        socket.shutdownSending()
    }

    /// Makes the client's end reset the connection when it goes, as a load
    /// generator that stops with requests in flight does.
    ///
    /// ```swift
    /// client.resetWhenClosed()
    /// _ = consume client
    /// ```
    public func resetWhenClosed() {
        socket.resetWhenClosed()
    }

    // MARK: - Receiving

    /// Up to `maximum` bytes of what the server sent: the unread bytes
    /// already received, else one read of at most `maximum` bytes. Empty
    /// once the server has closed the connection.
    ///
    /// ```swift
    /// let start = try client.read(maximum: 1024)
    /// ```
    public func read(maximum: Int = 65536) throws -> [UInt8] {
        try reader.read(maximum: maximum)
    }

    /// Everything the server sends until it closes the connection.
    ///
    /// ```swift
    /// let reply = try TestClient.Response(parsing: start + client.readToEnd())
    /// ```
    public func readToEnd() throws -> [UInt8] {
        try reader.readToEnd()
    }

    /// Whether any byte of a response has arrived on this connection.
    public var hasReceivedAnything: Bool { reader.receivedCount > 0 }

    // MARK: - One exchange per connection

    /// Sends `bytes` on a new connection, reads until the server closes and
    /// parses the one response. The server may answer (and close) before
    /// reading everything, as for a body over the limit: a send that fails
    /// then is not an error. With `closeSending`, the client half-closes
    /// once the bytes are sent, so that a server waiting for more reads
    /// the end of the stream; a server may take that for an abort and not
    /// answer at all (`HTTPServer` on event loops does, at times).
    ///
    /// ```swift
    /// let reply = try TestClient.exchange(Array("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8), port: port)
    /// ```
    public static func exchange(
        _ bytes: [UInt8], port: Int, isHead: Bool = false, closeSending: Bool = false, timeoutSeconds: Int = 60
    ) throws -> Response {
        let client = try TestClient(port: port, timeoutSeconds: timeoutSeconds)
        do { try client.send(bytes) } catch Failure.send {}
        if closeSending { client.closeSending() }
        return try Response(parsing: client.readToEnd(), isHead: isHead)
    }
}
