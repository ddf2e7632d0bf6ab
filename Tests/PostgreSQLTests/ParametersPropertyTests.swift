import Testing
@testable import PostgreSQL
@testable import PostgreSQLWebService

/// Randomised tests of `Parameters.parse` with a seeded generator, so that
/// every failure can be replayed from the seed in its message.
@Suite("Parameters.parse properties")
struct ParametersPropertyTests {
    /// SplitMix64: small, fast and reproducible.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    // MARK: - Structured SQL: exact output

    /// SQL made of tokens separated by spaces, each with its known output:
    /// quoted text and comments (full of colons, quotes and dollars) must come
    /// out unchanged and every `:name` as its placeholder.
    @Test(arguments: 0..<20)
    func tokensComeOutAsExpected(seed: UInt64) {
        var random = SeededGenerator(state: seed)
        for _ in 0..<200 {
            var input: [String] = []
            var expected: [String] = []
            var names: [String] = []
            for _ in 0..<Int.random(in: 0...12, using: &random) {
                let token = Self.structuredToken(using: &random)
                input.append(token.text)
                if let name = token.parameter {
                    if !names.contains(name) { names.append(name) }
                    expected.append("$\(names.firstIndex(of: name)! + 1)")
                } else {
                    expected.append(token.text)
                }
            }
            let sql = input.joined(separator: " ")
            let parameters = Parameters.parse(sql)
            #expect(parameters.sql == expected.joined(separator: " "), "seed \(seed): \(sql)")
            #expect(parameters.names == names, "seed \(seed): \(sql)")
        }
    }

    static func structuredToken(using random: inout SeededGenerator) -> (text: String, parameter: String?) {
        let names = ["a", "employeeNumber", "_x", "B2", "name_1", "émp"]
        let inside = [":a", "::", "'", "\"", "$", "$1", "--", "\\", "[1:x]", ":b:", " ", "é", "x"]
        func content(_ pieces: [String], _ random: inout SeededGenerator) -> String {
            (0..<Int.random(in: 0...5, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
        }
        switch Int.random(in: 0..<14, using: &random) {
        case 0, 1:
            let name = names.randomElement(using: &random)!
            return (":" + name, name)
        case 2:
            let pieces = inside.filter { $0 != "'" } + ["''"]
            return ("'" + content(pieces, &random) + "'", nil)
        case 3:
            let pieces = inside.filter { $0 != "'" && $0 != "\\" } + ["''", "\\'", "\\\\"]
            return ("E'" + content(pieces, &random) + "'", nil)
        case 4:
            let pieces = inside.filter { $0 != "\"" } + ["\"\""]
            return ("\"" + content(pieces, &random) + "\"", nil)
        case 5:
            let tag = ["", "t", "fn_1"].randomElement(using: &random)!
            let pieces = tag.isEmpty ? inside.filter { !$0.contains("$") } : inside + ["$$"]
            return ("$\(tag)$" + content(pieces, &random) + "$\(tag)$", nil)
        case 6:
            return ("--" + content(inside + ["/*"], &random) + "\n", nil)
        case 7:
            let pieces = inside + ["/* :c */", "/* /* :d */ */", "-", "*:", "/:"]
            return ("/*" + content(pieces, &random) + "*/", nil)
        case 8:
            return (["'5'::int", "x::text[]", "::date", "a := 1", "b => 2"].randomElement(using: &random)!, nil)
        case 9:
            return (["a[1:2]", "a[lo:hi]", "a[1:n]", "a[f(x):y]", "a[: hi]", "b[1]"].randomElement(using: &random)!, nil)
        case 10:
            return (["$1", "$23", "foo$$", "x$y", "E", "U&"].randomElement(using: &random)!, nil)
        case 11:
            return (["-", "/", "+", "*", "=", "<>", "(", ")", ",", ";", ":"].randomElement(using: &random)!, nil)
        default:
            return (["SELECT", "FROM", "emp_no", "12", "1.5e3", "x", "WHERE"].randomElement(using: &random)!, nil)
        }
    }

    // MARK: - Random soup: invariants

    /// Any mix of SQL-ish characters: no crash, valid distinct names, every
    /// placeholder within `names`, and nothing changed but the parameters.
    @Test(arguments: 0..<20)
    func anyInputKeepsTheInvariants(seed: UInt64) {
        var random = SeededGenerator(state: 1000 + seed)
        let alphabet = [
            ":", ":", "::", ":a", ":b", ":_c", "'", "\"", "$", "$$", "$t$", "--", "/*", "*/", "\n", "[", "]",
            "a", "b", "x", "_", "E", "e", " ", "-", "/", "*", "\\", "é", "(", ")", ",", "=",
        ]
        for _ in 0..<300 {
            let sql = (0..<Int.random(in: 0...40, using: &random)).map { _ in alphabet.randomElement(using: &random)! }.joined()
            let parameters = Parameters.parse(sql)
            #expect(Set(parameters.names).count == parameters.names.count, "seed \(seed): \(sql)")
            for name in parameters.names {
                #expect(Self.isValidName(name), "seed \(seed): \(sql) gave \(name)")
            }
            let placeholders = Self.placeholders(in: parameters.sql)
            #expect(placeholders.allSatisfy { (1...parameters.names.count).contains($0.number) }, "seed \(seed): \(sql)")
            #expect(Set(placeholders.map(\.number)).count == parameters.names.count, "seed \(seed): \(sql)")
            #expect(Self.restoringNames(parameters) == sql.filter { $0 != " " }, "seed \(seed): \(sql)")
            if !sql.contains(":") {
                #expect(parameters.sql == sql && parameters.names.isEmpty, "seed \(seed): \(sql)")
            }
        }
    }

    static func isValidName(_ name: String) -> Bool {
        guard let first = name.utf8.first, first != UInt8(ascii: "$"), !(first >= 0x30 && first <= 0x39) else { return false }
        return name.utf8.allSatisfy { byte in
            byte >= 0x80 || byte == UInt8(ascii: "_") || (byte >= 0x30 && byte <= 0x39)
                || ((byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z"))
        }
    }

    /// `$n` placeholders (the soup has no digits, so all come from names).
    static func placeholders(in sql: String) -> [(range: Range<Int>, number: Int)] {
        let bytes = Array(sql.utf8)
        var found: [(Range<Int>, Int)] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "$") {
                var end = index + 1
                while end < bytes.count, bytes[end] >= 0x30, bytes[end] <= 0x39 { end += 1 }
                if end > index + 1 {
                    found.append((index..<end, Int(String(decoding: bytes[(index + 1)..<end], as: UTF8.self))!))
                    index = end
                    continue
                }
            }
            index += 1
        }
        return found
    }

    /// The output with every placeholder back to `:name`, without spaces
    /// (the scanner may add one before a placeholder).
    static func restoringNames(_ parameters: Parameters) -> String {
        let bytes = Array(parameters.sql.utf8)
        var restored: [UInt8] = []
        var index = 0
        for placeholder in placeholders(in: parameters.sql) {
            restored += bytes[index..<placeholder.range.lowerBound]
            restored += Array((":" + parameters.names[placeholder.number - 1]).utf8)
            index = placeholder.range.upperBound
        }
        restored += bytes[index...]
        return String(decoding: restored, as: UTF8.self).filter { $0 != " " }
    }
}
