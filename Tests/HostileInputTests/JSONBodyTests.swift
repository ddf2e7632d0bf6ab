import HTTPTestClient
import Testing

/// JSON bodies: huge, deeply nested, malformed or of the wrong types.
@Suite("Hostile JSON bodies")
struct JSONBodyTests {
    let server = HostileServer.shared
    let json = [("Content-Type", "application/json")]

    func post(_ body: String, to path: String = "/probe/document") throws -> TestClient.Response {
        try server.send(path, method: "POST", headers: json, body: Array(body.utf8))
    }

    func get(_ body: String, from path: String = "/math/sum") throws -> TestClient.Response {
        try server.send(path, headers: json, body: Array(body.utf8))
    }

    @Test("nesting 100,000 deep does not overflow the stack", arguments: ["[", "{\"a\":"])
    func deepNesting(opening: String) throws {
        let closing = opening == "[" ? "]" : "}"
        let document = String(repeating: opening, count: 100_000) + "1" + String(repeating: closing, count: 100_000)
        expectProblem(try post(document), 400...400, "document \(opening)")
        expectProblem(try get("{\"a\":" + document + ",\"b\":1}"), 400...400, "argument \(opening)")
        try server.expectAlive()
    }

    /// A value that fits no case of `JSONValue` deep inside arrays: each
    /// level must not try its children more than once (2^depth attempts).
    @Test("a deep document with an unrepresentable number answers at once")
    func deepUnrepresentable() throws {
        for depth in [40, 500] {
            let document = String(repeating: "[", count: depth) + "1e400" + String(repeating: "]", count: depth)
            let clock = ContinuousClock()
            var response: TestClient.Response?
            let elapsed = try clock.measure { response = try post(document) }
            #expect(elapsed < .seconds(2), "depth \(depth): \(elapsed)")
            if let response, response.status != 200 { expectProblem(response, 400...400, "depth \(depth)") }
        }
    }

    @Test("a huge document: 60,000 members, a 900 kB string")
    func huge() throws {
        let members = (0..<60_000).map { "\"m\($0)\":\($0)" }.joined(separator: ",")
        expectProblem(try get("{" + members + "}"), 400...400, "members")
        let string = "{\"a\":\"" + String(repeating: "x", count: 900_000) + "\",\"b\":1}"
        expectProblem(try get(string), 400...400, "string")
        // 200,000 argument values: past the limit of 1,000, which the problem names.
        let numbers = try get("{\"values\":[" + Array(repeating: "1", count: 200_000).joined(separator: ",") + "]}")
        expectProblem(numbers, 400...400, "values")
        #expect(numbers.object["limit"] as? String == "arguments")
        try server.expectAlive()
    }

    @Test(
        "malformed JSON",
        arguments: [
            "{", "}", "{\"a\":}", "{\"a\":1,}", "[1,2", "\"unterminated", "{'a':1}", "{\"a\":01}", "nul", "{\"a\":1}{",
            "{\"a\":\"\\ud800\"}", "{\"a\":\"\\u12\"}", "\u{FEFF}\u{FEFF}{}", "{\"a\":NaN}", "{\"a\":Infinity}",
        ])
    func malformed(body: String) throws {
        expectProblem(try post(body), 400...400, "post \(body)")
        let asArguments = try get(body)
        if asArguments.status != 200 { expectProblem(asArguments, 400...400, "arguments \(body)") }
    }

    @Test(
        "wrong types",
        arguments: [
            #"{"a":"one","b":2}"#, #"{"a":[1],"b":2}"#, #"{"a":{"x":1},"b":2}"#, #"{"a":true,"b":2}"#, #"{"values":[1,null]}"#,
            #"{"values":"1,2"}"#, #"{"values":[1,"x"]}"#, #"{"values":[[1]]}"#, #"{"values":{"0":1}}"#,
            #"[1,2]"#, #""a=1&b=2""#, "42", "null",
        ])
    func wrongTypes(body: String) throws {
        expectProblem(try get(body), 400...400, body)
    }

    @Test(
        "NUL characters in JSON strings are refused, not cut short",
        arguments: [
            ("/employees", #"{"name":"bal\u0000zzz"}"#), ("/departments/d005", #"{"details":"managers\u0000"}"#),
            ("/math/sum", #"{"a":"1\u0000","b":1}"#),
        ])
    func nulInStrings(path: String, body: String) throws {
        expectProblem(try get(body, from: path), 400...400, "\(path) \(body)")
    }

    @Test(
        "wrong types for the employees endpoints",
        arguments: [
            ("/employees", #"{"limit":"ten"}"#), ("/employees", #"{"limit":[1]}"#), ("/employees", #"{"offset":1.5}"#),
            ("/employees", #"{"name":["a","b"]}"#), ("/employees", #"{"details":"wages"}"#), ("/employees", #"{"details":[1]}"#),
            ("/employees/10001", #"{"details":{"titles":true}}"#), ("/departments/d005", #"{"details":7}"#),
            ("/employees", #"{"limit":1e400}"#), ("/employees", #"{"limit":99999999999999999999}"#),
        ])
    func employeesWrongTypes(path: String, body: String) throws {
        expectProblem(try get(body, from: path), 400...400, "\(path) \(body)")
    }

    @Test(
        "a JSON body that is not JSON for the content type",
        arguments: ["application/json", "application/problem+json", "application/json; charset=utf-8"])
    func notJSON(contentType: String) throws {
        let response = try server.send("/math/sum", headers: [("Content-Type", contentType)], body: Array("a=1&b=2".utf8))
        expectProblem(response, 400...415, contentType)
    }
}
