import Testing
@testable import PostgreSQL
@testable import PostgreSQLWebService

@Suite("PostgresJSON rendering")
struct PostgresJSONTests {
    private func render(_ text: String, _ type: PostgresType, _ options: JSONRenderingOptions = JSONRenderingOptions()) -> String {
        var output: [UInt8] = []
        var text = text
        text.withUTF8 { PostgresJSON.append(UnsafeRawBufferPointer($0), typeOID: type.oid, to: &output, options: options) }
        return String(decoding: output, as: UTF8.self)
    }

    private func render(bytes: [UInt8], _ type: PostgresType) -> String {
        var output: [UInt8] = []
        bytes.withUnsafeBytes { PostgresJSON.append($0, typeOID: type.oid, to: &output, options: JSONRenderingOptions()) }
        return String(decoding: output, as: UTF8.self)
    }

    private let epoch = JSONRenderingOptions(dateFormat: .epochMilliseconds)

    // MARK: - Numbers and booleans

    @Test func integersAreNumbers() {
        #expect(render("10004", .int4) == "10004")
        #expect(render("-32768", .int2) == "-32768")
        #expect(render("-9223372036854775808", .int8) == "-9223372036854775808")
        #expect(render("4294967295", .oid) == "4294967295")
    }

    @Test func numericTextIsCopied() {
        #expect(render("123.4500", .numeric) == "123.4500")
        #expect(render("0.000000000000000000001", .numeric) == "0.000000000000000000001")
        #expect(render("NaN", .numeric) == "null")
        #expect(render("Infinity", .numeric) == "null")
        #expect(render("-Infinity", .numeric) == "null")
    }

    @Test func floatsAreNumbersAndNonFiniteIsNull() {
        #expect(render("1.5", .float8) == "1.5")
        #expect(render("1e+100", .float8) == "1e+100")
        #expect(render("-1.5e-05", .float4) == "-1.5e-05")
        #expect(render("-0", .float8) == "-0")
        #expect(render("NaN", .float8) == "null")
        #expect(render("Infinity", .float4) == "null")
        #expect(render("-Infinity", .float8) == "null")
    }

    @Test func textThatIsNotANumberBecomesAString() {
        #expect(render("01", .int4) == #""01""#)
        #expect(render("1.", .numeric) == #""1.""#)
        #expect(render("", .int4) == #""""#)
        #expect(render("1e", .float8) == #""1e""#)
        #expect(render("$1.00", .numeric) == #""$1.00""#)
    }

    @Test func booleans() {
        #expect(render("t", .bool) == "true")
        #expect(render("f", .bool) == "false")
        #expect(render("true", .bool) == #""true""#)
    }

    // MARK: - JSON

    @Test func jsonIsEmbedded() {
        #expect(render(#"{"a": [1, 2.5, null]}"#, .jsonb) == #"{"a": [1, 2.5, null]}"#)
        #expect(render(" [1,\n 2] ", .json) == " [1,\n 2] ")
        #expect(render(#""s""#, .json) == #""s""#)
    }

    // MARK: - Dates and times

    @Test func dates() {
        #expect(render("2024-05-01", .date) == #""2024-05-01""#)
        #expect(render("infinity", .date) == #""infinity""#)
        #expect(render("-infinity", .date) == #""-infinity""#)
        #expect(render("0044-03-15 BC", .date) == #""0044-03-15 BC""#)
    }

    @Test func timestampsGetATSeparator() {
        #expect(render("2024-05-01 10:00:00", .timestamp) == #""2024-05-01T10:00:00""#)
        #expect(render("2024-05-01 10:00:00.123456", .timestamp) == #""2024-05-01T10:00:00.123456""#)
        #expect(render("0044-03-15 10:00:00 BC", .timestamp) == #""0044-03-15T10:00:00 BC""#)
        #expect(render("infinity", .timestamp) == #""infinity""#)
        #expect(render("-infinity", .timestamp) == #""-infinity""#)
    }

    @Test func timestamptzOffsetsHaveMinutes() {
        #expect(render("2024-05-01 10:00:00+00", .timestamptz) == #""2024-05-01T10:00:00+00:00""#)
        #expect(render("2024-05-01 10:00:00.5-03", .timestamptz) == #""2024-05-01T10:00:00.5-03:00""#)
        #expect(render("2024-05-01 10:00:00+05:30", .timestamptz) == #""2024-05-01T10:00:00+05:30""#)
        #expect(render("1850-01-01 00:00:00+00:53:28", .timestamptz) == #""1850-01-01T00:00:00+00:53:28""#)
        #expect(render("0044-03-15 10:00:00+00 BC", .timestamptz) == #""0044-03-15T10:00:00+00:00 BC""#)
        #expect(render("infinity", .timestamptz) == #""infinity""#)
    }

    @Test func timesAndIntervalsAreStrings() {
        #expect(render("10:00:00.5", .time) == #""10:00:00.5""#)
        #expect(render("10:00:00+02", .timetz) == #""10:00:00+02""#)
        #expect(render("10:00:00-05:30", .timetz) == #""10:00:00-05:30""#)
        #expect(render("1 year 2 mons 3 days 04:05:06", .interval) == #""1 year 2 mons 3 days 04:05:06""#)
    }

    @Test func epochMilliseconds() {
        #expect(render("2024-05-01", .date, epoch) == "1714521600000")
        #expect(render("1969-12-31", .date, epoch) == "-86400000")
        #expect(render("1995-12-01", .date, epoch) == "817776000000")
        #expect(render("0001-01-01", .date, epoch) == "-62135596800000")
        #expect(render("0001-12-31 BC", .date, epoch) == "-62135683200000")
        #expect(render("2024-05-01 10:00:00.123456", .timestamp, epoch) == "1714557600123")
        #expect(render("1969-12-31 23:59:59.9995", .timestamp, epoch) == "-1")
        #expect(render("2024-05-01 12:00:00+02", .timestamptz, epoch) == "1714557600000")
        #expect(render("2024-05-01 04:30:00-05:30", .timestamptz, epoch) == "1714557600000")
        #expect(render("1850-01-01 00:53:28+00:53:28", .timestamptz, epoch) == "-3786825600000")
        #expect(render("infinity", .date, epoch) == #""infinity""#)
        #expect(render("-infinity", .timestamptz, epoch) == #""-infinity""#)
        #expect(render("10:00:00", .time, epoch) == #""10:00:00""#)
        #expect(render("5874897-12-31", .date, epoch) == "185331706992000000")
        #expect(render("999999999-12-31 23:59:59", .timestamp, epoch) == #""999999999-12-31T23:59:59""#)
    }

    // MARK: - Strings

    @Test func stringsAreEscaped() {
        #expect(render("Georgi", .varchar) == #""Georgi""#)
        #expect(render("a\"b\\c\n\t\u{1}", .text) == #""a\"b\\c\n\t\u0001""#)
        #expect(render("Ünïcødé ✓", .bpchar) == #""Ünïcødé ✓""#)
        #expect(render("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", .uuid) == #""a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11""#)
        #expect(render("pg_class", .name) == #""pg_class""#)
        #expect(render("192.168.0.1/24", PostgresType(oid: 99_999)) == #""192.168.0.1/24""#)
        #expect(render(bytes: [0x61, 0xFF, 0x62], .text) == "\"a\u{FFFD}b\"")
    }

    // MARK: - bytea

    @Test func byteaIsBase64() {
        #expect(render(#"\x"#, .bytea) == #""""#)
        #expect(render(#"\x01"#, .bytea) == #""AQ==""#)
        #expect(render(#"\x0102"#, .bytea) == #""AQI=""#)
        #expect(render(#"\x010203"#, .bytea) == #""AQID""#)
        #expect(render(#"\xDEADbeefff"#, .bytea) == #""3q2+7/8=""#)
        #expect(render(#"abc\001\\"#, .bytea) == #""YWJjAVw=""#)
        #expect(render(#"\x0g"#, .bytea) == #""\\x0g""#)
        #expect(render(#"\x012"#, .bytea) == #""\\x012""#)
    }

    // MARK: - Arrays

    @Test func oneDimensionalArrays() {
        #expect(render("{1,2,3}", .int4Array) == "[1,2,3]")
        #expect(render("{}", .int4Array) == "[]")
        #expect(render("{1,NULL,3}", .int8Array) == "[1,null,3]")
        #expect(render("{t,f,NULL}", .boolArray) == "[true,false,null]")
        #expect(render("{NaN,1.5,-Infinity}", .float8Array) == "[null,1.5,null]")
        #expect(render("{1.50,NaN}", .numericArray) == "[1.50,null]")
    }

    @Test func textArraysWithQuotesAndEscapes() {
        #expect(
            render(#"{a,"b c","d,e","f\"g","h\\i","NULL",null,NULL,""}"#, .textArray)
                == #"["a","b c","d,e","f\"g","h\\i","NULL",null,null,""]"#)
        #expect(render(#"{"{x}","\n"}"#, .varcharArray) == #"["{x}","n"]"#)
        #expect(render("{\"tab\there\"}", .textArray) == #"["tab\there"]"#)
    }

    @Test func multidimensionalArrays() {
        #expect(render("{{1,2},{3,NULL}}", .int4Array) == "[[1,2],[3,null]]")
        #expect(render("{{{1}},{{2}}}", .int2Array) == "[[[1]],[[2]]]")
        #expect(render(#"{{"a b",c},{NULL,"}"}}"#, .textArray) == #"[["a b","c"],[null,"}"]]"#)
        #expect(render("[0:1]={7,8}", .int4Array) == "[7,8]")
        #expect(render("[1:1][-1:0]={{7,8}}", .int4Array) == "[[7,8]]")
    }

    @Test func arraysOfDatesJSONAndBytea() {
        #expect(render(#"{2024-05-01,infinity,NULL}"#, .dateArray) == #"["2024-05-01","infinity",null]"#)
        #expect(render(#"{2024-05-01}"#, .dateArray, epoch) == "[1714521600000]")
        #expect(render(#"{"2024-05-01 10:00:00+02"}"#, .timestamptzArray) == #"["2024-05-01T10:00:00+02:00"]"#)
        #expect(render(#"{"2024-05-01 10:00:00"}"#, .timestampArray) == #"["2024-05-01T10:00:00"]"#)
        #expect(render(#"{"{\"a\": 1}",NULL,"[2]"}"#, .jsonbArray) == #"[{"a": 1},null,[2]]"#)
        #expect(render(#"{"\\x0102"}"#, .byteaArray) == #"["AQI="]"#)
        #expect(render(#"{(1,2),(3,4);(0,0),(1,1)}"#, .boxArray) == #"["(1,2),(3,4)","(0,0),(1,1)"]"#)
        #expect(render(#"{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}"#, .uuidArray) == #"["a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"]"#)
    }

    @Test func malformedArraysBecomeStrings() {
        #expect(render("{1,2", .int4Array) == #""{1,2""#)
        #expect(render("{1,,2}", .int4Array) == #""{1,,2}""#)
        #expect(render("{1}}", .int4Array) == #""{1}}""#)
        #expect(render("{1}{2}", .int4Array) == #""{1}{2}""#)
        #expect(render(#"{"a}"#, .textArray) == #""{\"a}""#)
        #expect(render("", .textArray) == #""""#)
        #expect(render("1,2", .int4Array) == #""1,2""#)
    }

    // MARK: - Types

    @Test func elementTypes() {
        #expect(PostgresType.int4Array.elementType == .int4)
        #expect(PostgresType.jsonbArray.elementType == .jsonb)
        #expect(PostgresType.text.elementType == nil)
        #expect(PostgresType(oid: 23) == .int4)
        #expect(PostgresType.boxArray.elementType?.arrayDelimiter == UInt8(ascii: ";"))
    }
}
