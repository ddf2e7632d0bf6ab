import JSONStreaming
import PostgreSQL

// MARK: - bytea

extension PostgresJSON {
    /// `bytea` as a base64 string (RFC 4648, padded): `\x010203` → `"AQID"`.
    /// Reads the hex output format and the older escape format
    /// (`\001\\abc`); other text is written as a plain string.
    static func appendBase64<Output: JSONOutput>(bytea value: UnsafeRawBufferPointer, to output: inout Output) {
        let start = output.count
        output.append(UInt8(ascii: "\""))
        var encoder = Base64Encoder()
        var index = 0
        var isValid = true
        if value.count >= 2 && value[0] == UInt8(ascii: "\\") && value[1] == UInt8(ascii: "x") {
            index = 2
            isValid = (value.count - index) % 2 == 0
            while isValid && index < value.count {
                guard let high = hexValue(value[index]), let low = hexValue(value[index + 1]) else {
                    isValid = false
                    break
                }
                encoder.append(high << 4 | low, to: &output)
                index += 2
            }
        } else {
            while isValid && index < value.count {
                let byte = value[index]
                if byte != UInt8(ascii: "\\") {
                    encoder.append(byte, to: &output)
                    index += 1
                } else if index + 1 < value.count && value[index + 1] == UInt8(ascii: "\\") {
                    encoder.append(byte, to: &output)
                    index += 2
                } else if index + 3 < value.count,
                    let octal = octalValue(value[index + 1], value[index + 2], value[index + 3])
                {
                    encoder.append(octal, to: &output)
                    index += 4
                } else {
                    isValid = false
                }
            }
        }
        guard isValid else {
            output.truncate(to: start)
            JSONWriter.appendString(utf8: value, to: &output)
            return
        }
        encoder.finish(to: &output)
        output.append(UInt8(ascii: "\""))
    }

    static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    static func octalValue(_ first: UInt8, _ second: UInt8, _ third: UInt8) -> UInt8? {
        let zero = UInt8(ascii: "0")
        guard (zero...zero + 3).contains(first), (zero...zero + 7).contains(second), (zero...zero + 7).contains(third) else {
            return nil
        }
        return (first - zero) << 6 | (second - zero) << 3 | (third - zero)
    }
}

/// Base64 (RFC 4648 alphabet, with padding), written as the bytes arrive.
struct Base64Encoder {
    private var pending: UInt32 = 0
    private var pendingCount = 0

    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    mutating func append<Output: JSONOutput>(_ byte: UInt8, to output: inout Output) {
        pending = pending << 8 | UInt32(byte)
        pendingCount += 1
        if pendingCount == 3 {
            writeGroup(characters: 4, to: &output)
            pending = 0
            pendingCount = 0
        }
    }

    mutating func finish<Output: JSONOutput>(to output: inout Output) {
        guard pendingCount > 0 else { return }
        let characters = pendingCount + 1
        pending <<= UInt32(8 * (3 - pendingCount))
        writeGroup(characters: characters, to: &output)
        for _ in characters..<4 { output.append(UInt8(ascii: "=")) }
        pending = 0
        pendingCount = 0
    }

    private func writeGroup<Output: JSONOutput>(characters: Int, to output: inout Output) {
        for position in 0..<characters {
            let shift = UInt32(18 - 6 * position)
            output.append(Self.alphabet[Int((pending >> shift) & 0x3F)])
        }
    }
}

extension Base64Encoder {
    /// A filter's value for a `bytea` column as PostgreSQL reads it: the
    /// bytes of base64 text (as the server writes them, RFC 4648, padded)
    /// in the hex format, `"AP8="` → `\x00ff`; `nil` for text that is not
    /// base64 (`\x00ff` itself), which PostgreSQL reads as it is.
    static func byteaHex(fromBase64 text: String) -> String? {
        let characters = Array(text.utf8)
        guard characters.count % 4 == 0 else { return nil }
        let hex = Array("0123456789abcdef".utf8)
        var output: [UInt8] = Array("\\x".utf8)
        output.reserveCapacity(2 + characters.count / 2)
        var index = 0
        while index < characters.count {
            var group: UInt32 = 0
            var padding = 0
            for offset in 0..<4 {
                let character = characters[index + offset]
                let value: UInt32
                switch character {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(character - UInt8(ascii: "A"))
                case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(character - UInt8(ascii: "a")) + 26
                case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(character - UInt8(ascii: "0")) + 52
                case UInt8(ascii: "+"): value = 62
                case UInt8(ascii: "/"): value = 63
                case UInt8(ascii: "=") where offset >= 2 && index + 4 == characters.count:
                    value = 0
                    padding += 1
                default: return nil
                }
                // Padding only at the end of the last group.
                if padding > 0 && character != UInt8(ascii: "=") { return nil }
                group = group << 6 | value
            }
            for position in 0..<(3 - padding) {
                let byte = UInt8((group >> UInt32(16 - 8 * position)) & 0xFF)
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            }
            index += 4
        }
        return String(decoding: output, as: UTF8.self)
    }
}
