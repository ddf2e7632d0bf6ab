/// A day of the proleptic Gregorian calendar, without a time or a zone: what
/// a PostgreSQL `date` column holds and writes (`"1986-06-26"`).
///
/// Use it for the fields of documented result types that come from `date`
/// columns, and for arguments that are days; `Date` is an instant, written
/// as a date-time (`2024-05-01T12:30:00Z`). The documentation tells them
/// apart (`date` and `date-time`; `format: date` and `format: date-time` in
/// OpenAPI).
///
/// ```swift
/// struct Title: Codable { var title: String; var fromDate: CalendarDate; var toDate: CalendarDate? }
/// Parameter<CalendarDate>("since", example: CalendarDate(year: 1990, month: 1, day: 1))
/// CalendarDate("2024-02-30")   // nil
/// ```
public struct CalendarDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// The day, which must exist (`month` 1...12, `day` within the month).
    /// Text from outside (a request, a file) goes through ``init(_:)``,
    /// which checks the day first: only code can break this precondition.
    public init(year: Int, month: Int, day: Int) {
        precondition((1...12).contains(month), "No month \(month)")
        precondition(
            (1...CivilCalendar.daysInMonth(year: Int64(year), month: Int64(month))).contains(Int64(day)),
            "No day \(day) in \(year)-\(month)")
        self.year = year
        self.month = month
        self.day = day
    }

    /// `YYYY-MM-DD`, as ISO 8601 and PostgreSQL write it (years 0...9999).
    public var description: String {
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    public static func < (lhs: CalendarDate, rhs: CalendarDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }
}

extension CalendarDate {
    /// Reads exactly `YYYY-MM-DD` of a day that exists; `nil` otherwise.
    ///
    /// ```swift
    /// CalendarDate("1986-06-26")   // 1986-06-26
    /// CalendarDate("2024-02-30")   // nil
    /// ```
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            (1...12).contains(month),
            (1...CivilCalendar.daysInMonth(year: Int64(year), month: Int64(month))).contains(Int64(day))
        else { return nil }
        self.init(year: year, month: month, day: day)
    }
}

extension CalendarDate: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let date = CalendarDate(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Expected a date (YYYY-MM-DD), got \"\(text)\".")
        }
        self = date
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
