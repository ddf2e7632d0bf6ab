import Testing
import WebService

private enum EmployeeDetail: String, CaseIterable, ArgumentValue {
    case titles, salaries, departments
}

private enum DepartmentDetail: String, CaseIterable, ArgumentValue {
    case managers, employees
}

/// A list of more than 64 cases, past the bit set of chosen cases.
private enum Column: String, CaseIterable, ArgumentValue {
    case c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, c17, c18, c19
    case c20, c21, c22, c23, c24, c25, c26, c27, c28, c29, c30, c31, c32, c33, c34, c35, c36, c37, c38, c39
    case c40, c41, c42, c43, c44, c45, c46, c47, c48, c49, c50, c51, c52, c53, c54, c55, c56, c57, c58, c59
    case c60, c61, c62, c63, c64, c65, c66, c67, c68, c69
}

/// `CommaList` parsing.
@Suite("CommaList")
struct CommaListTests {
    @Test("repeated and comma-separated values, trimmed, in order, without duplicates")
    func parsesListsInOrder() throws {
        let list = try CommaList<EmployeeDetail>.convert([
            .text("salaries, titles"), .text("\ttitles "), .text("departments,salaries"),
        ])
        #expect(list.elements == [.salaries, .titles, .departments])
        // Unicode space separators are blanks too (U+00A0, U+3000).
        #expect(try CommaList<EmployeeDetail>.convert([.text("\u{00A0}titles\u{3000}")]).elements == [.titles])
        #expect(try CommaList<EmployeeDetail>.convert([]).elements.isEmpty)
    }

    @Test("an unknown or empty name is an error quoting it", arguments: ["managers", "titles,", " ", "títles"])
    func rejectsUnknownNames(text: String) {
        #expect(throws: ArgumentConversionError.self) {
            try CommaList<EmployeeDetail>.convert([.text(text)])
        }
    }

    @Test("the error quotes the trimmed name, whether ASCII or not")
    func errorQuotesTrimmedName() throws {
        for (text, name) in [(" titles, managers\t", "managers"), ("\u{00A0}títles", "títles"), ("titles,", "")] {
            do {
                _ = try CommaList<EmployeeDetail>.convert([.text(text)])
                Issue.record("\(text) must be refused")
            } catch {
                #expect(error.received == "\"\(name)\"")
            }
        }
        #expect(try CommaList<DepartmentDetail>.convert([.text(" employees ,managers,employees")]).elements == [.employees, .managers])
    }

    @Test("ten thousand duplicates make one element")
    func manyDuplicates() throws {
        let text = Array(repeating: "titles", count: 10_000).joined(separator: ",")
        #expect(try CommaList<EmployeeDetail>.convert([.text(text)]).elements == [.titles])
    }

    @Test("cases past the 64th are kept once, in order")
    func manyCases() throws {
        let list = try CommaList<Column>.convert([.text("c69,c3,c69, c64"), .text("c3,c0")])
        #expect(list.elements == [.c69, .c3, .c64, .c0])
    }

    @Test("JSON arrays of names are read too")
    func jsonArrays() throws {
        let list = try CommaList<EmployeeDetail>.convert([.json(.array([.string("salaries"), .string("titles")]))])
        #expect(Array(list) == [.salaries, .titles])
    }
}
