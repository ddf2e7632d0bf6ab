import Foundation
import Testing
@testable import PostgreSQL
@testable import PostgreSQLWebService

@Suite("SQLArguments and binding")
struct SQLArgumentsTests {
    // MARK: - Binding

    @Test func bindsInPlaceholderOrder() throws {
        let query = Parameters.parse("SELECT :b, :a, :b, :c")
        let values = try query.bind(["a": 1, "b": "two", "c": nil])
        #expect(values == [.text("two"), .text("1"), .null])
    }

    @Test func missingNameIsAnErrorNamingIt() {
        let query = Parameters.parse("SELECT * FROM employees WHERE emp_no = :employeeNumber AND name = :name")
        #expect(throws: ParameterError(.missing, name: "name")) {
            try query.bind(["employeeNumber": 10004])
        }
        let error = ParameterError(.missing, name: "employeeNumber")
        #expect(error.description == "no value for SQL parameter :employeeNumber")
    }

    @Test func unknownNameIsAnErrorNamingIt() {
        let query = Parameters.parse("SELECT :a")
        #expect(throws: ParameterError(.unknown, name: "b")) {
            try query.bind(["a": 1, "b": 2])
        }
        #expect(throws: ParameterError(.unknown, name: "A")) {
            try query.bind(["A": 1])
        }
    }

    @Test func errorsNeverShowValues() {
        let query = Parameters.parse("SELECT :secret")
        do {
            _ = try query.bind(["secret": "pass\u{0}word"])
            Issue.record("a NUL character must be refused")
        } catch {
            #expect(error == ParameterError(.nulCharacter, name: "secret"))
            #expect(!error.description.contains("pass"))
        }
    }

    @Test func bindsFromALookup() throws {
        let query = Parameters.parse("SELECT title FROM titles WHERE emp_no = :employeeNumber AND x = :x")
        let row: [String: SQLValue] = ["employeeNumber": .text("10004"), "x": .null, "other": .text("y")]
        #expect(try query.bind { row[$0] } == [.text("10004"), .null])
        #expect(throws: ParameterError(.missing, name: "employeeNumber")) {
            try query.bind { _ in nil }
        }
    }

    @Test("textValues(for:) gives bind's values, and its errors in the same cases")
    func textValuesMatchBind() {
        let query = Parameters.parse("SELECT :b, :a, :c")
        let cases: [SQLArguments] = [
            ["a": 1, "b": "two", "c": nil], ["a": 1, "b": 2], ["a": 1, "b": 2, "c": 3, "d": 4], ["a": 1, "b": 2, "z": 3],
            ["a": 1, "b": "x\u{0}y", "z": 3], ["a": 1, "b": "x\u{0}y", "c": 3], [:], ["A": 1, "b": 2, "c": 3],
        ]
        for arguments in cases {
            let expected = Result { try query.bind(arguments).map(\.text) }
            let actual = Result { try arguments.textValues(for: query) }
            switch (expected, actual) {
            case (.success(let expected), .success(let actual)):
                #expect(expected == actual)
            case (.failure(let expected), .failure(let actual)):
                #expect(expected as? ParameterError == actual as? ParameterError)
            default:
                Issue.record("bind and textValues(for:) disagree on \(arguments)")
            }
        }
    }

    @Test func noParametersBindNothing() throws {
        #expect(try Parameters.parse("SELECT 1").bind([:]) == [])
    }

    // MARK: - Arguments

    @Test func argumentsFromLiteralsAndSubscripts() {
        var arguments: SQLArguments = ["a": 1, "b": nil]
        #expect(arguments.values == ["a": .text("1"), "b": .null])
        arguments["c"] = "x"
        arguments["a"] = nil
        #expect(arguments.values == ["b": .null, "c": .text("x")])
        #expect(SQLArguments(["n": 2.5]).values == ["n": .text("2.5")])
    }

    @Test func argumentsByValueKeepTheLastOfARepeatedNameAndCompareInAnyOrder() {
        var arguments: SQLArguments = ["a": 1, "b": 2, "a": 3]
        #expect(arguments.count == 2)
        #expect(arguments.names == ["a", "b"])
        #expect(arguments[value: "a"] == .text("3"))
        #expect(arguments[value: "z"] == nil)
        arguments[value: "b"] = .null
        arguments[value: "c"] = .text("x")
        arguments[value: "a"] = nil
        arguments[value: "missing"] = nil
        #expect(arguments.names == ["b", "c"])
        #expect(arguments == ["c": "x", "b": nil])
        #expect(arguments != ["c": "x"])
        #expect(arguments != ["c": "x", "b": 0])
        #expect(Set([arguments, ["c": "x", "b": nil]]).count == 1)
        arguments.values = ["d": .text("4")]
        #expect(arguments.names == ["d"])
    }

    // MARK: - Values

    @Test func scalarValues() {
        #expect("bal%".sqlValue == .text("bal%"))
        #expect("bal%".dropFirst().sqlValue == .text("al%"))
        #expect(true.sqlValue == .text("true"))
        #expect(false.sqlValue == .text("false"))
        #expect(Int.min.sqlValue == .text("-9223372036854775808"))
        #expect(Int8(-8).sqlValue == .text("-8"))
        #expect(Int16(16).sqlValue == .text("16"))
        #expect(Int32(32).sqlValue == .text("32"))
        #expect(Int64(64).sqlValue == .text("64"))
        #expect(UInt.max.sqlValue == .text("18446744073709551615"))
        #expect(UInt8(8).sqlValue == .text("8"))
        #expect(UInt16(16).sqlValue == .text("16"))
        #expect(UInt32(32).sqlValue == .text("32"))
        #expect(UInt64(64).sqlValue == .text("64"))
        #expect(0.1.sqlValue == .text("0.1"))
        #expect(1e-5.sqlValue == .text("1e-05"))
        #expect(Double.nan.sqlValue == .text("NaN"))
        #expect(Double.infinity.sqlValue == .text("Infinity"))
        #expect((-Double.infinity).sqlValue == .text("-Infinity"))
        #expect(Float(1.5).sqlValue == .text("1.5"))
        #expect((nil as Int?).sqlValue == .null)
        #expect((5 as Int?).sqlValue == .text("5"))
        #expect(SQLValue.null.sqlValue == .null)
    }

    @Test func foundationValues() {
        #expect(Date(timeIntervalSince1970: 0).sqlValue == .text("1970-01-01 00:00:00.000000+00"))
        #expect(Date(timeIntervalSince1970: 1_714_557_600.25).sqlValue == .text("2024-05-01 10:00:00.250000+00"))
        #expect(Date(timeIntervalSince1970: -0.5).sqlValue == .text("1969-12-31 23:59:59.500000+00"))
        #expect(Date(timeIntervalSince1970: -62_135_596_800 - 86_400).sqlValue == .text("0001-12-31 00:00:00.000000+00 BC"))
        let uuid = UUID(uuidString: "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11")!
        #expect(uuid.sqlValue == .text("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"))
        #expect(Data([0x01, 0xAB, 0xFF]).sqlValue == .text("\\x01abff"))
        #expect(Decimal(string: "12.50")!.sqlValue == .text("12.5"))
    }

    @Test func arrayValues() {
        #expect([1, 2, 3].sqlValue == .text(#"{"1","2","3"}"#))
        #expect([Int]().sqlValue == .text("{}"))
        #expect(["a,b", "{c}", "NULL", #"q"u\o"#, " s "].sqlValue == .text(#"{"a,b","{c}","NULL","q\"u\\o"," s "}"#))
        #expect([1, nil, 3].sqlValue == .text(#"{"1",NULL,"3"}"#))
        #expect([[1, 2], [3, 4]].sqlValue == .text(#"{{"1","2"},{"3","4"}}"#))
        #expect([[1, 2], nil].sqlValue == .text(#"{{"1","2"},NULL}"#))
        #expect([true, false].sqlValue == .text(#"{"true","false"}"#))
    }

    @Test func argumentsOfEveryKind() throws {
        let query = Parameters.parse("SELECT :employeeNumber, :name, :ids, :x")
        let values = try query.bind(["employeeNumber": 10004, "name": "bal%", "ids": [1, 2, 3], "x": nil])
        #expect(values == [.text("10004"), .text("bal%"), .text(#"{"1","2","3"}"#), .null])
    }
}
