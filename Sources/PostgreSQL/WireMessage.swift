internal import CLibPQ
#if canImport(Glibc)
import Glibc
#endif

// MARK: - The protocol's encoding

/// Reads the fields of one message's body, checking each against its end.
struct WireBodyReader {
    private let body: UnsafeRawBufferPointer
    private(set) var offset = 0

    init(_ body: UnsafeRawBufferPointer) {
        self.body = body
    }

    private var malformed: DatabaseError {
        DatabaseError(code: .protocolViolation, message: "a malformed message from the server")
    }

    mutating func byte() throws -> UInt8 {
        guard offset < body.count else { throw malformed }
        defer { offset += 1 }
        return body[offset]
    }

    mutating func int16() throws -> Int16 {
        guard offset + 2 <= body.count else { throw malformed }
        defer { offset += 2 }
        return Int16(bigEndian: body.loadUnaligned(fromByteOffset: offset, as: Int16.self))
    }

    mutating func int32() throws -> Int32 {
        guard offset + 4 <= body.count else { throw malformed }
        defer { offset += 4 }
        return Int32(bigEndian: body.loadUnaligned(fromByteOffset: offset, as: Int32.self))
    }

    mutating func skip(_ count: Int) throws {
        guard offset + count <= body.count else { throw malformed }
        offset += count
    }

    mutating func cString() throws -> String {
        guard let end = body[offset...].firstIndex(of: 0) else { throw malformed }
        defer { offset = end + 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: body[offset..<end]), as: UTF8.self)
    }
}

/// Frontend messages, appended one after the other to be sent at once.
struct WireMessage {
    var bytes: [UInt8] = []
    private var start = 0

    init() {
        bytes.reserveCapacity(256)
    }

    /// Starts a message of `type`; its length is filled in by ``end()``.
    mutating func begin(_ type: Unicode.Scalar) {
        bytes.append(UInt8(ascii: type))
        start = bytes.count
        bytes.append(contentsOf: [0, 0, 0, 0] as [UInt8])
    }

    mutating func end() {
        let length = UInt32(bytes.count - start).bigEndian
        withUnsafeBytes(of: length) { bytes.replaceSubrange(start..<(start + 4), with: $0) }
    }

    mutating func appendInt16(_ value: Int16) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func appendInt32(_ value: Int32) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func appendCString(_ text: String) {
        bytes.append(contentsOf: text.utf8)
        bytes.append(0)
    }
}
