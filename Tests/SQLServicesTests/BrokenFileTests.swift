import Foundation
import PostgreSQL
import SQLServices
import Testing

/// Each kind of broken service file, checked against the real database:
/// every problem reported at once, each as `FILE:LINE: message`.
@Suite("Broken service files fail loudly")
struct BrokenFileTests {
    @Test("the server's own errors, at the line they point to: syntax, unknown column, unknown table, untyped parameter")
    func databaseErrors() throws {
        let problems = try Environment.problems([
            "syntax.sql": "-- GET /a\n-- Described.\nSELECT emp_no,\nFROM employees",
            "column.sql": "-- GET /b/{employeeNumber}\nSELECT first_name,\n       emp_nox\nFROM employees WHERE emp_no = :employeeNumber",
            "table.sql": "-- GET /c\n\n-- A comment first.\nSELECT * FROM employeez",
            "untyped.sql": "-- GET /d\nSELECT 1 AS one\nWHERE :what IS NULL",
            "detail.sql":
                "-- GET /e/{id}\nSELECT emp_no AS id FROM employees WHERE emp_no = :id;\n\n-- @detail titles\nSELECT title FROM titlez WHERE emp_no = :id",
        ])
        #expect(
            problems == [
                "column.sql:3: column \"emp_nox\" does not exist (Perhaps you meant to reference the column \"employees.emp_no\".)",
                "detail.sql:5: relation \"titlez\" does not exist",
                "syntax.sql:4: syntax error at or near \"FROM\"",
                "table.sql:4: relation \"employeez\" does not exist",
                "untyped.sql:3: could not determine data type of parameter :what; give it a type with a cast, as in `CAST(:name AS integer)` or `:name::integer`",
            ])
    }

    @Test("a GET whose statement or detail writes or locks rows")
    func getsOnlyRead() throws {
        let problems = try Environment.problems([
            "cte.sql": "-- GET /a\nWITH gone AS (DELETE FROM titles WHERE false RETURNING title)\nSELECT title FROM gone",
            "lock.sql": "-- GET /b\nSELECT dept_no FROM departments FOR UPDATE",
            "detail.sql":
                "-- GET /c/{id}\nSELECT emp_no AS id FROM employees WHERE emp_no = :id;\n-- @detail x\nUPDATE titles SET title = title WHERE emp_no = :id AND false RETURNING title",
            "fine.sql": "-- GET /d\nSELECT dept_no FROM departments",
        ])
        #expect(
            problems == [
                "cte.sql:2: a GET statement must only read, but this one writes (its plan modifies a table or locks rows); use POST, PUT, PATCH or DELETE",
                "detail.sql:4: a detail of a GET must only read, but this one writes (its plan modifies a table or locks rows); use POST, PUT, PATCH or DELETE",
                "lock.sql:2: a GET statement must only read, but this one writes (its plan modifies a table or locks rows); use POST, PUT, PATCH or DELETE",
            ])
    }

    @Test("directives that do not fit the statements")
    func directives() throws {
        let problems = try Environment.problems([
            "unused.sql": "-- GET /a/{id}/{other}\n-- @param nothing Not used.\nSELECT emp_no FROM employees WHERE emp_no = :id",
            "detail.sql": """
            -- GET /b/{id}
            SELECT emp_no AS "employeeNumber" FROM employees WHERE emp_no = :id;
            -- @detail titles
            SELECT title FROM titles WHERE emp_no = :employee AND title <> :title
            """,
            "nested.sql":
                "-- GET /c/{id}\nSELECT emp_no AS n FROM employees WHERE emp_no = :id;\n-- @detail a.b\nSELECT 1 AS one;\n-- @stream s\nSELECT 2 AS two;\n-- @detail s.t\nSELECT 3 AS three",
            "shapes.sql": "-- GET /d/{id}\n-- @paged\nSELECT emp_no FROM employees WHERE emp_no = :id",
            "stream.sql": "-- GET /e\n-- @notfound Gone.\nSELECT emp_no FROM employees;\n-- @stream all\nSELECT 1 AS one",
            "notfound.sql": "-- GET /f/{id}\n-- @notfound No {id} {nope}.\nSELECT emp_no FROM employees WHERE emp_no = :id",
            "default.sql": "-- GET /g\n-- @param n = ten A number.\nSELECT emp_no FROM employees WHERE emp_no = :n",
            "reserved.sql":
                "-- GET /h\n-- @paged\nSELECT emp_no FROM employees WHERE :details::text IS NULL LIMIT :limit;\n-- @detail x\nSELECT 1 AS one",
            "write.sql": "-- POST /i\n-- @paged\nUPDATE titles SET title = title WHERE false;\n-- @detail x\nSELECT 1",
            "health.sql": "-- GET /health/x\nSELECT 1 AS one",
            "path.sql": "-- GET /j/{id}\n-- @param id = 3 Defaulted.\nSELECT :id::int AS id",
        ])
        #expect(
            problems == [
                "default.sql:2: the default of @param n, \"ten\", is not a valid integer",
                "detail.sql:4: the detail \"titles\" uses :employee, which neither its parent's columns (employeeNumber) nor the request provide; label a column \"employee\", or declare @param employee",
                "detail.sql:4: the detail \"titles\" uses :title, which neither its parent's columns (employeeNumber) nor the request provide; label a column \"title\", or declare @param title",
                "health.sql:1: /health is reserved for the server's health checks; name the service otherwise",
                "nested.sql:3: the detail \"a.b\" is nested in \"a\", which the file does not declare before it",
                "nested.sql:7: the detail \"s.t\" is nested in \"s\", a streamed member, which takes no detail",
                "notfound.sql:2: @notfound names {nope}, which is not a parameter of the operation",
                "path.sql:2: @param id is a path variable, which a request always gives: it takes no default",
                "reserved.sql:1: the parameter \"details\" is the operation's own (the details asked for): rename :details",
                "reserved.sql:1: the parameter \"limit\" is the operation's own (the page): rename :limit",
                "shapes.sql:2: @paged pages a list, and this operation returns an object (`@returns list` makes it a list)",
                "stream.sql:2: @notfound is the 404 of an operation that returns an object; a list without rows is []",
                "stream.sql:4: @stream adds a streamed member to an object; in a list, use @detail",
                "unused.sql:1: the path variable {other} is not used by any statement (as :other)",
                "unused.sql:2: @param nothing: no statement uses :nothing",
                "write.sql:2: @paged pages what a GET lists",
                "write.sql:4: @detail nests a query in what a GET returns; a POST answers with its last statement's rows",
            ])
    }

    @Test("@example: a parameter the operation has, and a value it takes")
    func examples() throws {
        let problems = try Environment.problems([
            "a.sql": """
            -- GET /employees/{employeeNumber}
            -- @example employeeNumber ten
            -- @example number 10004
            -- @example details bonus
            SELECT emp_no AS "employeeNumber" FROM employees WHERE emp_no = :employeeNumber;
            -- @detail titles
            SELECT title FROM titles WHERE emp_no = :employeeNumber
            """,
            "b.sql": """
            -- GET /employees
            -- @paged
            -- @filter *
            -- @order *
            -- @example limit -1
            -- @example lastName eq.Facello
            -- @example firstName Georgi
            -- @example order hireDate
            SELECT emp_no AS "employeeNumber", first_name AS "firstName", last_name AS "lastName" FROM employees
            """,
            "c.sql": """
            -- GET /departments/{number}
            -- @example number d005
            -- @example select departmentName
            SELECT dept_no AS number, dept_name AS "departmentName" FROM departments WHERE dept_no = :number
            """,
        ])
        #expect(
            problems == [
                "a.sql:2: the value of @example employeeNumber, \"ten\", is not a valid integer",
                "a.sql:3: @example names \"number\", which is not a parameter of the operation; its parameters are employeeNumber, details, select",
                "a.sql:4: the value of @example details, \"bonus\", is not a valid EmployeeDetail",
                "b.sql:5: the value of @example limit, \"-1\", is not a valid integer of 0 or more",
                "b.sql:7: the value of @example firstName, \"Georgi\", is refused: \"failed to parse filter (Georgi)\" (line 1, column 1)",
                "b.sql:8: the value of @example order, \"hireDate\", is refused: column employees.hireDate does not exist",
            ])
    }

    @Test("two files for one method and path, whatever their variables are called")
    func duplicateRoutes() throws {
        let problems = try Environment.problems([
            "a/one.sql": "-- GET /things/{id}\nSELECT :id::int AS id",
            "b/two.sql": "-- GET /things/{number}\nSELECT :number::int AS id",
            "c.sql": "-- DELETE /things/{id}\nSELECT :id::int AS id",
        ])
        #expect(problems == ["b/two.sql:1: GET /things/{number} is also declared by a/one.sql:1"])
    }

    @Test("the header's and sections' problems come with the database's, from every file at once")
    func everythingAtOnce() throws {
        let problems = try Environment.problems([
            "header.sql": "-- GETS /a\nSELECT 1",
            "directive.sql": "-- GET /b\n-- @cache 10\nSELECT 1",
            "column.sql": "-- GET /c\nSELECT nope FROM employees",
            "fine.sql": "-- GET /d\nSELECT 1 AS one",
        ])
        #expect(
            problems == [
                "column.sql:2: column \"nope\" does not exist",
                "directive.sql:2: unknown directive @cache; the header takes @param, @returns, @paged, @filter, @order, @notfound, @service, @example, @listen, @writes, @unfiltered and @function",
                "header.sql:1: the header's first line must be a method and a path, such as `-- GET /employees/{employeeNumber}`; found `-- GETS /a`",
            ])
    }

    @Test("a folder that does not exist, or holds no .sql file")
    func emptyFolders() throws {
        let connection = try Connection(try Environment.conninfo())
        defer { connection.close() }
        let empty = try Environment.folder(["README.md": "no SQL here"])
        defer { try? FileManager.default.removeItem(atPath: empty) }
        #expect(throws: ServiceFolder.ReadError.self) { try ServiceFolder(empty).load(on: connection) }
        #expect(throws: ServiceFolder.ReadError.self) { try ServiceFolder(empty + "/missing").load(on: connection) }
    }
}
