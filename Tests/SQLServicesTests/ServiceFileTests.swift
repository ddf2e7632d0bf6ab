import HTTPServer
import Testing
@testable import SQLServices

/// The parser alone: no database.
@Suite("Service files: parsing")
struct ServiceFileTests {
    func parse(_ text: String) throws -> ServiceFile {
        try ServiceFile(parsing: text, file: "f.sql")
    }

    /// The problems of a file that does not parse, as `LINE: message`.
    func problems(_ text: String) -> [String] {
        do {
            _ = try parse(text)
            return []
        } catch let error as ServiceProblems {
            return error.problems.map { "\($0.line): \($0.message)" }
        } catch {
            return ["\(error)"]
        }
    }

    @Test("the header: method, path, description paragraphs, directives")
    func header() throws {
        let file = try parse(
            """

            -- GET /departments/{departmentNumber}/managers/{from}
            -- One department's managers
            -- since a day.
            --
            -- A second paragraph.
            -- @param departmentNumber The department's number.
            -- @param limit = 10 At most this many.
            -- @param name = "a ""b"" c" Quoted.
            -- @returns list Manager
            -- @paged
            -- @service The departments.
            SELECT 1 AS one WHERE :departmentNumber IS NOT NULL;
            """)
        #expect(file.method == .get)
        #expect(file.path == "/departments/{departmentNumber}/managers/{from}")
        #expect(file.segments == [.literal("departments"), .variable("departmentNumber"), .literal("managers"), .variable("from")])
        #expect(file.routePath == "/?:departmentNumber/managers/?:from")
        #expect(file.serviceName == "departments")
        #expect(file.headerLine == 2)
        #expect(file.description == "One department's managers since a day.\n\nA second paragraph.")
        #expect(file.parameters.map(\.name) == ["departmentNumber", "limit", "name"])
        #expect(file.parameters.map(\.defaultText) == [nil, "10", "a \"b\" c"])
        #expect(file.parameters.map(\.description) == ["The department's number.", "At most this many.", "Quoted."])
        #expect(file.parameters.map(\.line) == [7, 8, 9])
        #expect(file.returns?.shape == .list && file.returns?.typeName == "Manager")
        #expect(file.pagedLine == 11)
        #expect(file.serviceDescription?.text == "The departments.")
        #expect(file.shape == .list, "@returns overrides the path")
        #expect(file.statements.count == 1)
        #expect(file.statements[0].line == 13)
    }

    @Test("the shape follows the path's last segment")
    func shape() throws {
        #expect(try parse("-- GET /a/{id}\nSELECT :id").shape == .object)
        #expect(try parse("-- GET /a\nSELECT 1").shape == .list)
        #expect(try parse("-- GET /a/{id}/b\nSELECT :id").shape == .list)
        #expect(try parse("-- GET /a/\nSELECT 1").routePath == "/")
    }

    @Test("a blank line ends the header: later comments belong to the SQL")
    func blankLineEndsTheHeader() throws {
        let file = try parse("-- GET /a\n-- Described.\n\n-- Not described.\nSELECT 1")
        #expect(file.description == "Described.")
        #expect(file.statements[0].line == 3)
        #expect(file.statements[0].codeLine == 5)
    }

    @Test("sections: @detail and @stream, dotted names, descriptions, lines")
    func sections() throws {
        let file = try parse(
            """
            -- GET /departments/{d}
            SELECT :d AS d;

            -- @detail managers Who managed it.
            SELECT 1 AS "employeeNumber";
              -- @detail managers.titles
            SELECT 'x' AS title
            -- @stream employees
            SELECT 2 AS n;
            """)
        #expect(file.sections.map(\.name) == ["managers", "managers.titles", "employees"])
        #expect(file.sections.map(\.isStreamed) == [false, false, true])
        #expect(file.sections.map(\.line) == [4, 6, 8])
        #expect(file.sections[0].description == "Who managed it.")
        #expect(file.sections[1].path == ["managers", "titles"])
        #expect(file.sections.map(\.statement.codeLine) == [5, 7, 9])
    }

    @Test("statements split at top-level semicolons only; directives in strings and comments are text")
    func statements() throws {
        let file = try parse(
            """
            -- POST /items
            INSERT INTO items (name) VALUES (';-- @detail x');
            /* -- @detail y; */ INSERT INTO log (note) VALUES ($$a;b$$);
            UPDATE items SET note = E'it\\'s;' RETURNING id
            """)
        #expect(file.statements.count == 3)
        #expect(file.statements.map(\.codeLine) == [2, 3, 4])
        #expect(file.sections.isEmpty)
    }

    @Test("an error position maps to the file's line")
    func positions() throws {
        let file = try parse("-- GET /a/{id}\n\nSELECT :id,\n  nope\nFROM t")
        let statement = file.statements[0]
        let sent = "\nSELECT $1,\n  nope\nFROM t"
        let position = sent.distance(from: sent.startIndex, to: sent.firstRange(of: "nope")!.lowerBound) + 1
        #expect(statement.line(atPosition: position) == 4)
    }

    @Test("@example: a parameter's value as a request sends it, the rest of the line or quoted")
    func examples() throws {
        let file = try parse(
            #"""
            -- GET /titles/{title}
            -- One title.
            -- @example title Senior Engineer
            -- @example since "  2024-05-01"
            -- @example q "say ""hi"""
            -- @example details pay,departments
            SELECT 1
            """#)
        #expect(file.examples.map(\.name) == ["title", "since", "q", "details"])
        #expect(file.examples.map(\.text) == ["Senior Engineer", "  2024-05-01", "say \"hi\"", "pay,departments"])
        #expect(file.examples.map(\.line) == [3, 4, 5, 6])
        #expect(file.description == "One title.")
        #expect(
            problems(
                "-- GET /a\n-- @example\n-- @example 1x 2\n-- @example x\n-- @example y \"open\n-- @example z 1\n-- @example z 2\nSELECT 1")
                == [
                    "2: @example needs a parameter's name and a value, as in `@example employeeNumber 10004`",
                    "3: @example needs a parameter's name and a value, as in `@example employeeNumber 10004`",
                    "4: @example x needs a value, as a request would send it (`@example x 10004`)",
                    "5: the value of @example y opens a quote that it does not close, or has text after it",
                    "7: @example z is given twice",
                ])
        #expect(problems("-- GET /a\nSELECT 1;\n-- @example z 1\nSELECT 2").first?.contains("@example belongs in the header") == true)
    }

    @Test("every problem of a file is reported, each at its line")
    func problemsAtTheirLines() {
        #expect(problems("SELECT 1") == ["1: the file must begin with a header comment such as `-- GET /employees/{employeeNumber}`"])
        #expect(
            problems("-- FETCH /a\nSELECT 1") == [
                "1: the header's first line must be a method and a path, such as `-- GET /employees/{employeeNumber}`; found `-- FETCH /a`"
            ])
        #expect(
            problems("-- GET /{id}\nSELECT 1") == ["1: the path must begin with the service's name, as in `/employees/{employeeNumber}`"])
        #expect(problems("-- GET /a/{id}/{id}\nSELECT 1") == ["1: the path names the variable {id} twice"])
        #expect(
            problems("-- GET /a/b?c\nSELECT 1") == [
                "1: the path segment `b?c` is neither a name (letters, digits, `-._~`) nor a variable such as {employeeNumber}"
            ])
        #expect(
            problems(
                """
                -- GET /a
                -- @frobnicate
                -- @returns table
                -- @param = 3
                -- @detail x
                SELECT 1;
                -- @param late
                -- @other
                SELECT 2
                """) == [
                    "2: unknown directive @frobnicate; the header takes @param, @returns, @paged, @filter, @order, @notfound, @service, @example, @listen, @writes, @unfiltered and @function",
                    "3: @returns takes `list` or `object`, and optionally the name of the returned structure",
                    "4: @param needs a parameter name, as in `@param employeeNumber The employee's number.`",
                    "5: @detail starts a section of its own: put it after the operation's statement, followed by the detail's query",
                    "7: @param belongs in the header, the comment lines before the first statement",
                    "8: unknown directive @other; sections start with @detail or @stream",
                    "9: a GET operation runs one statement; this file has 2 (only writes run several, in one transaction)",
                ])
        #expect(
            problems(
                "-- GET /a\nSELECT 1;\n-- @detail\nSELECT 2;\n-- @detail b\n-- @detail c\nSELECT 3; SELECT 4\n-- @stream s.t\nSELECT 5")
                == [
                    "3: @detail needs a name, dotted for a detail of a detail: `@detail titles`, `@detail managers.titles`",
                    "5: the detail \"b\" has no query",
                    "6: the detail \"c\" holds 2 statements; a detail is one query",
                    "8: @stream needs the name of the member, such as `@stream employees`",
                ])
        #expect(problems("-- GET /a\n-- Only a header.\n") == ["3: the file has no SQL statement after its header"])
        #expect(
            problems("-- GET /a\n-- @param x = \"open\nSELECT :x") == ["2: the default of @param x opens a quote that it does not close"])
    }
}
