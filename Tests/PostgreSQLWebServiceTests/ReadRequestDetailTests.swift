import PostgreSQL
@testable import PostgreSQLWebService
import Testing
import WebService

/// What a route's details, its `@filter` and `@order`, and its documents
/// make of the read language, without a database: `details=titles` and
/// `select=*,titles(*)` run the same statements; a detail wins over a
/// foreign key of its name; columns that take no filter or order refuse
/// them; arrays written as JSON filter their columns; the documented
/// patterns describe what is read.
@Suite struct ReadRequestDetailTests {
    /// Employees with their titles as a detail (parameters) and as a
    /// foreign key of the same name, and an array column.
    static let graph = ResourceGraph([
        Resource(
            name: "employees",
            sql: #"SELECT emp_no AS "employeeNumber", last_name AS "lastName", tags, order_id FROM employees ORDER BY emp_no"#,
            columns: [
                .init("employeeNumber", type: .int4, aliases: ["emp_no"]), .init("lastName", type: .varchar, isOrderable: false),
                .init("tags", type: .textArray, isFilterable: false, isOrderable: true), .init("order_id", type: .int4),
            ],
            relationships: [
                Relationship(name: "titles", target: 1, cardinality: .many, link: .parameters),
                Relationship(
                    name: "titles", constraint: "titles_emp_no_fkey", columns: ["emp_no"], target: 2, cardinality: .many,
                    link: .columns([.init(source: "employeeNumber", target: "empNo")])),
            ]),
        Resource(
            name: "titles", sql: #"SELECT title, from_date AS "fromDate" FROM titles WHERE emp_no = :employeeNumber ORDER BY from_date"#,
            columns: [.init("title", type: .varchar), .init("fromDate", type: .date)]),
        Resource(
            name: "titles", sql: #"SELECT "emp_no" AS "empNo", "title" AS "title" FROM "public"."titles""#,
            columns: [.init("empNo", type: .int4), .init("title", type: .varchar)]),
    ])

    static func request(_ arguments: [(String, [String])]) throws(ReadError) -> ReadRequest {
        try ReadRequest(graph: graph, resource: 0, arguments: arguments.map { (name: $0.0, values: $0.1) })
    }

    static func query(_ request: ReadRequest) throws -> Query {
        try Query.list(graph.resources[0].sql).reading(request).resolvingChoices()
    }

    @Test("details=titles and select=*,titles(*) run the statements as they are: the root's and the detail's")
    func detailsAreEmbeds() throws {
        let details = try Self.query(try Self.request([]).embedding(["titles"]))
        let select = try Self.query(try Self.request([("select", ["*,titles(*)"])]))
        for query in [details, select] {
            #expect(query.sql == Self.graph.resources[0].sql)
            #expect(query.embeds.map(\.key) == ["titles"])
            #expect(query.embeds.first?.query.sql == Self.graph.resources[1].sql)
        }
        // Asked twice, embedded once.
        #expect(try Self.query(try Self.request([("select", ["*,titles(title)"])]).embedding(["titles"])).embeds.count == 1)
        // A hint chooses the foreign key over the detail.
        let hinted = try Self.query(try Self.request([("select", ["*,titles!titles_emp_no_fkey(title)"])]))
        #expect(hinted.embeds.first?.query.sql.contains(#""public"."titles""#) == true)
        #expect(throws: ReadError.self) { try Self.request([]).embedding(["salaries"]) }
    }

    @Test("arguments along a detail wait for details: refused only if neither select nor details embed it")
    func detailPaths() throws {
        let waiting = try Self.request([("titles.order", ["fromDate.desc"]), ("titles.limit", ["1"])])
        #expect(throws: ReadError.self) { try waiting.embedding([]) }
        let embedded = try Self.query(try waiting.embedding(["titles"]))
        let sql = try #require(embedded.embeds.first?.query.sql)
        #expect(sql.contains(#"ORDER BY "t1"."fromDate" DESC"#) && sql.contains(" LIMIT "), "\(sql)")
        #expect(throws: ReadError.self) { try Self.request([("salaries.order", ["x"])]) }
    }

    @Test("a column that takes no filter or no order refuses it, naming the parameter and the columns that take one")
    func filterableAndOrderable() throws {
        for (name, value) in [("tags", "cs.{a}"), ("or", "(tags.cs.{a},lastName.eq.x)"), ("order", "lastName.desc")] {
            do {
                _ = try Self.request([(name, [value])])
                Issue.record("\(name)=\(value) was taken")
            } catch {
                let problem = try #require(error.httpError)
                #expect(problem.status == .badRequest)
                #expect(problem.code == "PGRST100", "\(problem)")
                #expect(problem.parameter == (name == "or" ? "tags" : name), "\(problem)")
            }
        }
        _ = try Self.request([("order", ["tags.desc,employeeNumber"]), ("lastName", ["eq.x"]), ("emp_no", ["gt.1"])])
    }

    @Test("a column whose name begins with or, and or not in or=(…); a page at the root; an array value written as JSON")
    func parsingAndValues() throws {
        let query = try Self.query(try Self.request([("or", ["(order_id.eq.1,and(order_id.gt.2,employeeNumber.lt.9))"])]))
        #expect(query.sql.contains(#""t0"."order_id" = :readValue"#), "\(query.sql)")
        let paged = try Self.query(try Self.request([("limit", ["2"]), ("offset", ["1"])]))
        #expect(paged.page?.limit == 2 && paged.page?.offset == 1)
        #expect(ReadRequest.Builder.arrayValue(#"[1,"a b",null,["c\"d"],true]"#) == #"{"1","a b",NULL,{"c\"d"},"true"}"#)
        #expect(ReadRequest.Builder.arrayValue("{1,2}") == "{1,2}")
        #expect(ReadRequest.Builder.arrayValue("[1,") == "[1,")
    }

    @Test("the documented arguments: a filter per filterable column, order, or, and, select; patterns that read as the server does")
    func documentedArguments() throws {
        let documented = Self.graph.resources[0].documentedArguments(taken: ["order_id"], value: 0)
        #expect(documented.map(\.name) == ["employeeNumber", "lastName", "order", "or", "and", "select"])
        #expect(documented.first?.filteredType == .integer)
        #expect(documented.last?.description.contains("`titles(*)`") == true)
        func matches(_ name: String, _ text: String) throws -> Bool {
            let pattern = try #require(documented.first { $0.name == name }?.pattern)
            return text.wholeMatch(of: try Regex(pattern)) != nil
        }
        for (name, text) in [
            ("employeeNumber", "eq.2147483647"), ("employeeNumber", "not.in.(1,\"2\")"), ("employeeNumber", "is.not_null"),
            ("lastName", "ilike.*x*"), ("lastName", "isdistinct.a"), ("order", "tags.desc,employeeNumber.nullsfirst"),
            ("or", "(employeeNumber.gt.5,lastName.not.like.A*,order_id.is.null)"), ("select", "*"), ("select", "lastName,tags"),
        ] {
            #expect(try matches(name, text), "\(name)=\(text)")
            _ = try Self.request([(name, [text])])
        }
        for (name, text) in [
            ("employeeNumber", "eq.2147483648"), ("employeeNumber", "is.true"), ("order", "lastName"), ("or", "(tags.cs.{a})"),
            ("select", "nope"),
        ] {
            #expect(try !matches(name, text), "\(name)=\(text)")
        }
        let plain = Resource(
            name: "things", sql: "", columns: [.init("a.b", type: .int4), .init("data", type: .jsonb), .init("when", type: .timestamptz)])
        #expect(plain.documentedArguments(value: 0).map(\.name) == ["when", "order", "or", "and", "select"])
    }
}
