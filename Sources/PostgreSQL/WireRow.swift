internal import CLibPQ
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Rows

/// One row read from the socket: where its values lie in the received bytes.
package struct WireRow {
    /// The values' places, and the buffer they lie in. A class, so that the
    /// reader can tell whether a row it handed out is still held
    /// (`isKnownUniquelyReferenced`) before it reads the next into it.
    ///
    /// Every value of every row streamed passes here: the places are kept
    /// in memory of its own (no array's checks and copies), and the
    /// properties are not checked for exclusivity at run time (one thread
    /// reads the row it was handed, after the reader wrote it).
    final class Frame {
        @exclusivity(unchecked) var buffer: WireBuffer
        /// Each value's offset in the buffer (-1 for NULL) and its length.
        @exclusivity(unchecked) private var offsets: UnsafeMutablePointer<Int>
        @exclusivity(unchecked) private var lengths: UnsafeMutablePointer<Int>
        @exclusivity(unchecked) private var capacity = 16
        @exclusivity(unchecked) private(set) var count = 0

        init(buffer: WireBuffer) {
            self.buffer = buffer
            offsets = .allocate(capacity: capacity)
            lengths = .allocate(capacity: capacity)
        }

        deinit {
            offsets.deallocate()
            lengths.deallocate()
        }

        /// Reads the values of a `DataRow` message's body, which lies in `buffer`.
        func read(_ body: UnsafeRawBufferPointer) throws {
            let end = body.count
            guard end >= 2 else { throw Self.malformed }
            let columns = Int(UInt16(bigEndian: body.loadUnaligned(as: UInt16.self)))
            if columns > capacity {
                offsets.deallocate()
                lengths.deallocate()
                capacity = columns
                offsets = .allocate(capacity: capacity)
                lengths = .allocate(capacity: capacity)
            }
            // `body` holds at least the two bytes read above: it has a base address.
            let base = body.baseAddress! - UnsafeRawPointer(buffer.storage)
            var offset = 2
            for column in 0..<columns {
                guard offset + 4 <= end else { throw Self.malformed }
                let length = Int(Int32(bigEndian: body.loadUnaligned(fromByteOffset: offset, as: Int32.self)))
                offset += 4
                if length < 0 {
                    offsets[column] = -1
                    lengths[column] = 0
                    continue
                }
                guard offset + length <= end else { throw Self.malformed }
                offsets[column] = base + offset
                lengths[column] = length
                offset += length
            }
            count = columns
        }

        private static var malformed: DatabaseError {
            DatabaseError(code: .protocolViolation, message: "a malformed row from the server")
        }

        func bytes(_ column: Int) -> UnsafeRawBufferPointer? {
            guard column >= 0, column < count else { return nil }
            let offset = offsets[column]
            guard offset >= 0 else { return nil }
            return UnsafeRawBufferPointer(start: buffer.storage + offset, count: lengths[column])
        }
    }

    let frame: Frame

    var columnCount: Int { frame.count }

    /// The value's text bytes (valid while the row is held), `nil` for NULL.
    package func bytes(_ column: Int) -> UnsafeRawBufferPointer? {
        frame.bytes(column)
    }
}

/// Received bytes: a block of memory of a fixed capacity, freed with the
/// object. Rows read in place point into it.
final class WireBuffer {
    let storage: UnsafeMutableRawPointer
    let capacity: Int
    var count = 0
    /// A row handed out reads from this buffer: nothing may move in it.
    var isPinned = false

    init(capacity: Int) {
        self.capacity = capacity
        storage = .allocate(byteCount: capacity, alignment: 8)
    }

    deinit {
        storage.deallocate()
    }

    func byte(at offset: Int) -> UInt8 {
        storage.load(fromByteOffset: offset, as: UInt8.self)
    }

    func int32(at offset: Int) -> Int32 {
        Int32(bigEndian: storage.loadUnaligned(fromByteOffset: offset, as: Int32.self))
    }

    /// Copies `count` bytes of `other` from `offset` on to the end of this one.
    func append(from other: WireBuffer, offset: Int, count: Int) {
        (storage + self.count).copyMemory(from: other.storage + offset, byteCount: count)
        self.count += count
    }

    /// Drops the bytes before `offset`, moving the rest to the front.
    func moveToFront(from offset: Int) {
        let remaining = count - offset
        if remaining > 0 { storage.copyMemory(from: storage + offset, byteCount: remaining) }
        count = remaining
    }
}
