import Foundation
import HTTPServer
import HTTPTestClient
import PostgreSQL
import SQLServices
import Testing

/// Arguments converted by the types PostgreSQL inferred: values that fit
/// reach the database as they were meant, others are 400s worded as for
/// typed Swift parameters.
@Suite("Arguments typed by PostgreSQL", .serialized)
struct ArgumentTypeTests {
    static let files = [
        "types/echo.sql": """
        -- GET /types
        -- Echoes its arguments, typed.
        -- @param i4 = 7 Defaulted.
        SELECT CAST(:i2 AS int2) AS i2, CAST(:i4 AS int4) AS i4, CAST(:i8 AS int8) AS i8,
               CAST(:num AS numeric) AS num, CAST(:f8 AS float8) AS f8, CAST(:b AS bool) AS b,
               CAST(:t AS varchar(20)) AS t, CAST(:d AS date) AS d, CAST(:ts AS timestamptz) AS ts,
               CAST(:u AS uuid) AS u, CAST(:j AS jsonb) AS j, CAST(:g AS gender) AS g,
               CAST(:ids AS int4[]) AS ids, CAST(:days AS date[]) AS days
        """
    ]

    let scratch: ScratchSchema
    let pool: ConnectionPool
    let server: HTTPServer

    init() throws {
        scratch = try ScratchSchema("CREATE TYPE gender AS ENUM ('M', 'F')")
        pool = try scratch.pool()
        let folder = try Environment.folder(Self.files)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        server = try Environment.serve(try Environment.load(folder, pool: pool).services, pool: pool)
    }

    func finish() {
        server.stop()
        pool.close()
        scratch.drop()
    }

    func get(_ query: String) throws -> TestClient.Response {
        try TestClient.request("GET", "/types?" + query, port: server.port)
    }

    @Test("values that fit their types reach PostgreSQL as meant; absent ones are NULL or their default")
    func valuesThatFit() throws {
        defer { finish() }
        let reply = try get(
            "i2=-32768&i8=9223372036854775807&num=12345678901234567890.123456789&f8=0.1&b=true&t=caf%C3%A9"
                + "&d=2024-02-29&ts=2024-05-01T10:00:00%2B02:00&u=0A5B6C7D-1234-4ABC-8DEF-0123456789AB&j=%7B%22a%22:%5B1,2%5D%7D&g=F"
                + "&ids=1&ids=2&days=2024-01-01")
        #expect(reply.status == 200)
        #expect(
            reply.text == """
                [{"i2":-32768,"i4":7,"i8":9223372036854775807,"num":12345678901234567890.123456789,"f8":0.1,"b":true,\
                "t":"café","d":"2024-02-29","ts":"2024-05-01T08:00:00+00:00","u":"0a5b6c7d-1234-4abc-8def-0123456789ab",\
                "j":{"a": [1, 2]},"g":"F","ids":[1,2],"days":["2024-01-01"]}]
                """)
        let empty = try get("")
        #expect(
            empty.text
                == #"[{"i2":null,"i4":7,"i8":null,"num":null,"f8":null,"b":null,"t":null,"d":null,"ts":null,"u":null,"j":null,"g":null,"ids":null,"days":null}]"#
        )
    }

    @Test("a value that does not fit is a 400 naming the parameter and the type")
    func valuesThatDoNot() throws {
        defer { finish() }
        let cases: [(String, String)] = [
            ("i2=40000", #"The parameter "i2" expects an integer from -32768 to 32767; received "40000"."#),
            ("i4=2147483648", #"The parameter "i4" expects an integer from -2147483648 to 2147483647; received "2147483648"."#),
            ("i4=abc", #"The parameter "i4" expects an integer; received "abc"."#),
            ("i8=9223372036854775808", #"The parameter "i8" expects an integer; received "9223372036854775808"."#),
            ("num=1.2.3", #"The parameter "num" expects a double; received "1.2.3"."#),
            ("num=NaN", #"The parameter "num" expects a double; received "NaN"."#),
            ("f8=1e", #"The parameter "f8" expects a double; received "1e"."#),
            ("b=maybe", #"The parameter "b" expects a boolean; received "maybe"."#),
            ("d=2024-02-30", #"The parameter "d" expects a date; received "2024-02-30"."#),
            ("d=2024-1-1", #"The parameter "d" expects a date; received "2024-1-1"."#),
            ("ts=yesterday", #"The parameter "ts" expects a date-time; received "yesterday"."#),
            ("u=xyz", #"The parameter "u" expects a uuid; received "xyz"."#),
            ("j=%7Bbad", #"The parameter "j" expects a JSON value; received "{bad"."#),
            ("g=X", #"The parameter "g" expects one of M, F (gender); received "X"."#),
            ("ids=1&ids=x", #"The parameter "ids" expects an integer; received "x"."#),
            ("days=2024-13-01", #"The parameter "days" expects a date; received "2024-13-01"."#),
            ("i2=1&i2=2", #"The parameter "i2" expects an integer; received 2 values."#),
        ]
        for (query, detail) in cases {
            let reply = try get(query)
            #expect(reply.status == 400, "\(query)")
            #expect(reply.object["detail"] as? String == detail, "\(query)")
            #expect(reply.object["parameter"] as? String == String(query.prefix { $0 != "=" }), "\(query)")
        }
        #expect(try get("g=X").object["allowedValues"] as? [String] == ["M", "F"])
    }

    @Test("a JSON body's members convert by the same types; null is NULL")
    func jsonBody() throws {
        defer { finish() }
        let body = #"{"i2": 5, "num": 2.5, "b": false, "ids": [3, 4], "j": {"k": null}, "t": null}"#
        let reply = try TestClient.request(
            "GET", "/types", port: server.port, headers: [("Content-Type", "application/json")], body: Array(body.utf8))
        #expect(reply.status == 200)
        let row = try #require(reply.objects.first)
        #expect(row["i2"] as? Int == 5 && row["num"] as? Double == 2.5 && row["b"] as? Bool == false)
        #expect(row["ids"] as? [Int] == [3, 4])
        #expect((row["j"] as? [String: Any])?.keys.sorted() == ["k"])
        #expect(row["t"] is NSNull)
        let wrong = try TestClient.request(
            "GET", "/types", port: server.port, headers: [("Content-Type", "application/json")], body: Array(#"{"i4": "x"}"#.utf8))
        #expect(wrong.object["detail"] as? String == #"The parameter "i4" expects an integer; received "x"."#)
    }
}
