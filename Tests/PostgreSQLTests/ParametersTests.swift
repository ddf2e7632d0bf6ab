import Testing
@testable import PostgreSQL
@testable import PostgreSQLWebService

@Suite("Parameters.parse")
struct ParametersTests {
    private func expectParse(_ sql: String, _ expected: String, _ names: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        let parameters = Parameters.parse(sql)
        #expect(parameters.sql == expected, sourceLocation: sourceLocation)
        #expect(parameters.names == names, sourceLocation: sourceLocation)
    }

    // MARK: - Names

    @Test func namedParametersBecomePositional() {
        expectParse(
            "SELECT * FROM employees WHERE emp_no = :employeeNumber AND name LIKE :name",
            "SELECT * FROM employees WHERE emp_no = $1 AND name LIKE $2",
            ["employeeNumber", "name"])
    }

    @Test func repeatedNameReusesItsPlaceholder() {
        expectParse(":a, :b, :a, :c, :b", "$1, $2, $1, $3, $2", ["a", "b", "c"])
    }

    @Test func nameCharacters() {
        expectParse(":_x1 :a_b_2 :Z9", "$1 $2 $3", ["_x1", "a_b_2", "Z9"])
        expectParse(":1 :$ :.x : x", ":1 :$ :.x : x", [])
        expectParse(":émp_nö+1", "$1+1", ["émp_nö"])
    }

    @Test func nameEndsAtPunctuation() {
        expectParse("(:a,:b);:c", "($1,$2);$3", ["a", "b", "c"])
        expectParse("f(:x)::int", "f($1)::int", ["x"])
        expectParse(":x::int", "$1::int", ["x"])
        expectParse(":x.y", "$1.y", ["x"])
    }

    @Test func noSQLIsUnchanged() {
        expectParse("", "", [])
        expectParse("SELECT 1", "SELECT 1", [])
    }

    // MARK: - Operators next to a colon (HTTP-RPC's lookahead bug)

    @Test func minusAndSlashBeforeAParameter() {
        expectParse("a -:x", "a -$1", ["x"])
        expectParse("a /:x", "a /$1", ["x"])
        expectParse("a-:x", "a-$1", ["x"])
        expectParse("a/:x", "a/$1", ["x"])
        expectParse("-:x", "-$1", ["x"])
        expectParse("a *:x+:y", "a *$1+$2", ["x", "y"])
        expectParse("a <>:x", "a <>$1", ["x"])
    }

    @Test func parameterAfterAWordGetsASpace() {
        expectParse("LIMIT:n", "LIMIT $1", ["n"])
        expectParse("OFFSET 1:n", "OFFSET 1 $1", ["n"])
    }

    // MARK: - Casts and other colons

    @Test func castsAreKept() {
        expectParse("SELECT '5'::int, x::text[], :a::date", "SELECT '5'::int, x::text[], $1::date", ["a"])
        expectParse("a:::x", "a::$1", ["x"])
        expectParse("f(a := 1, b => :c)", "f(a := 1, b => $1)", ["c"])
        expectParse("x :", "x :", [])
    }

    // MARK: - Quoted text

    @Test func singleQuotedStringsAreKept() {
        expectParse("SELECT ':a', :b", "SELECT ':a', $1", ["b"])
        expectParse("'it''s :a' || :b", "'it''s :a' || $1", ["b"])
        expectParse("'a\\' :b", "'a\\' $1", ["b"])
        expectParse("'unterminated :a", "'unterminated :a", [])
    }

    @Test func escapeStringsKeepBackslashEscapedQuotes() {
        expectParse("E'it\\'s :a' || :b", "E'it\\'s :a' || $1", ["b"])
        expectParse("e'\\\\' :b", "e'\\\\' $1", ["b"])
        expectParse("E'x'':a' :b", "E'x'':a' $1", ["b"])
        // `nE` is an identifier followed by an ordinary string.
        expectParse("nE'\\' :b '", "nE'\\' $1 '", ["b"])
        expectParse("U&'\\' :b", "U&'\\' $1", ["b"])
    }

    @Test func quotedIdentifiersAreKept() {
        expectParse("SELECT \"a:b\", \"x\"\":y\" FROM t WHERE c = :c", "SELECT \"a:b\", \"x\"\":y\" FROM t WHERE c = $1", ["c"])
    }

    @Test func dollarQuotedStringsAreKept() {
        expectParse("SELECT $$ :a ' $$, :b", "SELECT $$ :a ' $$, $1", ["b"])
        expectParse("$fn$ :a $$ :b $fn$ :c", "$fn$ :a $$ :b $fn$ $1", ["c"])
        expectParse("$a$ :x $b$ :y $a$:z", "$a$ :x $b$ :y $a$ $1", ["z"])
        expectParse("$$ unterminated :a", "$$ unterminated :a", [])
    }

    @Test func positionalParametersAreNotDollarQuotes() {
        expectParse("SELECT $1, :a, $2", "SELECT $1, $1, $2", ["a"])
        expectParse("$1$ :a", "$1$ $1", ["a"])
        expectParse("$ :a", "$ $1", ["a"])
        expectParse("$1 || $tag ':x' :y", "$1 || $tag ':x' $1", ["y"])
    }

    @Test func dollarInIdentifiersIsNotAQuote() {
        expectParse("SELECT foo$$ :a, b$1$ :c", "SELECT foo$$ $1, b$1$ $2", ["a", "c"])
    }

    // MARK: - Comments

    @Test func lineCommentsAreKept() {
        expectParse("SELECT :a -- :b\n, :c", "SELECT $1 -- :b\n, $2", ["a", "c"])
        expectParse("SELECT 1 -- :b", "SELECT 1 -- :b", [])
        expectParse("-- :a\r:b", "-- :a\r$1", ["b"])
    }

    @Test func blockCommentsNest() {
        expectParse("/* :a /* :b */ :c */ :d", "/* :a /* :b */ :c */ $1", ["d"])
        expectParse("/* :a */ :b /* :c */", "/* :a */ $1 /* :c */", ["b"])
        expectParse("/* unterminated :a", "/* unterminated :a", [])
        expectParse("/*/ :a */ :b", "/*/ :a */ $1", ["b"])
    }

    // MARK: - Array slices

    @Test func arraySlicesKeepTheirColon() {
        expectParse("a[1:2]", "a[1:2]", [])
        expectParse("a[lo:hi]", "a[lo:hi]", [])
        expectParse("a[1:n]", "a[1:n]", [])
        expectParse("a[f(x) :hi]", "a[f(x) :hi]", [])
        expectParse("a[1: hi]", "a[1: hi]", [])
        expectParse("a[: hi]", "a[: hi]", [])
        expectParse("a[x][1:y]", "a[x][1:y]", [])
    }

    @Test func parametersInsideBrackets() {
        expectParse("a[:i]", "a[$1]", ["i"])
        expectParse("a[:lo:hi]", "a[$1:hi]", ["lo"])
        expectParse("a[:lo : :hi]", "a[$1 : $2]", ["lo", "hi"])
        expectParse("a[1 : :hi]", "a[1 : $1]", ["hi"])
        expectParse("ARRAY[:x, :y]", "ARRAY[$1, $2]", ["x", "y"])
        expectParse("a[1]:x", "a[1]$1", ["x"])
    }

    @Test func unbalancedBracketsDoNotConfuseTheScanner() {
        expectParse("] :a [ b :c", "] $1 [ b :c", ["a"])
    }
}
