@testable import PostgreSQLWebService
import Testing

/// Names and literals spliced into SQL: each quote byte doubled, every
/// other byte kept, whatever characters the bytes make.
@Suite struct QuotingTests {
    @Test("a quote is doubled byte by byte: one a combining mark follows (one Character with it) included")
    func quotesDoubled() {
        let cases: [(text: String, identifier: String, literal: String)] = [
            ("", #""""#, "''"),
            ("\"", #""""""#, "'\"'"),
            ("'", #""'""#, "''''"),
            ("\"\"\"", #""""""""""#, "'\"\"\"'"),
            ("a\"b'c", #""a""b'c""#, "'a\"b''c'"),
            // A quote and a combining accent are one Character: a search by Character misses the quote.
            ("x\"\u{301}; DROP TABLE t; --", "\"x\"\"\u{301}; DROP TABLE t; --\"", "'x\"\u{301}; DROP TABLE t; --'"),
            ("x'\u{301}) OR true --", "\"x'\u{301}) OR true --\"", "'x''\u{301}) OR true --'"),
            ("é😀\u{0}\"", "\"é😀\u{0}\"\"\"", "'é😀\u{0}\"'"),
        ]
        for (text, identifier, literal) in cases {
            #expect(quoted(text) == identifier)
            #expect(quotedLiteral(text) == literal)
            #expect(Array(quoted(text).utf8) == Self.doubled(text, UInt8(ascii: "\"")))
            #expect(Array(quotedLiteral(text).utf8) == Self.doubled(text, UInt8(ascii: "'")))
        }
    }

    /// `text`'s bytes between two `mark`s, each `mark` within doubled.
    static func doubled(_ text: String, _ mark: UInt8) -> [UInt8] {
        [mark] + text.utf8.flatMap { $0 == mark ? [mark, mark] : [$0] } + [mark]
    }
}
