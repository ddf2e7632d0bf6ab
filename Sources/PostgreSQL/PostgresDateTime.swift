import CalendarDates
import FoundationEssentials

/// PostgreSQL's ISO date/time text (`DateStyle` ISO), shared by parameter
/// binding, JSON rendering and decoding; the calendar arithmetic is
/// CalendarDates' `CivilCalendar`.
package enum PostgresDateTime {
    // MARK: - Text

    /// UTC `timestamptz` input text with microseconds:
    /// `2024-05-01 10:00:00.250000+00`, with ` BC` for years before 1.
    static func timestamptzText(microsecondsSinceEpoch microseconds: Int64) -> String {
        let perDay: Int64 = 86_400_000_000
        let dayNumber = microseconds >= 0 ? microseconds / perDay : -((-microseconds + perDay - 1) / perDay)
        let inDay = microseconds - dayNumber * perDay
        let date = CivilCalendar.date(days: dayNumber)
        let isBC = date.year <= 0
        func padded(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        var text = padded(isBC ? 1 - date.year : date.year, 4) + "-" + padded(date.month, 2) + "-" + padded(date.day, 2)
        text += " " + padded(inDay / 3_600_000_000, 2) + ":" + padded(inDay / 60_000_000 % 60, 2)
        text += ":" + padded(inDay / 1_000_000 % 60, 2) + "." + padded(inDay % 1_000_000, 6) + "+00"
        if isBC { text += " BC" }
        return text
    }

    /// Milliseconds since 1970-01-01T00:00:00Z of PostgreSQL's ISO text for
    /// a `date` (UTC midnight), `timestamp` (taken as UTC) or `timestamptz`
    /// (its offset applied): `YYYY-MM-DD[ HH:MM:SS[.ffffff]][±HH[:MM[:SS]]][ BC]`.
    /// Sub-millisecond digits are dropped towards the past. `nil` for
    /// `infinity`, `-infinity`, any other text, or a value out of `Int64`'s
    /// range.
    package static func epochMilliseconds(_ text: UnsafeRawBufferPointer) -> Int64? {
        guard let (days, microseconds) = dayAndMicroseconds(text) else { return nil }
        // In milliseconds: PostgreSQL's dates reach year 5874897, whose
        // microseconds since 1970 do not fit in 64 bits. Nine-digit years
        // (never from PostgreSQL) can overflow even so: `nil`.
        let dayMilliseconds = days.multipliedReportingOverflow(by: 86_400_000)
        let timeMilliseconds = microseconds >= 0 ? microseconds / 1000 : -((-microseconds + 999) / 1000)
        let total = dayMilliseconds.partialValue.addingReportingOverflow(timeMilliseconds)
        guard !dayMilliseconds.overflow, !total.overflow else { return nil }
        return total.partialValue
    }

    /// The instant of the same text as ``epochMilliseconds(_:)`` reads,
    /// to the microsecond; `nil` where it gives `nil`.
    package static func date(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { bytes in
            guard let (days, microseconds) = dayAndMicroseconds(UnsafeRawBufferPointer(bytes)) else { return nil }
            return Date(timeIntervalSince1970: Double(days) * 86_400).addingTimeInterval(Double(microseconds) / 1_000_000)
        }
    }

    /// The day since 1970-01-01 and the microseconds from its midnight UTC
    /// (negative or past a day once the offset is applied) of `text`.
    private static func dayAndMicroseconds(_ text: UnsafeRawBufferPointer) -> (days: Int64, microseconds: Int64)? {
        var reader = DigitReader(bytes: text)
        guard let year = reader.number(minDigits: 4, maxDigits: 9), reader.skip("-"),
            let month = reader.number(minDigits: 2, maxDigits: 2), reader.skip("-"),
            let day = reader.number(minDigits: 2, maxDigits: 2)
        else { return nil }
        var microseconds: Int64 = 0
        if reader.peek == UInt8(ascii: " "), reader.peek(1).map(DigitReader.isDigit) == true {
            reader.index += 1
            guard let hour = reader.number(minDigits: 2, maxDigits: 2), reader.skip(":"),
                let minute = reader.number(minDigits: 2, maxDigits: 2), reader.skip(":"),
                let second = reader.number(minDigits: 2, maxDigits: 2)
            else { return nil }
            microseconds = ((hour * 60 + minute) * 60 + second) * 1_000_000
            if reader.skip(".") {
                let start = reader.index
                guard var fraction = reader.number(minDigits: 1, maxDigits: 6) else { return nil }
                for _ in (reader.index - start)..<6 { fraction *= 10 }
                microseconds += fraction
            }
            if let sign = reader.peek, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                reader.index += 1
                guard let offsetHours = reader.number(minDigits: 2, maxDigits: 2) else { return nil }
                var offset = offsetHours * 3600
                if reader.skip(":") {
                    guard let offsetMinutes = reader.number(minDigits: 2, maxDigits: 2) else { return nil }
                    offset += offsetMinutes * 60
                    if reader.skip(":") {
                        guard let offsetSeconds = reader.number(minDigits: 2, maxDigits: 2) else { return nil }
                        offset += offsetSeconds
                    }
                }
                microseconds -= (sign == UInt8(ascii: "+") ? offset : -offset) * 1_000_000
            }
        }
        var astronomicalYear = year
        if reader.skip(" ") {
            guard reader.skip("B"), reader.skip("C") else { return nil }
            astronomicalYear = 1 - year
        }
        guard reader.isAtEnd, (1...12).contains(month), (1...31).contains(day) else { return nil }
        return (CivilCalendar.days(year: astronomicalYear, month: month, day: day), microseconds)
    }
}

// MARK: - Reading digits

package struct DigitReader {
    package let bytes: UnsafeRawBufferPointer
    package var index = 0

    var isAtEnd: Bool { index == bytes.count }
    var peek: UInt8? { peek(0) }

    func peek(_ offset: Int) -> UInt8? {
        index + offset < bytes.count ? bytes[index + offset] : nil
    }

    package static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    mutating func skip(_ character: Unicode.Scalar) -> Bool {
        guard peek == UInt8(ascii: character) else { return false }
        index += 1
        return true
    }

    mutating func number(minDigits: Int, maxDigits: Int) -> Int64? {
        var value: Int64 = 0
        var count = 0
        while count < maxDigits, let byte = peek, Self.isDigit(byte) {
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            count += 1
            index += 1
        }
        return count >= minDigits ? value : nil
    }
}
