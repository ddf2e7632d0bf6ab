#if canImport(Glibc)
import Glibc
#endif
import Locking

/// A request body past ``HTTPServer/Configuration/bodyMemoryLimit``, held
/// in a temporary file rather than in memory: the server's memory does not
/// grow with a body, however large its limit lets it be. The file has no
/// name (unlinked at once), so it is gone when the request is, however it
/// ends.
///
/// A handler that reads ``HTTPRequest/body`` gets the whole body as usual
/// (read back from the file); one that can take it in pieces reads them
/// with ``forEachPiece(size:_:)`` and keeps its memory flat.
///
/// ```swift
/// if let spooled = request.spooledBody {
///     try spooled.forEachPiece { piece in checksum.update(piece) }
/// }
/// ```
public final class SpooledBody: @unchecked Sendable {
    // The descriptor is written only by the loop receiving the body, before
    // any handler sees the request; it is read-only from then on.
    private let descriptor: Int32
    /// The body's length in bytes.
    public private(set) var size = 0

    /// A new empty file under `$TMPDIR` (else `/tmp`), or `nil` (with `errno`) when none can be made.
    init?() {
        let directory = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(directory)/http-body-XXXXXX".utf8CString)
        let descriptor = mkstemp(&template)
        guard descriptor >= 0 else { return nil }
        unlink(template)
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Appends `bytes`; `false` (with `errno`) when the file cannot take them (a full disk).
    func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var written = 0
        while written < bytes.count {
            let result = pwrite(descriptor, bytes.baseAddress! + written, bytes.count - written, off_t(size + written))
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { return false }
            written += result
        }
        size += written
        return true
    }

    /// Calls `body` with the body's bytes in order, `size` at a time (the
    /// last piece shorter); a read error of the file throws.
    public func forEachPiece(size pieceSize: Int = 64 << 10, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        var buffer = [UInt8](repeating: 0, count: pieceSize)
        var offset = 0
        while offset < size {
            let count = try buffer.withUnsafeMutableBytes { buffer in
                while true {
                    let result = pread(descriptor, buffer.baseAddress!, min(pieceSize, size - offset), off_t(offset))
                    if result < 0, errno == EINTR { continue }
                    guard result > 0 else { throw SpooledBodyError(errno: result < 0 ? errno : EIO) }
                    return result
                }
            }
            try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            offset += count
        }
    }

    /// The whole body, in memory: read from the file once, on first use,
    /// and kept with the request from then on (a handler that reads the
    /// body whole holds it as it would hold a body never spooled).
    public func contents() throws -> [UInt8] {
        try whole.withLock { whole in
            if let whole { return whole }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(size)
            try forEachPiece(size: 1 << 20) { bytes.append(contentsOf: $0) }
            whole = bytes
            return bytes
        }
    }

    private let whole = Locked<[UInt8]?>(nil)
}

/// A spooled body's file could not be read.
public struct SpooledBodyError: Error, CustomStringConvertible {
    public let errno: Int32
    public var description: String { "the request body's temporary file cannot be read: errno \(errno)" }
}
