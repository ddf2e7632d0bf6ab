import Testing

/// Requests too big in one dimension or another.
@Suite("Sizes and limits")
struct SizeTests {
    let server = HostileServer.shared

    /// Over `maximumHeaderSize` the server answers 414 or 431 with a
    /// problem document; past twice that, libmicrohttpd's per-connection
    /// pool is full and it refuses the request itself, before the server
    /// sees it, with the same statuses and documents (with the patches off,
    /// its own HTML pages).
    @Test("overlong URL and header fields")
    func overlong() throws {
        let limit = HostileServer.maximumHeaderSize
        let url = try server.send("/employees?name=" + String(repeating: "a", count: limit + 1_000))
        expectProblem(url, 414...414, "URL")
        let header = try server.send("/math/sum?a=1&b=2", headers: [("X-Long", String(repeating: "b", count: limit + 1_000))])
        expectProblem(header, 431...431, "header")
        let filler = String(repeating: "v", count: 90)
        let many = try server.send("/math/sum?a=1&b=2", headers: (0..<(limit / 90)).map { ("X-\($0)", filler) })
        expectProblem(many, 431...431, "many headers")

        for size in [4 * limit, 2 << 20] {
            let hugeURL = try server.send("/employees?name=" + String(repeating: "a", count: size))
            expectLibraryRefusal(hugeURL, 414...414, "URL of \(size) bytes")
            let hugeHeader = try server.send("/math/sum?a=1&b=2", headers: [("X-Long", String(repeating: "b", count: size))])
            expectLibraryRefusal(hugeHeader, 431...431, "header of \(size) bytes")
        }
        try server.expectAlive()
    }

    @Test("10,000 query parameters")
    func manyParameters() throws {
        let unknown = (0..<10_000).map { "p\($0)=\($0)" }.joined(separator: "&")
        let names = try server.send(target: Array("/employees?".utf8) + Array(unknown.utf8))
        expectProblem(names, 400...400, "10,000 names")
        #expect(names.body.count < 1_000, "the problem does not echo every value: \(names.body.count) bytes")
        let bare = Array(repeating: "a", count: 10_000).joined(separator: "&")
        expectProblem(try server.send("/math/sum?" + bare), 400...400, "10,000 bare names")
        let repeated = Array(repeating: "limit=1", count: 10_000).joined(separator: "&")
        expectProblem(try server.send("/employees?" + repeated), 400...400, "10,000 limits")
        let values = try server.send("/math/sum?" + Array(repeating: "values=1", count: 10_000).joined(separator: "&"))
        expectProblem(values, 400...400, "10,000 values, past the limit of 1,000")
        #expect(values.object["limit"] as? String == "arguments")
        #expect(try server.send("/math/sum?" + Array(repeating: "values=1", count: 1_000).joined(separator: "&")).text == "1000")
        let details = Array(repeating: "details=titles", count: 10_000).joined(separator: "&")
        expectProblem(try server.send("/employees/10001?" + details), 414...414, "over the limit")
        try server.expectAlive()
    }

    @Test("10,000 form fields in a body")
    func manyFormFields() throws {
        let body = (0..<10_000).map { "p\($0)=\($0)" }.joined(separator: "&")
        let response = try server.send(
            "/employees", headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Array(body.utf8))
        expectProblem(response, 400...400, "form")
    }

    @Test("a body larger than the limit: 413 problem")
    func bodyTooLarge() throws {
        let body = [UInt8](repeating: UInt8(ascii: "a"), count: HostileServer.maximumBodySize + 1)
        expectProblem(
            try server.send("/probe/document", method: "POST", headers: [("Content-Type", "application/json")], body: body), 413...413,
            "body")
        let declared = try server.send(
            "/probe/document", method: "POST",
            headers: [("Content-Type", "application/json"), ("Content-Length", "\(1 << 40)")])
        expectProblem(declared, 413...413, "declared length")
        let form = try server.send(
            "/math/sum", headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array("a=1&b=".utf8) + body)
        expectProblem(form, 413...413, "form")
        try server.expectAlive()
    }
}
