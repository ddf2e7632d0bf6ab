import CalendarDates
import FoundationEssentials
import Testing

/// Dates and date-times as arguments write them: an offset is required on a date-time.
@Suite struct ISO8601Tests {
    private func seconds(_ text: String) -> Double? {
        ISO8601.parse(text)?.timeIntervalSince1970
    }

    @Test func argumentsNeedAnOffsetOnADateTime() {
        #expect(seconds("2024-05-01") == 1_714_521_600)
        #expect(seconds("2024-05-01T12:30:00Z") == 1_714_566_600)
        #expect(seconds("2024-05-01T12:30:00.250+02:00") == 1_714_559_400.25)
        #expect(seconds("2024-05-01T12:30+0200") == 1_714_559_400)
        #expect(seconds("2024-05-01T12:30:00") == nil)
        #expect(seconds("2024-05-01T12:30:00+02") == nil)
        #expect(seconds("2024-02-30") == nil)
        #expect(seconds("2024-05-01T24:00:00Z") == nil)
    }
}
