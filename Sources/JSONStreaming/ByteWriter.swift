/// Where JSON is written: a byte array, or a ``ByteWriter``. The writers of
/// this module (``JSONWriter``) and of the layers above are generic over it,
/// and inlinable, so that each is compiled for the output it writes to.
///
/// ```swift
/// func appendPair<Output: JSONOutput>(to output: inout Output) {
///     output.append(UInt8(ascii: "["))
///     JSONWriter.appendInteger(1, to: &output)
///     output.append(UInt8(ascii: "]"))
/// }
/// ```
public protocol JSONOutput {
    /// How many bytes have been written.
    var count: Int { get }
    /// Appends one byte.
    mutating func append(_ byte: UInt8)
    /// Appends `bytes` as they are.
    mutating func append(raw bytes: UnsafeRawBufferPointer)
    /// Drops what was written after the first `count` bytes (a value that
    /// turned out not to parse, written again another way).
    mutating func truncate(to count: Int)
}

extension Array: JSONOutput where Element == UInt8 {
    /// Appends `bytes` in one copy: `append(contentsOf:)` with the raw buffer
    /// itself copies through its iterator, a byte at a time.
    @inlinable
    public mutating func append(raw bytes: UnsafeRawBufferPointer) {
        append(contentsOf: bytes.assumingMemoryBound(to: UInt8.self))
    }

    @inlinable
    public mutating func truncate(to count: Int) {
        removeSubrange(count...)
    }
}

/// Bytes written through a pointer into memory of its own, which grows as
/// needed, then moved to a byte array in one copy (``flush(into:)``).
///
/// An append to an `[UInt8]` checks that the array is uniquely referenced
/// and has room, and copies through the collection machinery, which is
/// most of the cost of appending a few bytes. Rows of a streamed list are
/// written here instead, a dozen appends each, and the block of rows is
/// appended to the response's array once.
///
/// ```swift
/// let writer = ByteWriter()
/// JSONWriter.appendString("a", to: &writer)
/// writer.flush(into: &body)   // body gains "a" (with its quotes); the writer is empty
/// ```
///
/// A class, so that the memory has one owner; used by one thread at a time.
public final class ByteWriter: JSONOutput {
    @usableFromInline @exclusivity(unchecked) var start: UnsafeMutablePointer<UInt8>
    @usableFromInline @exclusivity(unchecked) var capacity: Int
    @usableFromInline @exclusivity(unchecked) var length = 0

    /// How many bytes have been written.
    public var count: Int { length }

    /// A writer with room for `capacity` bytes before it first grows.
    public init(capacity: Int = 16 << 10) {
        self.capacity = max(capacity, 16)
        start = .allocate(capacity: self.capacity)
    }

    deinit {
        start.deallocate()
    }

    @inlinable
    public func append(_ byte: UInt8) {
        if length == capacity { grow(toHold: 1) }
        start[length] = byte
        length += 1
    }

    @inlinable @inline(__always)
    public func append(raw bytes: UnsafeRawBufferPointer) {
        let added = bytes.count
        // Not empty past the guard: `bytes` has a base address.
        guard added > 0 else { return }
        if capacity - length < added { grow(toHold: added) }
        Self.copy(added, from: bytes.baseAddress!, to: UnsafeMutableRawPointer(start + length))
        length += added
    }

    /// Copies `count` bytes. Most appends are short (a key, a number, a
    /// name): up to 32 bytes are moved in overlapping loads and stores,
    /// inline, where a call to `memcpy` costs several times as much; longer
    /// runs go to `memcpy`.
    @inlinable @inline(__always)
    static func copy(_ count: Int, from source: UnsafeRawPointer, to destination: UnsafeMutableRawPointer) {
        if count >= 8 {
            guard count <= 32 else { return destination.copyMemory(from: source, byteCount: count) }
            // The first and last 8 bytes, and over 16 the first and last 16.
            let first = source.loadUnaligned(as: UInt64.self)
            let last = source.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            if count > 16 {
                let second = source.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                let penultimate = source.loadUnaligned(fromByteOffset: count - 16, as: UInt64.self)
                destination.storeBytes(of: second, toByteOffset: 8, as: UInt64.self)
                destination.storeBytes(of: penultimate, toByteOffset: count - 16, as: UInt64.self)
            }
            destination.storeBytes(of: first, as: UInt64.self)
            destination.storeBytes(of: last, toByteOffset: count - 8, as: UInt64.self)
        } else if count >= 4 {
            let first = source.loadUnaligned(as: UInt32.self)
            let last = source.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
            destination.storeBytes(of: first, as: UInt32.self)
            destination.storeBytes(of: last, toByteOffset: count - 4, as: UInt32.self)
        } else {
            for offset in 0..<count {
                destination.storeBytes(of: source.load(fromByteOffset: offset, as: UInt8.self), toByteOffset: offset, as: UInt8.self)
            }
        }
    }

    /// Appends an ASCII literal.
    @inlinable
    public func append(_ literal: StaticString) {
        append(raw: UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// The bytes written.
    public var bytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: start, count: length)
    }

    /// Appends what was written to `output` and empties the writer (its
    /// memory stays for the next bytes).
    public func flush(into output: inout [UInt8]) {
        guard length > 0 else { return }
        output.append(contentsOf: UnsafeBufferPointer(start: start, count: length))
        length = 0
    }

    /// Forgets what was written; the memory stays.
    public func removeAll() {
        length = 0
    }

    public func truncate(to count: Int) {
        length = min(max(count, 0), length)
    }

    @usableFromInline
    func grow(toHold added: Int) {
        var newCapacity = capacity * 2
        while newCapacity - length < added { newCapacity *= 2 }
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        grown.initialize(from: start, count: length)
        start.deallocate()
        start = grown
        capacity = newCapacity
    }
}

/// A writer belongs to one thread at a time.
@available(*, unavailable)
extension ByteWriter: Sendable {}
