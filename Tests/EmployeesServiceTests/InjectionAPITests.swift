import Foundation
import HTTPTestClient
import Testing

/// Hostile input in every parameter of every endpoint: the answer is a 4xx
/// or a correct (empty) 200, never a 5xx, and the data is unchanged.
@Suite("SQL injection and odd input", .serialized)
struct InjectionAPITests {
    let server: TestServer

    init() throws {
        server = try TestServer.shared()
    }

    /// Percent-encoded as they would arrive in a URL.
    static let payloads = [
        "%27",  // '
        "%27%27",  // ''
        "%27%3B%20DROP%20TABLE%20employees%3B%20--",  // '; DROP TABLE employees; --
        "1%20OR%201%3D1",  // 1 OR 1=1
        "1%27%20OR%20%271%27%3D%271",  // 1' OR '1'='1
        "%22%20OR%20%22%22%3D%22",  // " OR ""="
        "10004%3B%20DELETE%20FROM%20salaries",  // 10004; DELETE FROM salaries
        "%24%241%24%24",  // $$1$$
        "%3Aname",  // :name
        "%5C",  // \
        "%C3%A9l%C3%A8ve%20%F0%9F%98%80",  // élève 😀
        "%00",  // NUL
        "a%00b",
        "%2A%00%27",  // *, NUL, '
        "%FF%FE",  // invalid UTF-8
        "%E2%80%AE",  // right-to-left override
        String(repeating: "x", count: 2000),
    ]

    /// Every endpoint, with `P` where a payload goes.
    static let targets = [
        "/employees?name=P",
        "/employees?name=P*",
        "/employees?name=*P",
        "/employees?details=P&limit=1",
        "/employees?limit=P",
        "/employees?offset=P",
        "/employees/P",
        "/employees/10004?details=P",
        "/departments/P",
        "/departments/P?details=managers,employees",
        "/departments/d005?details=P",
    ]

    func checkNeverServerError(_ target: String) throws -> TestClient.Response {
        let reply = try server.get(target)
        #expect((200..<500).contains(reply.status), "\(target): \(reply)")
        if reply.status >= 400 {
            #expect(reply.header("Content-Type") == "application/problem+json", "\(target)")
            #expect(reply.object["status"] as? Int == reply.status, "\(target)")
        } else {
            #expect((try? reply.json()) != nil, "\(target): not JSON")
        }
        return reply
    }

    @Test("every payload in every parameter: 4xx or a correct answer, never 5xx; row counts unchanged")
    func everyParameter() throws {
        let before = try TestEnvironment.tableCounts()
        #expect(before["employees"] == 300_024)
        for template in Self.targets {
            for payload in Self.payloads {
                let target = template.replacingOccurrences(of: "P", with: payload)
                let reply = try checkNeverServerError(target)
                guard reply.status == 200 else { continue }
                // No employee or department is named like these payloads: a
                // search finds none, a lookup does not succeed.
                if template.hasPrefix("/employees?name=") {
                    #expect(reply.text == "[]", "\(target): \(reply)")
                }
                #expect(!template.hasPrefix("/departments/P"), "\(target) found a department: \(reply)")
                #expect(!template.hasPrefix("/employees/P"), "\(target) found an employee: \(reply)")
            }
        }
        #expect(try TestEnvironment.tableCounts() == before)
        #expect(try server.get("/health/ready").status == 204)
    }

    @Test("a NUL in a text argument does not cut the value short")
    func nulDoesNotTruncate() throws {
        // `*` followed by NUL would match every name if the value were cut at the NUL.
        let star = try checkNeverServerError("/employees?name=*%00x&limit=3")
        #expect(star.status != 200 || star.text == "[]", "\(star)")
        let department = try checkNeverServerError("/departments/d005%00x")
        #expect(department.status == 404 || department.status == 400, "\(department)")
    }

    @Test("non-ASCII names are searched, not rejected")
    func unicodeName() throws {
        let reply = try checkNeverServerError("/employees?name=%C3%A9*")
        #expect(reply.status == 200)
        #expect(reply.text == "[]")
    }
}
