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

    @Test("the error quotes the trimmed name, whether ASCII or not")
    func errorQuotesTrimmedName() throws {
        for (text, name) in [(" titles, managers\t", "managers"), ("\u{00A0}títles", "títles"), ("titles,", "")] {
            do {
                _ = try DetailList<EmployeeDetail>.convert([.text(text)])
                Issue.record("\(text) must be refused")
            } catch {
                #expect(error.received == "\"\(name)\"")
            }
        }
        #expect(try DetailList<DepartmentDetail>.convert([.text(" employees ,managers,employees")]).elements == [.employees, .managers])
    }

    @Test("ten thousand duplicates make one element")
    func manyDuplicates() throws {
        let text = Array(repeating: "titles", count: 10_000).joined(separator: ",")
        #expect(try DetailList<EmployeeDetail>.convert([.text(text)]).elements == [.titles])
    }
}
