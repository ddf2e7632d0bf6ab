/// A row's key, as the live feed compares keys: the values of the key's
/// columns in key order, as PostgreSQL writes them as text, which the
/// feed binds back as they are. Two keys are the same when their
/// canonical forms are: a value with a time zone offset
/// (`2024-05-01 12:00:00+02`) is compared as the same instant in UTC, so
/// that a trigger's session and the server's, in other time zones, agree
/// on it.
///
/// ```swift
/// LiveKey(["10001", "1986-06-26"]) == LiveKey(["10001", "1986-06-26"])                  // true
/// LiveKey(["2024-05-01 12:00:00+02"]) == LiveKey(["2024-05-01T10:00:00+00:00"])         // true
/// ```
struct LiveKey: Hashable, Sendable {
    /// The values, as written.
    let values: [String]
    /// What keys are compared by.
    let canonical: String

    init(_ values: [String]) {
        self.values = values
        canonical =
            values.count == 1 ? Self.canonical(values[0]) : values.map(Self.canonical).joined(separator: "\u{1F}")
    }

    static func == (left: LiveKey, right: LiveKey) -> Bool { left.canonical == right.canonical }

    func hash(into hasher: inout Hasher) { hasher.combine(canonical) }

    // MARK: - Canonical text

    /// `value`, or, when it reads as a date and time (`T` or a space
    /// between them), the same instant written one way: a space, six
    /// digits of fraction, and, when it has an offset, in UTC with `+00`.
    static func canonical(_ value: String) -> String {
        let bytes = Array(value.utf8)
        guard bytes.count >= 19, bytes.count <= 40, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: " "), bytes[13] == UInt8(ascii: ":"),
            bytes[16] == UInt8(ascii: ":"),
            let year = number(bytes, 0, 4), let month = number(bytes, 5, 2), let day = number(bytes, 8, 2),
            let hour = number(bytes, 11, 2), let minute = number(bytes, 14, 2), let second = number(bytes, 17, 2)
        else { return value }
        var index = 19
        var micros = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < bytes.count, let digit = digit(bytes[index]) {
                if digits < 6 { micros = micros * 10 + digit }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return value }
            for _ in digits..<max(digits, 6) { micros *= 10 }
        }
        var offsetSeconds: Int?
        if index < bytes.count {
            if bytes[index] == UInt8(ascii: "Z"), index + 1 == bytes.count {
                offsetSeconds = 0
            } else if bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
                var parts: [Int] = []
                var position = index + 1
                while position < bytes.count {
                    if bytes[position] == UInt8(ascii: ":") { position += 1 }
                    guard let part = number(bytes, position, 2) else { return value }
                    parts.append(part)
                    position += 2
                }
                guard (1...3).contains(parts.count) else { return value }
                offsetSeconds = sign * (parts[0] * 3600 + (parts.count > 1 ? parts[1] * 60 : 0) + (parts.count > 2 ? parts[2] : 0))
            } else {
                return value
            }
        }
        var days = daysFromCivil(year: year, month: month, day: day)
        var seconds = hour * 3600 + minute * 60 + second - (offsetSeconds ?? 0)
        days += seconds.floorDivided(by: 86_400)
        seconds = seconds.floorModulo(86_400)
        let (y, m, d) = civil(fromDays: days)
        var text = padded(y, 4) + "-" + padded(m, 2) + "-" + padded(d, 2) + " "
        text += padded(seconds / 3600, 2) + ":" + padded(seconds / 60 % 60, 2) + ":" + padded(seconds % 60, 2)
        text += "." + padded(micros, 6)
        if offsetSeconds != nil { text += "+00" }
        return text
    }

    private static func digit(_ byte: UInt8) -> Int? {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) ? Int(byte - UInt8(ascii: "0")) : nil
    }

    private static func number(_ bytes: [UInt8], _ start: Int, _ count: Int) -> Int? {
        guard start + count <= bytes.count else { return nil }
        var value = 0
        for index in start..<(start + count) {
            guard let digit = digit(bytes[index]) else { return nil }
            value = value * 10 + digit
        }
        return value
    }

    private static func padded(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = y.floorDivided(by: 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = z.floorDivided(by: 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension Int {
    fileprivate func floorDivided(by divisor: Int) -> Int {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    fileprivate func floorModulo(_ divisor: Int) -> Int {
        self - floorDivided(by: divisor) * divisor
    }
}
