/// Appends JSON tokens to a byte buffer, with no intermediate strings.
///
/// ```swift
/// var out: [UInt8] = []
/// JSONWriter.appendString("tab\there", to: &out)   // "tab\there"
/// JSONWriter.appendInteger(10004, to: &out)
/// ```
///
/// Strings are escaped as RFC 8259 requires; invalid UTF-8 input is replaced
/// by U+FFFD so the output is always valid JSON.
public enum JSONWriter {
    // MARK: - Strings

    /// Appends `string` as a quoted, escaped JSON string.
    @inlinable
    public static func appendString<Output: JSONOutput>(_ string: String, to output: inout Output) {
        var string = string
        string.withUTF8 { appendString(utf8: UnsafeRawBufferPointer($0), to: &output) }
    }

    /// Appends raw bytes, taken as UTF-8, as a quoted, escaped JSON string.
    /// Bytes that are not valid UTF-8 become U+FFFD.
    @inlinable
    public static func appendString<Output: JSONOutput>(utf8 bytes: UnsafeRawBufferPointer, to output: inout Output) {
        output.append(UInt8(ascii: "\""))
        appendEscaped(utf8: bytes, to: &output)
        output.append(UInt8(ascii: "\""))
    }

    /// Appends the escaped contents of a JSON string, without the quotes.
    @inlinable
    public static func appendEscaped<Output: JSONOutput>(utf8 bytes: UnsafeRawBufferPointer, to output: inout Output) {
        let count = bytes.count
        var runStart = 0
        var index = 0
        while index < count {
            // Eight plain bytes at a time (most text is plain ASCII), and the
            // last few in one word too: a short value (a name) is looked at
            // in one or two steps, not byte by byte.
            while index + 8 <= count, isPlainASCII(bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)) {
                index += 8
            }
            if index < count, count - index < 8, isPlainASCII(lastBytes(of: bytes)) {
                index = count
            }
            guard index < count else { break }
            let byte = bytes[index]
            if byte >= 0x20 && byte != 0x22 && byte != 0x5C && byte < 0x80 {
                index += 1
                continue
            }
            if byte >= 0x80 {
                let length = validUTF8SequenceLength(bytes, at: index)
                if length > 0 {
                    index += length
                    continue
                }
            }
            if runStart < index {
                output.append(raw: UnsafeRawBufferPointer(rebasing: bytes[runStart..<index]))
            }
            if byte >= 0x80 {
                output.append(0xEF)
                output.append(0xBF)
                output.append(0xBD)
            } else {
                appendEscape(for: byte, to: &output)
            }
            index += 1
            runStart = index
        }
        if runStart < count {
            output.append(raw: UnsafeRawBufferPointer(rebasing: bytes[runStart..<count]))
        }
    }

    /// Appends `bytes` as they are, in one copy.
    ///
    /// `Array.append(contentsOf:)` with an `UnsafeRawBufferPointer` copies
    /// through the sequence's iterator, a byte at a time; with the same
    /// bytes typed as `UInt8` it copies them at once. Every key and value
    /// of every row written passes here.
    ///
    /// ```swift
    /// JSONWriter.appendRaw(UnsafeRawBufferPointer(start: text, count: length), to: &output)
    /// ```
    @inlinable @inline(__always)
    public static func appendRaw<Output: JSONOutput>(_ bytes: UnsafeRawBufferPointer, to output: inout Output) {
        output.append(raw: bytes)
    }

    /// Whether none of the eight bytes needs escaping or UTF-8 checking:
    /// none is below 0x20, `"`, `\\` or 0x80 and above.
    @inlinable @inline(__always)
    static func isPlainASCII(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        // A byte's high bit in `hasZero(x)` is set when that byte of x is 0
        // (exactly so for the lowest such byte, and no false alarm when none is).
        func hasZero(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
        let control = (word &- 0x2020_2020_2020_2020) & ~word & highs  // a byte < 0x20 (for bytes < 0x80)
        let quote = hasZero(word ^ 0x2222_2222_2222_2222)
        let backslash = hasZero(word ^ 0x5C5C_5C5C_5C5C_5C5C)
        return (word & highs) | control | quote | backslash == 0
    }

    /// A word holding the last bytes of `bytes` (not empty), up to eight,
    /// and otherwise plain ones (`A`), read without a call to `memcpy`: the
    /// last eight bytes when there are eight, else two overlapping halves,
    /// else the one to three bytes. For the fewer than eight left to look
    /// at: the word may also hold bytes before them, which are plain when
    /// they were skipped as such; one that is not (an escape, a multi-byte
    /// character) only sends the caller the slow way.
    @inlinable @inline(__always)
    static func lastBytes(of bytes: UnsafeRawBufferPointer) -> UInt64 {
        let count = bytes.count
        let base = bytes.baseAddress!
        if count >= 8 { return base.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self) }
        if count >= 4 {
            let first = UInt64(base.loadUnaligned(as: UInt32.self))
            let last = UInt64(base.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self))
            return first | last << 32
        }
        // One to three bytes: the first, the middle and the last, in A's.
        let first = UInt64(base.load(as: UInt8.self))
        let middle = UInt64(base.load(fromByteOffset: count / 2, as: UInt8.self))
        let last = UInt64(base.load(fromByteOffset: count - 1, as: UInt8.self))
        return 0x4141_4141_4100_0000 | first | middle << 8 | last << 16
    }

    /// Appends the escape of `byte` (a quote, a backslash or a control character).
    @inlinable
    static func appendEscape<Output: JSONOutput>(for byte: UInt8, to output: inout Output) {
        output.append(0x5C)  // \
        switch byte {
        case 0x22: output.append(0x22)  // \"
        case 0x5C: output.append(0x5C)  // \\
        case 0x0A: output.append(0x6E)  // \n
        case 0x0D: output.append(0x72)  // \r
        case 0x09: output.append(0x74)  // \t
        case 0x08: output.append(0x62)  // \b
        case 0x0C: output.append(0x66)  // \f
        default:
            output.append(0x75)  // u00, then two hexadecimal digits
            output.append(0x30)
            output.append(0x30)
            output.append(hexDigit(byte >> 4))
            output.append(hexDigit(byte & 0x0F))
        }
    }

    @inlinable
    static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// Length of the well-formed UTF-8 sequence starting at `index`, or 0 if
    /// it is ill-formed (overlong, surrogate, out of range, truncated).
    @usableFromInline
    static func validUTF8SequenceLength(_ bytes: UnsafeRawBufferPointer, at index: Int) -> Int {
        let count = bytes.count
        let lead = bytes[index]
        func continuation(_ offset: Int, _ low: UInt8 = 0x80, _ high: UInt8 = 0xBF) -> Bool {
            guard index + offset < count else { return false }
            let byte = bytes[index + offset]
            return byte >= low && byte <= high
        }
        switch lead {
        case 0xC2...0xDF:
            return continuation(1) ? 2 : 0
        case 0xE0:
            return continuation(1, 0xA0) && continuation(2) ? 3 : 0
        case 0xE1...0xEC, 0xEE...0xEF:
            return continuation(1) && continuation(2) ? 3 : 0
        case 0xED:
            return continuation(1, 0x80, 0x9F) && continuation(2) ? 3 : 0
        case 0xF0:
            return continuation(1, 0x90) && continuation(2) && continuation(3) ? 4 : 0
        case 0xF1...0xF3:
            return continuation(1) && continuation(2) && continuation(3) ? 4 : 0
        case 0xF4:
            return continuation(1, 0x80, 0x8F) && continuation(2) && continuation(3) ? 4 : 0
        default:
            return 0
        }
    }

    // MARK: - Scalars

    /// Appends `true` or `false`.
    @inlinable
    public static func appendBool<Output: JSONOutput>(_ value: Bool, to output: inout Output) {
        appendLiteral(value ? "true" : "false", to: &output)
    }

    @inlinable
    static func appendLiteral<Output: JSONOutput>(_ literal: StaticString, to output: inout Output) {
        output.append(raw: UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Appends `null`.
    @inlinable
    public static func appendNull<Output: JSONOutput>(to output: inout Output) {
        appendLiteral("null", to: &output)
    }

    /// Appends an integer in decimal.
    @inlinable
    public static func appendInteger<T: BinaryInteger, Output: JSONOutput>(_ value: T, to output: inout Output) {
        if let small = Int64(exactly: value) {
            appendInt64(small, to: &output)
        } else {
            var text = String(value)
            text.withUTF8 { output.append(raw: UnsafeRawBufferPointer($0)) }
        }
    }

    @inlinable
    static func appendInt64<Output: JSONOutput>(_ value: Int64, to output: inout Output) {
        if value == 0 {
            output.append(UInt8(ascii: "0"))
            return
        }
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var position = 20
            while magnitude > 0 {
                position -= 1
                digits[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            }
            if value < 0 { output.append(UInt8(ascii: "-")) }
            output.append(raw: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: digits[position..<20])))
        }
    }

    /// Appends a number; NaN and infinities, which JSON cannot express,
    /// become `null`. Integral values print without a fraction (`2`, not `2.0`).
    @inlinable
    public static func appendDouble<Output: JSONOutput>(_ value: Double, to output: inout Output) {
        guard value.isFinite else {
            appendNull(to: &output)
            return
        }
        if value == value.rounded(), let integral = Int64(exactly: value) {
            appendInt64(integral, to: &output)
        } else {
            var text = value.description
            text.withUTF8 { output.append(raw: UnsafeRawBufferPointer($0)) }
        }
    }
}
