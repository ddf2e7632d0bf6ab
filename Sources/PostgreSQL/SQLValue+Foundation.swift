import FoundationEssentials

// MARK: - Foundation values

extension Date: SQLValueConvertible {
    /// The instant as UTC `timestamptz` text with microseconds, PostgreSQL's
    /// precision: `2024-05-01 10:00:00.250000+00`.
    ///
    /// ```swift
    /// Date(timeIntervalSince1970: 0).sqlValue   // .text("1970-01-01 00:00:00.000000+00")
    /// ```
    public var sqlValue: SQLValue {
        let microseconds = Int64((timeIntervalSince1970 * 1_000_000).rounded())
        return .text(PostgresDateTime.timestamptzText(microsecondsSinceEpoch: microseconds))
    }
}

extension UUID: SQLValueConvertible {
    /// The UUID in lowercase hex with dashes, as PostgreSQL prints it.
    public var sqlValue: SQLValue { .text(uuidString.lowercased()) }
}

extension Data: SQLValueConvertible {
    /// `bytea` hex input: `Data([1, 255])` → `.text(#"\x01ff"#)`.
    public var sqlValue: SQLValue {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = [UInt8(ascii: "\\"), UInt8(ascii: "x")]
        text.reserveCapacity(2 + count * 2)
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return .text(String(decoding: text, as: UTF8.self))
    }
}

extension Decimal: SQLValueConvertible {
    /// The number in decimal, for `numeric`: `Decimal(string: "12.50")` → `.text("12.5")`.
    public var sqlValue: SQLValue { .text(description) }
}
