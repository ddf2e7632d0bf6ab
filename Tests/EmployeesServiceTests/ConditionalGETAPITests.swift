import EmployeesService
import Foundation
import HTTPTestClient
import Testing

/// `ETag`, `If-None-Match` and `Cache-Control`, over a real socket.
@Suite("Conditional GET: ETag, 304, Cache-Control")
struct ConditionalGETAPITests {
    let server: TestServer

    init() throws {
        server = try TestServer.shared()
    }

    @Test(
        "an object carries an ETag, and If-None-Match with it gets 304 without a body",
        arguments: [
            "/employees/10004", "/employees/10004?details=titles,salaries", "/departments/d005?details=managers",
            "/math/sum?a=2&b=4",
        ])
    func objects(path: String) throws {
        let first = try server.get(path)
        #expect(first.status == 200)
        let tag = try #require(first.header("ETag"))
        // A quoted 64-bit hash in 11 base-64 digits.
        #expect(tag.hasPrefix("\"") && tag.hasSuffix("\"") && tag.count == 13)
        #expect(tag.dropFirst().dropLast().allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        #expect(try server.get(path).header("ETag") == tag, "the same bytes, the same tag")

        let unchanged = try server.get(path, headers: [("If-None-Match", tag)])
        #expect(unchanged.status == 304)
        #expect(unchanged.body.isEmpty)
        #expect(unchanged.header("ETag") == tag)
        #expect(try server.get(path, headers: [("If-None-Match", "\"0000000000000000\", W/\(tag)")]).status == 304)
        #expect(try server.get(path, headers: [("If-None-Match", "*")]).status == 304)
        #expect(try TestClient.request("HEAD", path, port: server.port, headers: [("If-None-Match", tag)]).status == 304)

        let changed = try server.get(path, headers: [("If-None-Match", "\"0000000000000000\"")])
        #expect(changed.status == 200)
        #expect(changed.text == first.text)
    }

    @Test("different objects have different tags")
    func distinctTags() throws {
        #expect(try server.get("/employees/10004").header("ETag") != server.get("/employees/10005").header("ETag"))
        #expect(
            try server.get("/employees/10004").header("ETag")
                != server.get("/employees/10004?details=titles").header("ETag"))
    }

    @Test("a short list, read whole, carries a validator; streamed lists and errors carry none")
    func noValidator() throws {
        // The statement's first request streams while the batcher reads its description.
        var short = try server.get("/employees?limit=2")
        for _ in 1..<50 where short.header("ETag") == nil {
            usleep(20_000)
            short = try server.get("/employees?limit=2")
        }
        #expect(short.header("ETag") != nil)
        #expect(try server.get("/employees?limit=2", headers: [("If-None-Match", short.header("ETag") ?? "")]).status == 304)
        #expect(try server.get("/employees?limit=2000").header("ETag") == nil)
        #expect(try server.get("/departments/d005?details=employees").header("ETag") == nil)
        let missing = try server.get("/employees/1", headers: [("If-None-Match", "*")])
        #expect(missing.status == 404)
        #expect(missing.header("ETag") == nil)
    }

    @Test("a route's Cache-Control comes with its successful GETs")
    func cacheControl() throws {
        #expect(try server.get("/departments").header("Cache-Control") == "max-age=300")
        #expect(try server.get("/departments/d005").header("Cache-Control") == nil)
    }
}
