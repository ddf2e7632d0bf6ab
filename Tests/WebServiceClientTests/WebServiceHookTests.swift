import Foundation
import HTTPServer
import Testing
import WebServiceClient
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Hooks against the real server: their order, what they change, the
/// answers they map, the success statuses, and `text/*` answers.
@Suite("WebServiceClient hooks")
struct WebServiceHookTests {
    /// A hook that writes `name>` before and `name<` after, and appends its
    /// name to the request's `X-Call`.
    static func tracing(_ name: String, into log: LogLines) -> WebServiceHook {
        WebServiceHook { request, next in
            log.append(name + ">")
            var request = request
            let call = request.value(forHTTPHeaderField: "X-Call")
            request.setValue(call.map { $0 + "," + name } ?? name, forHTTPHeaderField: "X-Call")
            let response = try await next(request)
            log.append(name + "<")
            return response
        }
    }

    @Test func clientHooksThenCallHooksEachWrappingTheNext() async throws {
        let log = LogLines()
        let client = try ClientTestEnvironment.sharedClient(
            configuration: .init(
                credentials: .basic(username: "ann", password: "secret"),
                hooks: [Self.tracing("A", into: log), Self.tracing("B", into: log)]))
        var request = WebServiceRequest(.get, "/echo/headers")
        request.hooks = [
            Self.tracing("C", into: log),
            .request { request in
                // Credentials come first: every hook sees them.
                log.append("credentials: " + (request.value(forHTTPHeaderField: "Authorization") ?? "none"))
            },
        ]
        let fields = try await client.send(request).decode([String: String].self)
        #expect(fields["X-Call"] == "A,B,C")
        #expect(log.all == ["A>", "B>", "C>", "credentials: Basic YW5uOnNlY3JldA==", "C<", "B<", "A<"])
        #expect(fields["Authorization"] == "Basic YW5uOnNlY3JldA==")

        // The call's own `Authorization` field wins over the client's credentials.
        let own = try await client.send(WebServiceRequest(.get, "/echo/headers", headers: ["Authorization": "Bearer own"]))
        #expect(try own.decode([String: String].self)["Authorization"] == "Bearer own")
    }

    @Test func aResponseHookThrowsTheAppsOwnError() async throws {
        struct NoSuchEmployee: Error, Equatable { var path: String }
        let client = try ClientTestEnvironment.sharedClient(
            configuration: .init(hooks: [
                .response { request, response in
                    if response.status == 404 { throw NoSuchEmployee(path: request.url!.path) }
                    return response
                }
            ]))
        await #expect(throws: NoSuchEmployee(path: "/employees/1")) {
            _ = try await client.get("/employees/{n}", arguments: ["n": 1], as: Employee.self)
        }
        #expect(try await client.get("/employees/{n}", arguments: ["n": 10004], as: Employee.self).employeeNumber == 10004)
    }

    @Test func aResponseHookMapsAStatusToAnAnswer() async throws {
        let client = try ClientTestEnvironment.sharedClient(
            configuration: .init(hooks: [
                .response { _, response in
                    response.status == 404 ? WebServiceResponse(status: 200, headers: [:], data: Data("null".utf8)) : response
                }
            ]))
        let missing = try await client.get("/employees/{n}", arguments: ["n": 1], as: Employee?.self)
        #expect(missing == nil)
    }

    @Test func successStatusesDecideWhatThrows() async throws {
        let client = try ClientTestEnvironment.sharedClient()
        var request = WebServiceRequest(.get, "/employees/{n}", arguments: ["n": 1])
        await #expect {
            _ = try await client.send(request)
        } throws: { ($0 as? WebServiceError)?.status == 404 }
        request.successStatuses = [200, 404]
        let response = try await client.send(request)
        #expect(response.status == 404)
        #expect(response.isJSON || response.header("Content-Type")?.contains("problem+json") == true)

        let strict = try ClientTestEnvironment.sharedClient(configuration: .init(successStatuses: [201]))
        await #expect {
            _ = try await strict.send(WebServiceRequest(.get, "/departments"))
        } throws: { ($0 as? WebServiceError)?.status == 200 }
    }

    @Test func loggingWritesALinePerExchangeWithoutCredentials() async throws {
        let log = LogLines()
        let client = try ClientTestEnvironment.sharedClient(
            configuration: .init(
                credentials: .basic(username: "ann", password: "secret"), hooks: [.logging(log.append)]))
        _ = try await client.send(WebServiceRequest(.get, "/departments"))
        _ = try? await client.send(WebServiceRequest(.get, "/employees/{n}", arguments: ["n": 1]))
        let lines = log.all
        #expect(lines.count == 2)
        #expect(
            lines.first?.firstMatch(of: /^GET http:\/\/127\.0\.0\.1:\d+\/departments -> 200, \d+ bytes, \d+ ms$/) != nil,
            "\(lines)")
        #expect(lines.last?.contains("/employees/1 -> 404") == true)
        #expect(!lines.joined().contains("YW5u"))
    }

    @Test func streamsGoThroughTheHooks() async throws {
        let log = LogLines()
        let client = try ClientTestEnvironment.sharedClient(configuration: .init(hooks: [.logging(log.append)]))
        var count = 0
        for try await _ in client.stream("/employees", arguments: ["name": "bal*"], of: EmployeeSummary.self) { count += 1 }
        #expect(count > 0)
        #expect(log.all.count == 1 && log.all[0].contains("/employees?name=bal%2A -> 200"), "\(log.all)")

        // A hook's answer is streamed from its body.
        let replacing = try ClientTestEnvironment.sharedClient(
            configuration: .init(hooks: [
                .response { _, _ in
                    WebServiceResponse(
                        status: 200, headers: [:], data: Data(#"[{"employeeNumber":1,"firstName":"A","lastName":"B"}]"#.utf8))
                }
            ]))
        var replaced: [EmployeeSummary] = []
        for try await employee in replacing.stream("/employees", arguments: ["name": "bal*"], of: EmployeeSummary.self) {
            replaced.append(employee)
        }
        #expect(replaced == [EmployeeSummary(employeeNumber: 1, firstName: "A", lastName: "B")])
    }

    @Test func textAnswersDecodeAsString() async throws {
        let text = "Grüße, line one\nline two\n"
        let server = try ScriptedServer([
            { HTTPResponse(status: .ok, text: text) },
            {
                var response = HTTPResponse(status: .ok, text: "a,b\n1,2\n")
                response.headers["Content-Type"] = "text/csv; charset=utf-8"
                return response
            },
        ])
        defer { server.stop() }
        let client = WebServiceClient(baseURL: server.baseURL)
        let plain = try await client.send(WebServiceRequest(.get, "/notes.txt"))
        #expect(plain.header("Content-Type")?.hasPrefix("text/plain") == true)
        #expect(try plain.decode(String.self) == text)
        #expect(try await client.get("/table.csv", as: String.self) == "a,b\n1,2\n")
    }
}
