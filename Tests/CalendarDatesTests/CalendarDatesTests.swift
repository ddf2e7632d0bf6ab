import CalendarDates
import Testing

@Suite struct CalendarDatesTests {
    @Test func knownDates() {
        #expect(CivilCalendar.days(year: 1970, month: 1, day: 1) == 0)
        #expect(CivilCalendar.days(year: 2024, month: 5, day: 1) == 19_844)
        #expect(CivilCalendar.days(year: 1969, month: 12, day: 31) == -1)
        #expect(CivilCalendar.days(year: 0, month: 3, day: 1) == -719_468)
        #expect(CivilCalendar.date(days: 11_016) == (2000, 2, 29))
    }

    @Test func daysAndDatesRoundTrip() {
        for days in stride(from: Int64(-800_000), through: 800_000, by: 997) {
            let date = CivilCalendar.date(days: days)
            #expect((1...12).contains(date.month))
            #expect((1...CivilCalendar.daysInMonth(year: date.year, month: date.month)).contains(date.day))
            #expect(CivilCalendar.days(year: date.year, month: date.month, day: date.day) == days)
        }
    }

    @Test func monthLengths() {
        #expect(CivilCalendar.daysInMonth(year: 1900, month: 2) == 28)
        #expect(CivilCalendar.daysInMonth(year: 2000, month: 2) == 29)
        #expect(CivilCalendar.daysInMonth(year: 2024, month: 2) == 29)
        #expect(CivilCalendar.daysInMonth(year: 2023, month: 4) == 30)
        #expect(CivilCalendar.daysInMonth(year: 2023, month: 12) == 31)
    }
}
