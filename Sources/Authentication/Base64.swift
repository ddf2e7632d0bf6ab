/// Base64 without padding in the three alphabets authentication meets:
/// standard (`+/`, HTTP basic credentials), URL-safe (`-_`, JSON Web
/// Tokens) and passlib's (`./`, password hashes).
enum Base64 {
    enum Alphabet {
        case standard
        case url
        case passlib

        var extra: (UInt8, UInt8) {
            switch self {
            case .standard: (UInt8(ascii: "+"), UInt8(ascii: "/"))
            case .url: (UInt8(ascii: "-"), UInt8(ascii: "_"))
            case .passlib: (UInt8(ascii: "."), UInt8(ascii: "/"))
            }
        }
    }

    /// The bytes of `text`, with or without `=` padding; `nil` when it is
    /// not base64 in that alphabet. `canonical` accepts only the one
    /// spelling ``encode(_:_:)`` writes: no padding, and the unused low bits
    /// of the last character zero (RFC 4648, section 3.5), so that no two
    /// texts decode to the same bytes.
    ///
    /// ```swift
    /// Base64.decode(Array("YQ".utf8), .url, canonical: true)   // [0x61]
    /// Base64.decode(Array("YR".utf8), .url, canonical: true)   // nil: the same byte, spelt otherwise
    /// ```
    static func decode(_ text: some Collection<UInt8>, _ alphabet: Alphabet, canonical: Bool = false) -> [UInt8]? {
        let (plus, slash) = alphabet.extra
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        var padding = 0
        for character in text {
            let value: UInt32
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(character - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(character - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(character - UInt8(ascii: "0")) + 52
            case plus: value = 62
            case slash: value = 63
            case UInt8(ascii: "=") where !canonical:
                padding += 1
                continue
            default: return nil
            }
            guard padding == 0 else { return nil }
            accumulator = accumulator << 6 | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // A lone sixth of a byte left over is no encoding of whole bytes.
        guard bits < 6, padding <= 2 else { return nil }
        // The bits left over carry no byte: one spelling has them zero.
        guard !canonical || accumulator & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return bytes
    }

    /// `bytes` in `alphabet`, without padding.
    static func encode(_ bytes: [UInt8], _ alphabet: Alphabet) -> String {
        let (plus, slash) = alphabet.extra
        let table = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8) + [plus, slash]
        var text: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var value: UInt32 = 0
            for byte in chunk { value = value << 8 | UInt32(byte) }
            value <<= UInt32(8 * (3 - chunk.count))
            for position in 0...chunk.count {
                text.append(table[Int((value >> UInt32(18 - 6 * position)) & 63)])
            }
            index += 3
        }
        return String(decoding: text, as: UTF8.self)
    }
}
