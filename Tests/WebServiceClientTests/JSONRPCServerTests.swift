import Foundation
import HTTPTestClient
import Testing

/// `POST /jsonrpc` on the real server and database, over a raw socket.
@Suite("JSON-RPC server")
struct JSONRPCServerTests {
    private func post(_ json: String, headers: [(String, String)] = []) throws -> TestClient.Response {
        let server = try ClientTestEnvironment.shared.get()
        return try TestClient.request(
            "POST", "/jsonrpc", port: server.port, headers: [("Content-Type", "application/json")] + headers, body: Array(json.utf8))
    }

    private func object(_ response: TestClient.Response) throws -> [String: Any] {
        try #require(try response.json() as? [String: Any], "\(response)")
    }

    @Test func aCallIsTheRequestItsRouteWouldGet() throws {
        let response = try post(
            #"""
            {"jsonrpc":"2.0","method":"employees.getByEmployeeNumber","params":{"employeeNumber":10004,"details":["titles"]},"id":1}
            """#)
        #expect(response.status == 200)
        let answer = try object(response)
        #expect(answer["jsonrpc"] as? String == "2.0")
        #expect(answer["id"] as? Int == 1)
        let result = try #require(answer["result"] as? [String: Any])
        #expect(result["employeeNumber"] as? Int == 10004)
        #expect(result["birthDate"] as? String == "1954-05-01" || result["birthDate"] is String)
        let titles = try ClientTestEnvironment.integer("SELECT count(*)::int FROM titles WHERE emp_no = 10004")
        #expect((result["titles"] as? [Any])?.count == titles)

        // The same bytes as REST.
        let server = try ClientTestEnvironment.shared.get()
        let rest = try TestClient.request("GET", "/employees/10004?details=titles", port: server.port)
        let restObject = try #require(try rest.json() as? [String: Any])
        #expect(NSDictionary(dictionary: restObject).isEqual(to: result))
    }

    @Test func overloadsAreChosenByTheParamsGiven() throws {
        let pair = try object(post(#"{"jsonrpc":"2.0","method":"math.getSum","params":{"a":2,"b":4},"id":"p"}"#))
        #expect(pair["result"] as? Double == 6)
        #expect(pair["id"] as? String == "p")
        let list = try object(post(#"{"jsonrpc":"2.0","method":"math.getSum","params":{"values":[1,2,3]},"id":2}"#))
        #expect(list["result"] as? Double == 6)
    }

    @Test func bodiesAndOtherVerbs() throws {
        let item = try object(
            post(
                #"""
                {"jsonrpc":"2.0","method":"echo.postItems","params":{"body":{"id":7,"name":"Tea","tags":["a"]}},"id":1}
                """#))
        #expect((item["result"] as? [String: Any])?["name"] as? String == "Tea")
        let put = try object(post(#"{"jsonrpc":"2.0","method":"echo.putItemsById","params":{"id":3,"name":"x y"},"id":2}"#))
        #expect((put["result"] as? [String: Any])?["method"] as? String == "PUT")
        #expect((put["result"] as? [String: Any])?["id"] as? Int == 3)
        let text = try object(post(#"{"jsonrpc":"2.0","method":"echo.postForm","params":{"name":"n","values":[1,2]},"id":3}"#))
        #expect(text["result"] as? String == "n: 3")
    }

    @Test func aBatchOfThreeAnswersTwoInOrder() throws {
        let response = try post(
            #"""
            [{"jsonrpc":"2.0","method":"math.getSum","params":{"a":1,"b":2},"id":1},
             {"jsonrpc":"2.0","method":"nothing.here","params":{},"id":2},
             {"jsonrpc":"2.0","method":"math.getSum","params":{"a":5,"b":5}}]
            """#)
        #expect(response.status == 200)
        let answers = try #require(try response.json() as? [[String: Any]], "\(response)")
        #expect(answers.count == 2)
        #expect(answers[0]["id"] as? Int == 1)
        #expect(answers[0]["result"] as? Double == 3)
        #expect(answers[1]["id"] as? Int == 2)
        let error = try #require(answers[1]["error"] as? [String: Any])
        #expect(error["code"] as? Int == -32601)
    }

    @Test func notificationsAloneGetNoAnswer() throws {
        let single = try post(#"{"jsonrpc":"2.0","method":"math.getSum","params":{"a":1,"b":2}}"#)
        #expect(single.status == 204)
        #expect(single.body.isEmpty)
        let batch = try post(#"[{"jsonrpc":"2.0","method":"math.getSum","params":{"a":1,"b":2}},{"jsonrpc":"2.0","method":"x"}]"#)
        #expect(batch.status == 204)
        #expect(batch.body.isEmpty)
    }

    @Test func theStandardErrors() throws {
        func error(_ json: String) throws -> (code: Int?, data: [String: Any]?, id: Any?) {
            let answer = try object(post(json))
            let error = answer["error"] as? [String: Any]
            return (error?["code"] as? Int, error?["data"] as? [String: Any], answer["id"])
        }
        #expect(try error(#"{"jsonrpc":"2.0","method":"#).code == -32700)
        #expect(try error(#"{"jsonrpc":"2.0","method":"#).id is NSNull)
        #expect(try error(#"[]"#).code == -32600)
        #expect(try error(#"{"jsonrpc":"1.0","method":"math.getSum","id":1}"#).code == -32600)
        #expect(try error(#"{"jsonrpc":"2.0","method":42,"id":1}"#).code == -32600)
        #expect(try error(#"{"jsonrpc":"2.0","method":"math.getSum","params":3,"id":1}"#).code == -32600)
        #expect(try error(#"{"jsonrpc":"2.0","method":"math.nothing","id":1}"#).code == -32601)

        let invalid = try error(#"{"jsonrpc":"2.0","method":"employees.getByEmployeeNumber","params":{"employeeNumber":"abc"},"id":1}"#)
        #expect(invalid.code == -32602)
        #expect(invalid.data?["parameter"] as? String == "employeeNumber")
        #expect(invalid.data?["status"] as? Int == 400)
        let unknown = try error(#"{"jsonrpc":"2.0","method":"math.getSum","params":{"a":1,"c":2},"id":1}"#)
        #expect(unknown.code == -32602)
        #expect(unknown.data?["parameter"] as? String == "c")
        let missingVariable = try error(#"{"jsonrpc":"2.0","method":"employees.getByEmployeeNumber","params":{},"id":1}"#)
        #expect(missingVariable.code == -32602)
        #expect(missingVariable.data?["parameter"] as? String == "employeeNumber")

        let notFound = try error(#"{"jsonrpc":"2.0","method":"employees.getByEmployeeNumber","params":{"employeeNumber":1},"id":9}"#)
        #expect(notFound.code == -32000)
        #expect(notFound.data?["status"] as? Int == 404)
        #expect((notFound.data?["detail"] as? String)?.contains("no employee") == true)
        #expect(notFound.id as? Int == 9)
    }

    @Test func paramsByPositionAreBoundInTheDeclaredOrder() throws {
        func answer(_ json: String) throws -> [String: Any] { try object(post(json)) }
        // In the declared order: a, b, values.
        #expect(try answer(#"{"jsonrpc":"2.0","method":"math.getSum","params":[2,4],"id":1}"#)["result"] as? Double == 6)
        #expect(try answer(#"{"jsonrpc":"2.0","method":"math.getSum","params":[null,null,[1,2,3]],"id":1}"#)["result"] as? Double == 6)
        #expect(try answer(#"{"jsonrpc":"2.0","method":"math.getSum","params":[1,2,[3]],"id":1}"#)["result"] as? Double == 6)
        #expect(try answer(#"{"jsonrpc":"2.0","method":"math.getAverage","params":[[2,4]],"id":1}"#)["result"] as? Double == 3)
        // A path variable, then an argument, as the route declares them; the same result as by name.
        let byPosition = try answer(#"{"jsonrpc":"2.0","method":"employees.getByEmployeeNumber","params":[10004,["titles"]],"id":1}"#)
        let byName = try answer(
            #"{"jsonrpc":"2.0","method":"employees.getByEmployeeNumber","params":{"employeeNumber":10004,"details":["titles"]},"id":1}"#)
        let result = try #require(byPosition["result"] as? [String: Any])
        #expect(result["employeeNumber"] as? Int == 10004)
        #expect((result["titles"] as? [Any])?.isEmpty == false)
        #expect(NSDictionary(dictionary: result).isEqual(to: try #require(byName["result"] as? [String: Any])))
        // Fewer: the others are absent; a null leaves its param out too.
        for params in ["[10004]", "[10004,null]"] {
            let answer = try answer(#"{"jsonrpc":"2.0","method":"employees.getByEmployeeNumber","params":"# + params + #","id":1}"#)
            let employee = try #require(answer["result"] as? [String: Any], "\(params)")
            #expect(employee["employeeNumber"] as? Int == 10004)
            #expect(employee["titles"] == nil)
        }
        // A body; a variable then an argument of a PUT.
        let item = try answer(#"{"jsonrpc":"2.0","method":"echo.postItems","params":[{"id":7,"name":"Tea","tags":[]}],"id":1}"#)
        #expect((item["result"] as? [String: Any])?["name"] as? String == "Tea")
        let put = try #require(
            try answer(#"{"jsonrpc":"2.0","method":"echo.putItemsById","params":[3,"x y"],"id":1}"#)["result"] as? [String: Any])
        #expect(put["id"] as? Int == 3 && put["name"] as? String == "x y")

        // A batch mixing both.
        let batch = try #require(
            try post(
                #"[{"jsonrpc":"2.0","method":"math.getSum","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"math.getSum","params":{"a":3,"b":4},"id":2}]"#
            ).json() as? [[String: Any]])
        #expect(batch.map { $0["result"] as? Double } == [3, 7])
    }

    @Test func paramsByPositionThatDoNotFitAreInvalidParams() throws {
        func error(_ json: String) throws -> [String: Any] {
            try #require(try object(post(json))["error"] as? [String: Any])
        }
        let tooMany = try error(#"{"jsonrpc":"2.0","method":"math.getSum","params":[1,2,[3],4],"id":1}"#)
        #expect(tooMany["code"] as? Int == -32602)
        #expect(((tooMany["data"] as? [String: Any])?["detail"] as? String)?.contains("at most 3 params by position; 4 were given") == true)
        // The third is `values`, a list: one number there is a list of one, as `?values=3` is.
        #expect(try object(post(#"{"jsonrpc":"2.0","method":"math.getSum","params":[1,2,3],"id":1}"#))["result"] as? Double == 6)
        let tooManyForOne = try error(#"{"jsonrpc":"2.0","method":"math.getAverage","params":[[1],[2]],"id":1}"#)
        #expect(((tooManyForOne["data"] as? [String: Any])?["detail"] as? String)?.contains("at most 1 param by position") == true)
        // The required path variable left out (null): the -32602 that names it, as by name.
        let missingVariable = try error(#"{"jsonrpc":"2.0","method":"employees.getByEmployeeNumber","params":[null,["titles"]],"id":1}"#)
        #expect(missingVariable["code"] as? Int == -32602)
        #expect((missingVariable["data"] as? [String: Any])?["parameter"] as? String == "employeeNumber")
        // A required argument left out: the PUT's name.
        let missingArgument = try error(#"{"jsonrpc":"2.0","method":"echo.putItemsById","params":[3],"id":1}"#)
        #expect(missingArgument["code"] as? Int == -32602)
        #expect((missingArgument["data"] as? [String: Any])?["parameter"] as? String == "name")
    }

    @Test func aStreamedListIsTheWholeResult() throws {
        let answer = try object(post(#"{"jsonrpc":"2.0","method":"employees.get","params":{"name":"bal*"},"id":1}"#))
        let result = try #require(answer["result"] as? [[String: Any]])
        let expected = try ClientTestEnvironment.integer(
            "SELECT count(*)::int FROM employees WHERE lower(first_name) LIKE 'bal%' OR lower(last_name) LIKE 'bal%'")
        #expect(result.count == expected)
        let departments = try object(post(#"{"jsonrpc":"2.0","method":"departments.get","id":1}"#))
        #expect((departments["result"] as? [Any])?.count == 9)
    }

    @Test func rpcDiscoverReturnsAnOpenRPCDocument() throws {
        let answer = try object(post(#"{"jsonrpc":"2.0","method":"rpc.discover","id":1}"#))
        let document = try #require(answer["result"] as? [String: Any])
        #expect(document["openrpc"] as? String == "1.2.6")
        #expect((document["info"] as? [String: Any])?["title"] is String)
        let methods = try #require(document["methods"] as? [[String: Any]])
        let names = methods.compactMap { $0["name"] as? String }
        #expect(names.contains("employees.getByEmployeeNumber"))
        #expect(names.contains("math.getSum"))
        #expect(names.contains("departments.get"))
        let sum = try #require(methods.first { $0["name"] as? String == "math.getSum" })
        let params = try #require(sum["params"] as? [[String: Any]])
        #expect(Set(params.compactMap { $0["name"] as? String }) == ["a", "b", "values"])
        #expect(params.allSatisfy { $0["required"] as? Bool == false })
        #expect(params.compactMap { $0["name"] as? String } == ["a", "b", "values"])
        #expect(sum["paramStructure"] as? String == "either")
        #expect(methods.allSatisfy { $0["paramStructure"] as? String == "either" })
        // A list's filters, select and order are read from the query string, which a call has not: not params.
        let list = try #require(methods.first { $0["name"] as? String == "employees.get" })
        let listParams = Set((list["params"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String })
        #expect(listParams.isDisjoint(with: ["lastName", "employeeNumber", "select", "order", "or", "and"]), "\(listParams)")
        #expect(listParams.isSuperset(of: ["name", "limit"]), "\(listParams)")
        let employee = try #require(methods.first { $0["name"] as? String == "employees.getByEmployeeNumber" })
        let number = try #require((employee["params"] as? [[String: Any]])?.first { $0["name"] as? String == "employeeNumber" })
        #expect(number["required"] as? Bool == true)
        #expect(
            ((employee["result"] as? [String: Any])?["schema"] as? [String: Any])?["$ref"] as? String
                == "#/components/schemas/Employee")
        let schemas = (document["components"] as? [String: Any])?["schemas"] as? [String: Any]
        #expect(schemas?["Employee"] != nil)

        // One method per operation of the OpenAPI document, by the same name.
        let server = try ClientTestEnvironment.shared.get()
        let openAPI = try #require(try TestClient.request("GET", "/openapi.json", port: server.port).json() as? [String: Any])
        var operationIDs: Set<String> = []
        for case let pathItem as [String: Any] in (openAPI["paths"] as? [String: Any] ?? [:]).values {
            for case let operation as [String: Any] in pathItem.values {
                if let id = operation["operationId"] as? String { operationIDs.insert(id) }
            }
        }
        #expect(!operationIDs.isEmpty)
        #expect(Set(names) == operationIDs)
    }

    @Test func onlyPostIsAllowed() throws {
        let server = try ClientTestEnvironment.shared.get()
        let get = try TestClient.request("GET", "/jsonrpc", port: server.port)
        #expect(get.status == 405)
        #expect(get.header("Allow") == "POST, OPTIONS")
    }
}

/// A JSON-RPC result of all 300,024 employees goes out as the rows arrive.
@Suite("JSON-RPC server memory", .serialized)
struct JSONRPCServerMemoryTests {
    @Test func theWholeEmployeeListAsOneResultKeepsMemoryFlat() throws {
        let server = try ClientTestEnvironment.shared.get()
        let client = try TestClient(port: server.port, timeoutSeconds: 120)
        let json = Array(
            #"[{"jsonrpc":"2.0","method":"employees.get","id":1},{"jsonrpc":"2.0","method":"math.getSum","params":{"a":1,"b":2},"id":2}]"#
                .utf8)
        try client.sendRequest("POST", "/jsonrpc", headers: [("Content-Type", "application/json")], body: json)
        var received = 0
        var head: [UInt8] = []
        var tail: [UInt8] = []
        var residentAfterWarmUp = 0
        var peak = 0
        var nextSample = 1 << 20
        let response = try client.readResponse { bytes in
            if head.count < 64 { head.append(contentsOf: bytes.prefix(64 - head.count)) }
            tail.append(contentsOf: bytes)
            if tail.count > 256 { tail.removeFirst(tail.count - 256) }
            received += bytes.count
            if received >= nextSample {
                if residentAfterWarmUp == 0 { residentAfterWarmUp = ClientTestEnvironment.memory() }
                peak = max(peak, ClientTestEnvironment.memory())
                nextSample += 1 << 20
            }
        }
        #expect(response.status == 200)
        #expect(String(decoding: head, as: UTF8.self).hasPrefix(#"[{"jsonrpc":"2.0","id":1,"result":[{"employeeNumber":10001,"#))
        #expect(String(decoding: tail, as: UTF8.self).hasSuffix(#"]},{"jsonrpc":"2.0","id":2,"result":3}]"#))
        let growth = peak - residentAfterWarmUp
        print("jsonrpc: \(received) bytes; RSS after the first MB \(residentAfterWarmUp) kB, peak \(peak) kB, growth \(growth) kB")
        #expect(received > 10_000_000)
        #expect(growth < 10_000, "resident memory grew by \(growth) kB")
    }
}
