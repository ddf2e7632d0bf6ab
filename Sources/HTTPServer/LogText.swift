/// Text made safe to write in a log line: every character that is not
/// printable is written as the bytes of its UTF-8 encoding, each as
/// `\xNN` (an escape character as `\x1b`, a carriage return as `\x0d`).
///
/// A request's method, target or header field may hold any byte. Copied
/// raw into a log line, an escape sequence would clear or rewrite the
/// terminal an operator reads the log in, a carriage return would hide
/// the start of the line, and a line feed would forge a line of its own.
/// The server escapes every field it copies from a request into a log
/// line (the access line's method and path among them), whatever the log
/// handler; `ServiceHost`'s handler escapes whole lines too.
///
/// Escaped: the control characters (U+0000 to U+001F, U+007F, and U+0080
/// to U+009F, whose UTF-8 bytes some terminals read as controls), the line
/// and paragraph separators (U+2028, U+2029), and the characters that
/// reorder text as it is shown (U+200E, U+200F, U+202A to U+202E, U+2066 to
/// U+2069). Everything else, `\` included, is kept as it is.
///
/// ```swift
/// LogText.escaping("/a\u{1B}[2J\rb")   // "/a\x1b[2J\x0db"
/// LogText.escaping("/employees/10001") // unchanged
/// ```
public enum LogText {
    /// `text` with its characters that are not printable escaped; `text`
    /// itself (no copy) when it has none, as a request's fields almost never do.
    ///
    /// ```swift
    /// logger.info("\(LogText.escaping(request.method.rawValue)) \(LogText.escaping(request.rawPath))")
    /// ```
    public static func escaping(_ text: String) -> String {
        var text = text
        // Printable ASCII throughout: the usual case, one pass over the bytes.
        let isPlain = text.withUTF8 { bytes in bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F } }
        if isPlain { return text }
        var escaped: [UInt8] = []
        escaped.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            if isPrintable(scalar) {
                escaped.append(contentsOf: String(scalar).utf8)
            } else {
                for byte in String(scalar).utf8 { appendEscape(byte, to: &escaped) }
            }
        }
        return String(decoding: escaped, as: UTF8.self)
    }

    private static func isPrintable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: false
        default: true
        }
    }

    private static func appendEscape(_ byte: UInt8, to output: inout [UInt8]) {
        let hex: StaticString = "0123456789abcdef"
        output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "x"), hex.utf8Start[Int(byte >> 4)], hex.utf8Start[Int(byte & 0xF)]])
    }
}
