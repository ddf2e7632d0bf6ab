import FoundationEssentials

/// ISO 8601 dates as arguments and results take them: a calendar date
/// (`2024-05-01`, midnight UTC) or a date-time with an offset
/// (`2024-05-01T12:30:00Z`, `2024-05-01T12:30:00.250+02:00`).
package enum ISO8601 {
    // MARK: - Parsing

    package static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ digits: Int) -> Int? {
            guard index + digits <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + digits] {
                guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            index += digits
            return value
        }
        func skip(_ character: Character) -> Bool {
            guard index < bytes.count, bytes[index] == character.asciiValue else { return false }
            index += 1
            return true
        }
        guard let year = number(4), skip("-"), let month = number(2), skip("-"), let day = number(2),
            (1...12).contains(month), (1...CivilCalendar.daysInMonth(year: Int64(year), month: Int64(month))).contains(Int64(day))
        else { return nil }
        var seconds = Double(CivilCalendar.days(year: Int64(year), month: Int64(month), day: Int64(day))) * 86_400
        if index == bytes.count { return Date(timeIntervalSince1970: seconds) }

        guard skip("T") || skip("t") || skip(" "),
            let hour = number(2), hour < 24, skip(":"), let minute = number(2), minute < 60
        else { return nil }
        seconds += Double(hour * 3600 + minute * 60)
        if skip(":") {
            guard let second = number(2), second < 60 else { return nil }
            seconds += Double(second)
            if skip(".") || skip(",") {
                var scale = 0.1
                let start = index
                while index < bytes.count, let digit = number(1) {
                    seconds += Double(digit) * scale
                    scale /= 10
                }
                guard index > start else { return nil }
            }
        }
        if skip("Z") || skip("z") {
            return index == bytes.count ? Date(timeIntervalSince1970: seconds) : nil
        }
        let sign: Double
        if skip("+") { sign = 1 } else if skip("-") { sign = -1 } else { return nil }
        guard let offsetHours = number(2), offsetHours < 24 else { return nil }
        _ = skip(":")
        guard let offsetMinutes = number(2), offsetMinutes < 60, index == bytes.count else { return nil }
        return Date(timeIntervalSince1970: seconds - sign * Double(offsetHours * 3600 + offsetMinutes * 60))
    }

    // MARK: - Formatting

    /// `2024-05-01T12:30:00Z`, with milliseconds when there are any.
    package static func format(_ date: Date) -> String {
        let totalMilliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let (days, millisecondOfDay) = floorDivide(totalMilliseconds, 86_400_000)
        let civil = CivilCalendar.date(days: days)
        let (year, month, day) = (Int(civil.year), Int(civil.month), Int(civil.day))
        let seconds = Int(millisecondOfDay / 1000)
        let milliseconds = Int(millisecondOfDay % 1000)
        var text = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
        text += "T\(pad(seconds / 3600, 2)):\(pad(seconds / 60 % 60, 2)):\(pad(seconds % 60, 2))"
        if milliseconds > 0 { text += ".\(pad(milliseconds, 3))" }
        return text + "Z"
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let quotient = value >= 0 ? value / divisor : (value - divisor + 1) / divisor
        return (quotient, value - quotient * divisor)
    }
}
