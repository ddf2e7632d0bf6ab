internal import CZlib
import JSONStreaming

/// gzip for responses whose client accepts it (`Accept-Encoding: gzip`):
/// textual bodies (JSON, problem documents, CSV, HTML) of at least
/// `minimumSize` bytes, and every textual stream, compressed block by block
/// as the client reads it, so that a streamed list keeps its constant
/// memory and its back-pressure. Such responses say `Vary: Accept-Encoding`
/// whether compressed or not, for caches.
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
        precondition((1...9).contains(level), "zlib's levels are 1 to 9")
        self.minimumSize = max(0, minimumSize)
        self.level = level
    }

    /// `response` as sent to a request with `requestHeaders`: compressed
    /// when it should be, with `Vary` when it could be. A response that
    /// already names its encoding is left alone.
    func apply(to response: HTTPResponse, requestHeaders: HTTPHeaders) -> HTTPResponse {
        guard response.headers["Content-Encoding"] == nil, Self.isCompressible(response.headers["Content-Type"]) else {
            return response
        }
        var response = response
        response.headers.add("Vary", "Accept-Encoding")
        guard Self.acceptsGzip(requestHeaders) else { return response }
        switch response.body {
        case .bytes(let bytes) where bytes.count >= minimumSize:
            guard let compressed = try? GzipBody.compress(bytes, level: level) else { return response }
            response.body = .bytes(compressed)
        case .stream(let body):
            response.body = .stream(GzipBody(body, level: level))
        default:
            return response
        }
        response.headers["Content-Encoding"] = "gzip"
        return response
    }

    /// Whether `Accept-Encoding` takes gzip (`gzip`, `x-gzip` or `*`, with a
    /// quality above 0).
    static func acceptsGzip(_ headers: HTTPHeaders) -> Bool {
        for field in headers.values(for: "Accept-Encoding") {
            for item in field.split(separator: ",") {
                let parts = item.split(separator: ";")
                let coding = parts.first.map { $0.filter { $0 != " " && $0 != "\t" }.lowercased() } ?? ""
                guard coding == "gzip" || coding == "x-gzip" || coding == "*" else { continue }
                let quality = parts.dropFirst().lazy
                    .map { $0.filter { $0 != " " && $0 != "\t" }.lowercased() }
                    .first { $0.hasPrefix("q=") }
                    .flatMap { Double($0.dropFirst(2)) } ?? 1
                if quality > 0 { return true }
            }
        }
        return false
    }

    /// Text worth compressing: JSON (and `+json`), CSV, HTML, XML, plain text.
    static func isCompressible(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let type = contentType.prefix { $0 != ";" }.filter { $0 != " " }.lowercased()
        return type.hasPrefix("text/") || type == "application/json" || type.hasSuffix("+json")
            || type == "application/xml" || type.hasSuffix("+xml")
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
