import Testing
@testable import PostgreSQL

/// SQL text taken apart by the lexer: statements, line comments, placeholders, words that write.
@Suite("SQLScript")
struct SQLScriptTests {
    @Test("statements end at top-level semicolons, not those in strings, identifiers, dollar quotes or comments")
    func statements() {
        let sql = """
            INSERT INTO t VALUES (';', "a;b", $$x;y$$, $tag$;$tag$); -- a; comment
            /* ; */ UPDATE t SET a = E'\\';' ;;
            -- only a comment;
            SELECT '\\'
            """
        let statements = SQLScript.statements(in: sql)
        #expect(
            statements.map(\.text) == [
                #"INSERT INTO t VALUES (';', "a;b", $$x;y$$, $tag$;$tag$)"#,
                " -- a; comment\n/* ; */ UPDATE t SET a = E'\\';' ",
                "\n-- only a comment;\nSELECT '\\'",
            ])
        for statement in statements {
            #expect(
                String(decoding: Array(sql.utf8)[statement.utf8Offset...].prefix(statement.text.utf8.count), as: UTF8.self)
                    == statement.text)
        }
        #expect(SQLScript.statements(in: " ; -- nothing\n").isEmpty)
    }

    @Test("line comments outside strings and block comments, without their line break")
    func lineComments() {
        let comments = SQLScript.lineComments(in: "SELECT '--' -- one\r\n/* -- not */ \"--\" --two\n--three")
        #expect(comments.map(\.text) == ["-- one", "--two", "--three"])
    }

    @Test("placeholders with their offsets, outside strings")
    func placeholders() {
        var found: [[Int]] = []
        SQLScript.placeholders(in: "SELECT '$1', $2, $$ $3 $$, $10") { found.append([$0, $1]) }
        #expect(found == [[2, 13], [10, 27]])
    }

    @Test("a backslash escapes only in E'' strings: a standard string ending in one does not swallow what follows")
    func backslashes() {
        #expect(SQLTokens.aliases(in: #"SELECT replace(x, '\', '\\') AS firstName"#) == ["firstname": "firstName"])
        #expect(SQLTokens.aliases(in: #"SELECT E'\'' AS lastName"#) == ["lastname": "lastName"])
    }

    @Test("words that write or lock, outside strings and comments")
    func writingWords() {
        #expect(SQLTokens.hasWritingWord("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d"))
        #expect(SQLTokens.hasWritingWord("SELECT * FROM t FOR SHARE"))
        #expect(SQLTokens.hasWritingWord("select * from t for update"))
        #expect(!SQLTokens.hasWritingWord("SELECT 'update', \"delete\" FROM t -- insert"))
        #expect(!SQLTokens.hasWritingWord("SELECT share FROM t"))
    }

    /// PostgreSQL's scanner ends a `--` comment at `\n` or `\r` (scan.l:
    /// `newline [\n\r]`): what follows a lone carriage return is code, and
    /// a write hidden there must be seen, as PostgreSQL runs it.
    @Test("a -- comment ends at a lone carriage return, as PostgreSQL's scanner ends it")
    func carriageReturnEndsAComment() {
        #expect(SQLTokens.hasWritingWord("WITH kept AS (SELECT 1) -- read only\r, gone AS (DELETE FROM t RETURNING *) SELECT * FROM gone"))
        #expect(SQLScript.statements(in: "SELECT 1 -- one\rSELECT 2; SELECT 3").map(\.text) == ["SELECT 1 -- one\rSELECT 2", " SELECT 3"])
        #expect(SQLScript.statements(in: "SELECT 1 -- a;\r; SELECT 2").count == 2)
        #expect(SQLScript.lineComments(in: "SELECT 1 -- one\r-- two\r\n").map(\.text) == ["-- one", "-- two"])
        var found: [Int] = []
        SQLScript.placeholders(in: "SELECT 1 -- $1\r+ $2") { number, _ in found.append(number) }
        #expect(found == [2])
        #expect(Parameters.parse("SELECT 1 -- :a\r+ :b").names == ["b"])
    }
}
