import Foundation

extension TestClient {
    /// A response as read off the socket, its chunked body decoded.
    ///
    /// ```swift
    /// let reply = try TestClient.request("GET", "/departments", port: port)
    /// #expect(reply.header("Content-Type") == "application/json; charset=utf-8")
    /// #expect(reply.objects.count == 9)
    /// ```
    public struct Response: Sendable, CustomStringConvertible {
        /// The status code.
        public var status: Int
        /// The header fields in the order received.
        public var headers: [(name: String, value: String)]
        /// The body; empty for `HEAD`, 204 and 304, or when read into a sink.
        public var body: [UInt8]

        /// Parses one complete response: `bytes` hold exactly the response,
        /// as read until the server closed the connection.
        ///
        /// ```swift
        /// let reply = try TestClient.Response(parsing: client.readToEnd())
        /// ```
        public init(parsing bytes: [UInt8], isHead: Bool = false) throws {
            let reader = ResponseReader(bytes: bytes)
            self = try reader.readResponse(isHead: isHead, sink: nil)
            // libmicrohttpd 0.9.75 sends the last chunk even after a chunked
            // HEAD response, which is why the server closes the connection
            // after one; a client stops reading at the end of its header.
            let strayLastChunk =
                isHead && header("Transfer-Encoding") == "chunked" && header("Connection") == "close"
                && reader.unreadCount == 5
            guard reader.unreadCount == 0 || strayLastChunk else {
                throw Failure.malformed("\(reader.unreadCount) bytes after the response")
            }
        }

        init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        /// The value of the first header field called `name` (any case).
        ///
        /// ```swift
        /// #expect(reply.header("retry-after") == "1")
        /// ```
        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        /// The body decoded as UTF-8.
        public var text: String { String(decoding: body, as: UTF8.self) }

        /// The body as text without a problem document's `requestId`, whose
        /// random hex could hold what a test looks for.
        public var textWithoutRequestID: String {
            text.replacingOccurrences(of: #""requestId":"[^"]*""#, with: "", options: .regularExpression)
        }

        /// The body parsed as JSON by `JSONReader.value` (any top-level value).
        ///
        /// ```swift
        /// #expect((try? reply.json()) != nil)
        /// ```
        public func json() throws -> Any {
            try JSONReader.value(body)
        }

        /// The body as a JSON object; empty when it is not one.
        public var object: [String: Any] { JSONReader.object(body) }

        /// The body as a JSON array of objects; empty when it is not one.
        public var objects: [[String: Any]] { JSONReader.objects(body) }

        /// The status, the content type and the start of the body.
        public var description: String { "\(status) \(header("Content-Type") ?? "-") \(text.prefix(300))" }
    }
}
