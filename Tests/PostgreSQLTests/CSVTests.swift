import Foundation
import PostgreSQL
@testable import PostgreSQLWebService
import Testing

/// `RowStream.Format.csv`: RFC 4180 text from real query results.
@Suite struct CSVTests {
    func csv(_ sql: String) throws -> String {
        let rows = try Query.list(sql).rows(
            on: TestDatabase.pool(size: 1), format: .csv, options: JSONRenderingOptions(), access: .unrestricted)
        return try TestDatabase.body(of: rows)
    }

    @Test func headerThenRowsEndedByCRLF() throws {
        #expect(
            try csv(#"SELECT 1 AS "employeeNumber", 'Ilse' AS "firstName" UNION ALL SELECT 2, 'Bo'"#)
                == "employeeNumber,firstName\r\n1,Ilse\r\n2,Bo\r\n")
    }

    @Test func quotesWhatNeedsQuoting() throws {
        let text = try csv(
            #"""
            SELECT 'a,b' AS comma, 'say "hi"' AS quote, E'two\nlines' AS lines, ' padded' AS space,
                   NULL::text AS nothing, true AS yes, false AS no, DATE '2024-02-29' AS day, 1.50::numeric AS price
            """#)
        #expect(
            text == "comma,quote,lines,space,nothing,yes,no,day,price\r\n"
                + "\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\" padded\",,true,false,2024-02-29,1.50\r\n")
    }

    @Test func noRowsIsTheHeaderAlone() throws {
        #expect(try csv("SELECT 1 AS one, 2 AS two WHERE false") == "one,two\r\n")
    }
}
