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
/// and has room, and copies through the collection machinery: about a
/// hundred instructions for a few bytes. Rows of a streamed list are
/// written here instead, a dozen appends each, and the block of rows is
/// appended to the response's array once (BENCHMARKS.md, "Second wave: the
/// event loops, rows from the socket").
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

    @inlinable
    public func append(raw bytes: UnsafeRawBufferPointer) {
        let added = bytes.count
        guard added > 0 else { return }
        if capacity - length < added { grow(toHold: added) }
        UnsafeMutableRawPointer(start + length).copyMemory(from: bytes.baseAddress!, byteCount: added)
        length += added
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
