internal import CZlib
import JSONStreaming

/// gzip for responses whose client accepts it (`Accept-Encoding: gzip`):
/// textual bodies (JSON, problem documents, CSV, HTML) of at least
/// `minimumSize` bytes, and every textual stream but a stream of events
/// (`EventStreamingBody`), compressed block by block as the client reads
/// it, so that a streamed list keeps its constant memory and its
/// back-pressure. Such responses say `Vary: Accept-Encoding`
/// whether compressed or not, for caches; a body known whole below
/// `minimumSize`, never compressed, does not.
///
/// ```swift
/// HTTPServer.Configuration(compression: .init(minimumSize: 1024, level: 1))
/// ```
public struct ResponseCompression: Sendable {
    /// Bodies known whole below this size are sent as they are: their
    /// compression would save less than it costs.
    public var minimumSize: Int
    /// zlib's level, 1 (fastest) to 9 (smallest). The default, 1, favours
    /// the server's CPU: rows of JSON or CSV compress nearly as well at the
    /// fastest level as at the default one.
    public var level: Int

    /// gzip as configured; `HTTPServer.Configuration.compression = nil` turns it off.
    ///
    /// ```swift
    /// ResponseCompression(minimumSize: 4096, level: 6)
    /// ```
    public init(minimumSize: Int = 1024, level: Int = 1) {
        // The level is the program's code's (no option sets it).
        precondition((1...9).contains(level), "zlib's levels are 1 to 9")
        self.minimumSize = max(0, minimumSize)
        self.level = level
    }

    /// `response` as sent to a request with `requestHeaders`: compressed
    /// when it should be, with `Vary` when it could be. A response that
    /// already names its encoding is left alone. Runs for every response,
    /// so the header values are read as bytes, without building strings,
    /// and the response is consumed: adding `Vary` to a copy would copy
    /// its header fields first.
    func apply(to response: consuming HTTPResponse, requestHeaders: HTTPHeaders) -> HTTPResponse {
        switch response.body {
        case .bytes(let bytes) where bytes.count < minimumSize:
            // Sent as it is whatever the request accepts, so it does not
            // vary with `Accept-Encoding`; and one header field fewer is
            // one copy fewer in libmicrohttpd.
            return response
        case .stream(let body) where body is any EventStreamingBody:
            // Each event must go out when it comes, which a compressor would hold back.
            return response
        case .bytes, .stream: break
        case .empty: return response
        }
        guard Self.isCompressible(response.headers.first("Content-Type")), response.headers.first("Content-Encoding") == nil else {
            return response
        }
        var response = consume response
        response.headers.add("Vary", "Accept-Encoding")
        guard Self.acceptsGzip(requestHeaders) else { return response }
        switch response.body {
        case .bytes(let bytes):
            guard let compressed = try? GzipBody.compress(bytes, level: level) else { return response }
            response.body = .bytes(compressed)
        case .stream(let body):
            response.body = .stream(GzipBody(body, level: level))
        case .empty:
            return response
        }
        response.headers["Content-Encoding"] = "gzip"
        return response
    }

    /// Whether `Accept-Encoding` takes gzip (`gzip`, `x-gzip` or `*`, with a
    /// quality above 0).
    static func acceptsGzip(_ headers: HTTPHeaders) -> Bool {
        var accepted = false
        headers.forEachValue(ofLiteral: "Accept-Encoding") { value in
            var value = value
            accepted = value.withUTF8 { bytes in
                var found = false
                ASCIIText.forEachItem(of: bytes) { item in
                    let coding = ASCIIText.trimmed(
                        UnsafeBufferPointer(rebasing: item[..<(item.firstIndex(of: UInt8(ascii: ";")) ?? item.endIndex)]))
                    guard
                        ASCIIText.equalsIgnoringCase(coding, "gzip") || ASCIIText.equalsIgnoringCase(coding, "x-gzip")
                            || ASCIIText.equalsIgnoringCase(coding, "*")
                    else { return true }
                    found = ASCIIText.quality(of: item) > 0
                    return !found
                }
                return found
            }
            return !accepted
        }
        return accepted
    }

    /// Text worth compressing: JSON (and `+json`), CSV, HTML, XML, plain text.
    static func isCompressible(_ contentType: String?) -> Bool {
        guard var contentType else { return false }
        // The type of nearly every response, as `HTTPResponse(json:)` writes it.
        if contentType == HTTPResponse.jsonContentType { return true }
        return contentType.withUTF8 { bytes in
            let type = ASCIIText.trimmed(
                UnsafeBufferPointer(rebasing: bytes[..<(bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex)]))
            return ASCIIText.equalsIgnoringCase(type, "application/json") || ASCIIText.hasPrefixIgnoringCase(type, "text/")
                || ASCIIText.hasSuffixIgnoringCase(type, "+json") || ASCIIText.equalsIgnoringCase(type, "application/xml")
                || ASCIIText.hasSuffixIgnoringCase(type, "+xml")
        }
    }
}

/// Header values read as ASCII bytes.
enum ASCIIText {
    /// Calls `body` with each non-empty comma-separated item of a header
    /// value, in order, until it returns `false`; without the array that
    /// `split` would allocate for every request.
    static func forEachItem(of bytes: UnsafeBufferPointer<UInt8>, _ body: (Slice<UnsafeBufferPointer<UInt8>>) -> Bool) {
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: ",")) ?? bytes.endIndex
            if end > start, !body(bytes[start..<end]) { return }
            start = end + 1
        }
    }

    static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    private static func lower(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }

    /// Whether `bytes` spell `text` (lower-case ASCII) in any case.
    static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ text: StaticString) -> Bool {
        bytes.count == text.utf8CodeUnitCount && hasPrefixIgnoringCase(bytes, text)
    }

    static func hasPrefixIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        let start = text.utf8Start
        for index in 0..<count where lower(bytes[bytes.startIndex + index]) != start[index] { return false }
        return true
    }

    static func hasSuffixIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        return hasPrefixIgnoringCase(UnsafeBufferPointer(rebasing: bytes[(bytes.endIndex - count)...]), text)
    }

    /// The `q` parameter of an item (`gzip;q=0.5`), 1 without one.
    static func quality(of item: Slice<UnsafeBufferPointer<UInt8>>) -> Double {
        for parameter in item.split(separator: UInt8(ascii: ";")).dropFirst() {
            let text = trimmed(UnsafeBufferPointer(rebasing: parameter))
            guard hasPrefixIgnoringCase(text, "q=") else { continue }
            return Double(String(decoding: text.dropFirst(2), as: UTF8.self)) ?? 0
        }
        return 1
    }
}

/// Another body, gzip-compressed as it is read: each block the inner body
/// writes is compressed and flushed (`Z_SYNC_FLUSH`), so that the client
/// receives every block as soon as the uncompressed stream would have
/// given it; the end of the inner body ends the gzip stream.
final class GzipBody: StreamingBody {
    private let inner: any StreamingBody
    /// zlib keeps a pointer back to its stream: the stream must not move.
    private let stream: UnsafeMutablePointer<z_stream>
    private var plain: [UInt8] = []
    private var isInitialized = false
    private var isFinished = false

    func headersWhenWhole() -> [(name: String, value: String)] {
        inner.headersWhenWhole()
    }

    init(_ inner: any StreamingBody, level: Int) {
        self.inner = inner
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        isInitialized = czlib_deflate_init_gzip(stream, Int32(level)) == Z_OK
    }

    deinit {
        if isInitialized { deflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    func write(into output: inout [UInt8]) throws -> Bool {
        guard !isFinished else { return false }
        guard isInitialized else { throw CompressionError(code: Z_MEM_ERROR) }
        plain.removeAll(keepingCapacity: true)
        let more = try inner.write(into: &plain)
        try deflate(plain, flush: more ? Z_SYNC_FLUSH : Z_FINISH, into: &output)
        if !more { isFinished = true }
        return more
    }

    func close() {
        isFinished = true
        inner.close()
    }

    /// `bytes` compressed whole.
    static func compress(_ bytes: [UInt8], level: Int) throws -> [UInt8] {
        let body = GzipBody(BytesBody(), level: level)
        guard body.isInitialized else { throw CompressionError(code: Z_MEM_ERROR) }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count / 4 + 64)
        try body.deflate(bytes, flush: Z_FINISH, into: &output)
        return output
    }

    /// Compresses `input`, appending to `output` until zlib has written
    /// everything the flush asks for.
    private func deflate(_ input: [UInt8], flush: Int32, into output: inout [UInt8]) throws {
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        try input.withUnsafeBufferPointer { input in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.pointee.avail_in = UInt32(input.count)
            while true {
                let produced = try chunk.withUnsafeMutableBufferPointer { chunk -> Int in
                    stream.pointee.next_out = chunk.baseAddress
                    stream.pointee.avail_out = UInt32(chunk.count)
                    let status = CZlib.deflate(stream, flush)
                    guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
                        throw CompressionError(code: status)
                    }
                    return chunk.count - Int(stream.pointee.avail_out)
                }
                output.append(contentsOf: chunk[..<produced])
                // Room left in the chunk: zlib has written all it had.
                if stream.pointee.avail_out > 0 { break }
            }
            stream.pointee.next_in = nil
        }
    }

    /// A body with nothing to write, for a stream used once on bytes.
    private final class BytesBody: StreamingBody {
        func write(into output: inout [UInt8]) throws -> Bool { false }
        func close() {}
    }
}

/// zlib failed (out of memory, or a stream error).
struct CompressionError: Error, CustomStringConvertible {
    let code: Int32
    var description: String { "zlib failed with code \(code)" }
}
