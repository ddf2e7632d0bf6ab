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
    #expect(jsonString(bytes: [0xC0, 0xAF]) == "\"\u{FFFD}\u{FFFD}\"")            // overlong
    #expect(jsonString(bytes: [0xED, 0xA0, 0x80]) == "\"\u{FFFD}\u{FFFD}\u{FFFD}\"") // surrogate
    #expect(jsonString(bytes: [0x61, 0xE2, 0x82]) == "\"a\u{FFFD}\u{FFFD}\"")       // truncated
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

@Test("every byte that needs care is found at every position of a long plain run")
func findsSpecialBytesInsideWordsOfPlainText() {
    // The writer skips plain text eight bytes at a time: put each kind of
    // byte at each offset of a 19-byte string and compare with the expected text.
    let cases: [(bytes: [UInt8], escaped: String)] = [
        ([0x22], #"\""#), ([0x5C], #"\\"#), ([0x0A], #"\n"#), ([0x00], #"\u0000"#), ([0x1F], #"\u001f"#),
        ([0xC3, 0xA9], "é"), ([0xFF], "\u{FFFD}"), ([0x7F], "\u{7F}"), ([0x20], " "), ([0x21], "!"), ([0x23], "#"),
        ([0x5B], "["), ([0x5D], "]"),
    ]
    for (special, escaped) in cases {
        for offset in 0...19 - special.count {
            var bytes = Array(repeating: UInt8(ascii: "a"), count: 19)
            bytes.replaceSubrange(offset..<offset + special.count, with: special)
            let prefix = String(repeating: "a", count: offset)
            let suffix = String(repeating: "a", count: 19 - offset - special.count)
            #expect(jsonString(bytes: bytes) == "\"" + prefix + escaped + suffix + "\"")
        }
    }
}
