import CalendarDates
import FoundationEssentials
import Testing

/// One parser for arguments (an offset required) and for PostgreSQL's text
/// (none for `timestamp`; `±HH[:MM[:SS]]` for `timestamptz`).
@Suite struct ISO8601Tests {
    private func seconds(_ text: String, _ offsets: ISO8601.Offsets = .required) -> Double? {
        ISO8601.parse(text, offsets: offsets)?.timeIntervalSince1970
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

    @Test func postgreSQLTextTakesNoOffsetAsUTCAndOffsetsOfHoursToSeconds() {
        #expect(seconds("2024-05-01", .postgreSQL) == 1_714_521_600)
        #expect(seconds("2024-05-01 12:30:00", .postgreSQL) == 1_714_566_600)
        #expect(seconds("2024-05-01 12:30:00.25", .postgreSQL) == 1_714_566_600.25)
        #expect(seconds("2024-05-01 12:30:00+02", .postgreSQL) == 1_714_559_400)
        #expect(seconds("2024-05-01 12:30:00-05:30", .postgreSQL) == 1_714_586_400)
        #expect(seconds("1890-01-01 00:00:00+00:53:28", .postgreSQL) == -2_524_524_808)
        #expect(seconds("2024-05-01 12:30:00Z", .postgreSQL) == nil)
        #expect(seconds("2024-05-01 12:30:00+02:00x", .postgreSQL) == nil)
    }
}
