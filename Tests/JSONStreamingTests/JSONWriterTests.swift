import Testing
@testable import JSONStreaming

private func json(_ body: (inout [UInt8]) -> Void) -> String {
    var out: [UInt8] = []
    body(&out)
    return String(decoding: out, as: UTF8.self)
}

private func jsonString(bytes: [UInt8]) -> String {
    json { out in bytes.withUnsafeBytes { JSONWriter.appendString(utf8: $0, to: &out) } }
}

@Test func escapesQuotesBackslashesAndControlCharacters() {
    #expect(json { JSONWriter.appendString("a\"b\\c\nd\te\r\u{08}\u{0C}", to: &$0) } == #""a\"b\\c\nd\te\r\b\f""#)
    #expect(json { JSONWriter.appendString("\u{00}\u{1F}", to: &$0) } == #""\u0000\u001f""#)
}

@Test func keepsValidMultibyteUTF8() {
    #expect(json { JSONWriter.appendString("Zoë 東京 🎉", to: &$0) } == "\"Zoë 東京 🎉\"")
}

@Test func replacesInvalidUTF8WithReplacementCharacter() {
    #expect(jsonString(bytes: [0x61, 0xFF, 0x62]) == "\"a\u{FFFD}b\"")
    #expect(jsonString(bytes: [0xC0, 0xAF]) == "\"\u{FFFD}\u{FFFD}\"")  // overlong
    #expect(jsonString(bytes: [0xED, 0xA0, 0x80]) == "\"\u{FFFD}\u{FFFD}\u{FFFD}\"")  // surrogate
    #expect(jsonString(bytes: [0x61, 0xE2, 0x82]) == "\"a\u{FFFD}\u{FFFD}\"")  // truncated
}

@Test func writesNumbers() {
    #expect(json { JSONWriter.appendInteger(0, to: &$0) } == "0")
    #expect(json { JSONWriter.appendInteger(-10004, to: &$0) } == "-10004")
    #expect(json { JSONWriter.appendInteger(Int64.min, to: &$0) } == "-9223372036854775808")
    #expect(json { JSONWriter.appendInteger(UInt64.max, to: &$0) } == "18446744073709551615")
    #expect(json { JSONWriter.appendDouble(6, to: &$0) } == "6")
    #expect(json { JSONWriter.appendDouble(0.1, to: &$0) } == "0.1")
    #expect(json { JSONWriter.appendDouble(.nan, to: &$0) } == "null")
    #expect(json { JSONWriter.appendDouble(-.infinity, to: &$0) } == "null")
}

/// The same string written through a ``ByteWriter``.
private func jsonStringThroughWriter(bytes: [UInt8]) -> String {
    let writer = ByteWriter(capacity: 16)
    var output = writer
    bytes.withUnsafeBytes { JSONWriter.appendString(utf8: $0, to: &output) }
    var out: [UInt8] = []
    writer.flush(into: &out)
    return String(decoding: out, as: UTF8.self)
}

@Test("every byte that needs care is found at every position of a plain run of every length")
func findsSpecialBytesInsideWordsOfPlainText() {
    // The writer skips plain text eight bytes at a time and looks at the
    // last few in one word (read three ways, by length): put each kind of
    // byte at each offset of strings of 1 to 19 bytes and compare with the
    // expected text, written to an array and through a ByteWriter.
    let cases: [(bytes: [UInt8], escaped: String)] = [
        ([0x22], #"\""#), ([0x5C], #"\\"#), ([0x0A], #"\n"#), ([0x00], #"\u0000"#), ([0x1F], #"\u001f"#),
        ([0xC3, 0xA9], "é"), ([0xFF], "\u{FFFD}"), ([0x7F], "\u{7F}"), ([0x20], " "), ([0x21], "!"), ([0x23], "#"),
        ([0x5B], "["), ([0x5D], "]"),
    ]
    for (special, escaped) in cases {
        for length in special.count...19 {
            for offset in 0...length - special.count {
                var bytes = Array(repeating: UInt8(ascii: "a"), count: length)
                bytes.replaceSubrange(offset..<offset + special.count, with: special)
                let prefix = String(repeating: "a", count: offset)
                let suffix = String(repeating: "a", count: length - offset - special.count)
                let expected = "\"" + prefix + escaped + suffix + "\""
                #expect(jsonString(bytes: bytes) == expected)
                #expect(jsonStringThroughWriter(bytes: bytes) == expected)
            }
        }
    }
}

@Test("a ByteWriter copies appends of every length whole, across its growth")
func byteWriterCopiesEveryLength() {
    // Short appends are copied inline in overlapping words (up to 32
    // bytes), longer ones by memcpy: each length once, in order.
    let writer = ByteWriter(capacity: 16)
    var expected: [UInt8] = []
    for length in 0...70 {
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ length) }
        bytes.withUnsafeBytes { writer.append(raw: $0) }
        expected += bytes
    }
    #expect(Array(writer.bytes) == expected)
}

@Test func writesArraysAndObjectsWithCommasBetweenMembers() {
    #expect(json { JSONWriter.appendArray([Int](), to: &$0) { JSONWriter.appendInteger($0, to: &$1) } } == "[]")
    #expect(json { JSONWriter.appendArray([1, -2, 3], to: &$0) { JSONWriter.appendInteger($0, to: &$1) } } == "[1,-2,3]")
    #expect(json { JSONWriter.appendObject([(key: String, value: Bool)](), to: &$0) { JSONWriter.appendBool($0, to: &$1) } } == "{}")
    let members: [(key: String, value: Bool)] = [(key: "z", value: true), (key: "a\"b", value: false)]
    #expect(json { JSONWriter.appendObject(members, to: &$0) { JSONWriter.appendBool($0, to: &$1) } } == #"{"z":true,"a\"b":false}"#)
}
