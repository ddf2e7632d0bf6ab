import Foundation
import Testing
import WebServiceClient

/// Typed calls against the real server and database.
@Suite("WebServiceClient calls")
struct WebServiceClientTests {
    @Test func getFillsThePathVariableAndDecodesDatesAndDetails() async throws {
        let client = try ClientTestEnvironment.sharedClient()
        let employee = try await client.get(
            "/employees/{employeeNumber}", arguments: ["employeeNumber": 10004, "details": ["titles", "salaries"]],
            as: Employee.self)
        #expect(employee.employeeNumber == 10004)
        #expect(employee.firstName == "Ilse" || !employee.firstName.isEmpty)
        let birthDate = try ClientTestEnvironment.integer(
            "SELECT extract(epoch FROM birth_date)::int FROM employees WHERE emp_no = 10004")
        #expect(employee.birthDate == Date(timeIntervalSince1970: TimeInterval(birthDate)))
        let titles = try ClientTestEnvironment.integer("SELECT count(*)::int FROM titles WHERE emp_no = 10004")
        let salaries = try ClientTestEnvironment.integer("SELECT count(*)::int FROM salaries WHERE emp_no = 10004")
        #expect(employee.titles?.count == titles)
        #expect(employee.salaries?.count == salaries)
    }

    @Test func listArgumentsRepeatTheName() async throws {
        let client = try ClientTestEnvironment.sharedClient()
        #expect(try await client.get("/math/sum", arguments: ["a": 2, "b": 4], as: Double.self) == 6)
        #expect(try await client.get("/math/sum", arguments: ["values": [1, 2, 3.5]], as: Double.self) == 6.5)
    }

    @Test func rawBytesAndHeadersAreThere() async throws {
        let client = try ClientTestEnvironment.sharedClient()
        let response = try await client.send(WebServiceRequest(.get, "/departments"))
        #expect(response.status == 200)
        #expect(response.header("content-type")?.hasPrefix("application/json") == true)
        #expect(response.header("Cache-Control") == "max-age=300")
        #expect(String(decoding: response.data, as: UTF8.self).contains("\"d005\""))
        #expect(!response.isStale && !response.isFromCache)
        let departments = try response.decode([Department].self)
        #expect(departments.count == 9)
    }

    @Test func epochMillisecondsDecodeToTheSameDates() async throws {
        struct Dated: Decodable { var day: Date; var instant: Date; var millis: Date }
        let json = #"{"day":"1957-02-20","instant":"1957-02-20T00:00:00Z","millis":-405907200000}"#
        let dated = try WebServiceDecoding.decoder().decode(Dated.self, from: Data(json.utf8))
        #expect(dated.day == dated.instant)
        #expect(dated.millis == dated.day)
    }

    @Test func formAndJSONBodiesAndTheOtherVerbs() async throws {
        let client = try ClientTestEnvironment.sharedClient()
        #expect(
            try await client.post("/echo/form", arguments: ["name": "total", "values": [1, 2, 3]], as: String.self)
                == "total: 6")
        #expect(
            try await client.post("/echo/form", arguments: ["name": "json", "values": [4, 5]], encoding: .json, as: String.self)
                == "json: 9")
        let item = EchoService.Item(id: 7, name: "Tea & Biscuits", tags: ["a", "b"])
        #expect(try await client.post("/echo/items", json: item, as: EchoService.Item.self) == item)
        #expect(
            try await client.put("/echo/items/{id}", arguments: ["id": 3, "name": "x y"], as: EchoService.Echo.self)
                == EchoService.Echo(method: "PUT", id: 3, name: "x y"))
        #expect(
            try await client.patch(
                "/echo/items/{id}", arguments: ["id": 4, "name": "é"], encoding: .json,
                as: EchoService.Echo.self) == EchoService.Echo(method: "PATCH", id: 4, name: "é"))
        #expect(
            try await client.delete("/echo/items/{id}", arguments: ["id": 5], as: EchoService.Echo.self)
                == EchoService.Echo(method: "DELETE", id: 5, name: nil))
    }

    @Test func multipartUploadStreamsAFileFromDisk() async throws {
        let client = try ClientTestEnvironment.sharedClient()
        let folder = try ClientTestEnvironment.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appending(path: "photo.bin")
        var bytes = [UInt8](repeating: 0, count: 3 << 20)
        for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 31 &+ 7) }
        bytes.replaceSubrange(0..<9, with: Array("JPEG-LIKE".utf8))
        try Data(bytes).write(to: file)
        let upload = try await client.post("/echo/upload", arguments: ["label": "holiday", "file": file], as: EchoService.Upload.self)
        #expect(upload.label == "holiday")
        #expect(upload.filename == "photo.bin")
        #expect(upload.size == bytes.count)
        #expect(upload.head.hasPrefix("JPEG-LIKE"))
        #expect(upload.checksum == bytes.reduce(0) { $0 &+ Int($1) })

        let inMemory = try await client.post(
            "/echo/upload",
            arguments: [
                "label": "note", "file": RequestArgumentValue.data(Data("hello".utf8), filename: "n.txt", contentType: "text/plain"),
            ],
            as: EchoService.Upload.self)
        #expect(
            inMemory
                == EchoService.Upload(
                    label: "note", filename: "n.txt", contentType: "text/plain", size: 5, head: "hello",
                    checksum: Array("hello".utf8).reduce(0) { $0 + Int($1) }))
    }

    @Test func authenticationAndHeadersPerClientAndPerRequest() async throws {
        let client = try ClientTestEnvironment.sharedClient(
            configuration: .init(
                headers: ["X-Client": "tests"], credentials: .basic(username: "ann", password: "s3cret")))
        let fields = try await client.get("/echo/headers", as: [String: String].self)
        #expect(fields["Authorization"] == "Basic " + Data("ann:s3cret".utf8).base64EncodedString())
        #expect(fields["X-Client"] == "tests")
        #expect(fields["Accept"] == "application/json")

        let request = WebServiceRequest(
            .get, "/echo/headers", headers: ["X-Call": "one", "X-Client": "override"],
            credentials: .bearer("token-1"))
        let perCall = try await client.send(request).decode([String: String].self)
        #expect(perCall["Authorization"] == "Bearer token-1")
        #expect(perCall["X-Client"] == "override")
        #expect(perCall["X-Call"] == "one")
    }

    @Test func aProblemDocumentBecomesAWebServiceError() async throws {
        let client = try ClientTestEnvironment.sharedClient()
        let error = await #expect(throws: WebServiceError.self) {
            try await client.get("/employees/{n}", arguments: ["n": 10004, "details": "bonus"], as: Employee.self)
        }
        #expect(error?.code == .server)
        #expect(error?.status == 400)
        #expect(error?.title == "Bad Request")
        #expect(error?.parameter == "details")
        #expect(error?.detail?.contains("bonus") == true)

        let missing = await #expect(throws: WebServiceError.self) {
            try await client.get("/employees/{n}", arguments: ["n": 1], as: Employee.self)
        }
        #expect(missing?.status == 404)
        #expect(missing?.parameter == "employeeNumber")

        let unfilled = await #expect(throws: WebServiceError.self) {
            try await client.get("/employees/{n}", as: Employee.self)
        }
        #expect(unfilled?.code == .invalidRequest)
        #expect(unfilled?.parameter == "n")
    }

    @Test func transportFailureTimeoutAndCancellationAreDistinct() async throws {
        let closed = WebServiceClient(baseURL: URL(string: "http://127.0.0.1:\(try ClientTestEnvironment.closedPort())")!)
        let refused = await #expect(throws: WebServiceError.self) { try await closed.get("/departments", as: [Department].self) }
        #expect(refused?.code == .transport)

        let client = try ClientTestEnvironment.sharedClient()
        // The server would answer after 30 s: either ending is well before.
        let slow = WebServiceRequest(.get, "/echo/slow", arguments: ["seconds": 30], timeout: 0.5)
        let timedOut = await #expect(throws: WebServiceError.self) { try await client.send(slow) }
        #expect(timedOut?.code == .timedOut)

        let task = Task { try await client.get("/echo/slow", arguments: ["seconds": 30], as: String.self) }
        try await Task.sleep(for: .milliseconds(200))
        let started = Date()
        task.cancel()
        let cancelled = await #expect(throws: WebServiceError.self) { try await task.value }
        #expect(cancelled?.code == .cancelled)
        // Before the answer (30 s); a loaded machine took 20 s to deliver the cancellation.
        #expect(Date().timeIntervalSince(started) < 27)
    }
}
