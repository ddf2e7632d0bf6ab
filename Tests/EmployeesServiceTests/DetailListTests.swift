import EmployeesService
import Testing
import WebService

/// `DetailList` parsing, without a database.
@Suite("DetailList")
struct DetailListTests {
    @Test("repeated and comma-separated values, trimmed, in order, without duplicates")
    func parsesListsInOrder() throws {
        let list = try DetailList<EmployeeDetail>.convert([
            .text("salaries, titles"), .text("\ttitles "), .text("departments,salaries"),
        ])
        #expect(list.elements == [.salaries, .titles, .departments])
        // Unicode space separators are blanks too (U+00A0, U+3000).
        #expect(try DetailList<EmployeeDetail>.convert([.text("\u{00A0}titles\u{3000}")]).elements == [.titles])
        #expect(try DetailList<EmployeeDetail>.convert([]).elements.isEmpty)
    }

    @Test("an unknown or empty name is an error quoting it", arguments: ["managers", "titles,", " ", "títles"])
    func rejectsUnknownNames(text: String) {
        #expect(throws: ArgumentConversionError.self) {
            try DetailList<EmployeeDetail>.convert([.text(text)])
        }
    }

    @Test("ten thousand duplicates make one element")
    func manyDuplicates() throws {
        let text = Array(repeating: "titles", count: 10_000).joined(separator: ",")
        #expect(try DetailList<EmployeeDetail>.convert([.text(text)]).elements == [.titles])
    }
}
