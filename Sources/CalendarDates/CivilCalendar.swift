/// Proleptic Gregorian calendar arithmetic on day counts since 1970-01-01
/// (Howard Hinnant's `days_from_civil` and `civil_from_days`), shared by
/// the layers that read and write dates: ISO 8601 arguments (WebService)
/// and PostgreSQL's date text (PostgreSQL). Year 0 is 1 BC.
///
/// ```swift
/// CivilCalendar.days(year: 2024, month: 5, day: 1)  // 19844
/// CivilCalendar.date(days: 19844)                   // (2024, 5, 1)
/// ```
public enum CivilCalendar {
    /// Days since 1970-01-01 of a civil date.
    ///
    /// ```swift
    /// CivilCalendar.days(year: 1970, month: 1, day: 2)  // 1
    /// ```
    public static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date of a day count since 1970-01-01.
    ///
    /// ```swift
    /// CivilCalendar.date(days: -1)  // (1969, 12, 31)
    /// ```
    public static func date(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// The number of days in a month (1–12) of a year.
    ///
    /// ```swift
    /// CivilCalendar.daysInMonth(year: 2000, month: 2)  // 29
    /// ```
    public static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
