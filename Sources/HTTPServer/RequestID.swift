#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The identifier of one request, sent back in `X-Request-Id`, written in
/// the access log line and in every problem document (`requestId`), so
/// that a client's report, a proxy's log and the server's log can be
/// matched.
///
/// A client's (or a proxy's) `X-Request-Id` is kept when it is 1 to 128
/// characters of `A–Z a–z 0–9 . _ - : @ + =` (a UUID, a ULID, a trace id
/// all fit); anything else (empty, longer, a space, a quote, a control
/// character) is replaced by a generated id rather than refused, so that a
/// faulty header never costs a client its answer and never reaches a log
/// line or a JSON document unescaped.
///
/// Generated ids are a random 32-bit prefix, drawn once per process, and a
/// counter: `5f0c9a1e-1b` (cheap, and unique across a fleet's processes
/// short of a 1-in-4-billion prefix collision).
///
/// ```swift
/// RequestID.accepting("abc-123")   // "abc-123"
/// RequestID.accepting("a b")       // nil: generate one instead
/// ```
enum RequestID {
    /// The longest id taken from a request.
    static let maximumLength = 128

    /// `value` if it is a valid id as sent, else `nil`.
    static func accepting(_ value: String?) -> String? {
        guard let value, !value.isEmpty, value.utf8.count <= maximumLength,
            value.utf8.allSatisfy(isAllowed)
        else { return nil }
        return value
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "+"),
            UInt8(ascii: "="):
            true
        default:
            false
        }
    }

    private static let prefix = UInt32.random(in: .min ... .max)
    private static let counter = Atomic<UInt64>(0)

    /// A new id. Short enough (up to 15 bytes for the first 16 million
    /// requests) to stay a small string, held inline without an allocation.
    static func generate() -> String {
        let number = counter.add(1, ordering: .relaxed).newValue
        var digits = 1
        while digits < 16, number >> (4 * UInt64(digits)) != 0 { digits += 1 }
        return String(unsafeUninitializedCapacity: 9 + digits) { buffer in
            writeHex(UInt64(prefix), digits: 8, to: buffer, at: 0)
            buffer[8] = UInt8(ascii: "-")
            writeHex(number, digits: digits, to: buffer, at: 9)
            return 9 + digits
        }
    }

    private static func writeHex(_ value: UInt64, digits: Int, to buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int) {
        let hex: StaticString = "0123456789abcdef"
        for position in 0..<digits {
            let nibble = Int((value >> (4 * UInt64(digits - 1 - position))) & 0xF)
            buffer[start + position] = hex.utf8Start[nibble]
        }
    }
}
