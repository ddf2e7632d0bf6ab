#if canImport(Glibc)
import Glibc
#endif
import HTTPServer
import Testing
import HTTPTestClient

extension HTTPServerTests {
    // MARK: - Bodies past the memory limit

    @Test func aBodyPastTheMemoryLimitIsSpooledAndReadWhole() throws {
        let seen = Shared<[(spooled: Int?, body: [UInt8], pieces: [UInt8])]>([])
        var configuration = HTTPServer.Configuration()
        configuration.bodyMemoryLimit = 64 << 10
        let server = try startServer(configuration) { request in
            var pieces: [UInt8] = []
            try? request.spooledBody?.forEachPiece(size: 1000) { pieces.append(contentsOf: $0) }
            seen.mutate { $0.append((request.spooledBody?.size, request.body, pieces)) }
            return HTTPResponse(status: .noContent)
        }
        defer { server.stop() }
        let client = try TestClient(port: server.port)
        let large = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let small = Array(repeating: UInt8(ascii: "s"), count: 64 << 10)
        #expect(try client.request("POST", "/large", body: large).status == 204)
        #expect(try client.request("POST", "/small", body: small).status == 204)
        // Chunked: spooled as it passes the limit, whatever the chunks.
        var chunked = Array("POST /chunked HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        for start in stride(from: 0, to: large.count, by: 50_000) {
            let chunk = large[start..<min(start + 50_000, large.count)]
            chunked += Array((String(chunk.count, radix: 16) + "\r\n").utf8) + chunk + Array("\r\n".utf8)
        }
        chunked += Array("0\r\n\r\n".utf8)
        let raw = try TestClient(port: server.port)
        try raw.send(chunked)
        #expect(try TestClient.Response(parsing: try raw.readToEnd()).status == 204)
        let requests = seen.value
        #expect(requests.count == 3)
        #expect(requests.first?.spooled == large.count && requests.first?.body == large && requests.first?.pieces == large)
        #expect(requests.dropFirst().first?.spooled == nil && requests.dropFirst().first?.body == small)
        #expect(requests.last?.spooled == large.count && requests.last?.body == large)
    }

    // MARK: - Forms

    @Test func urlencodedFormBecomesTextFields() throws {
        let seen = Shared<[HTTPRequest]>([])
        let server = try startServer { request in
            seen.mutate { $0.append(request) }
            return HTTPResponse(status: .noContent)
        }
        defer { server.stop() }
        let client = try TestClient(port: server.port)

        let response = try client.request(
            "POST", "/form",
            headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array("name=J%C3%BCrgen+M&empty=&list=1&list=2".utf8)
        )

        #expect(response.status == 204)
        let request = try #require(seen.value.first)
        #expect(request.body.isEmpty)
        #expect(request.formFields.map(\.name) == ["name", "empty", "list", "list"])
        #expect(request.formFields.map(\.text) == ["Jürgen M", "", "1", "2"])
        // Keep-alive holds after a form body too.
        #expect(try client.request("GET", "/again").status == 204)
    }

    @Test func multipartFormStreamsFilePartsIntoTemporaryFiles() throws {
        let uploads = Shared<[(field: String, file: UploadedFile, content: [UInt8])]>([])
        let texts = Shared<[String?]>([])
        let server = try startServer { request in
            for field in request.formFields {
                switch field.value {
                case .text(let text):
                    texts.mutate { $0.append("\(field.name)=\(text)") }
                case .file(let file):
                    uploads.mutate { $0.append((field.name, file, readFile(file.path))) }
                }
            }
            return HTTPResponse(text: "stored")
        }
        defer { server.stop() }
        let client = try TestClient(port: server.port)
        let fileContent = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let boundary = "----TestBoundary7MA4YWxkTrZu0gW"
        var body = Array(
            """
            --\(boundary)\r
            Content-Disposition: form-data; name="title"\r
            \r
            Grüße\r
            --\(boundary)\r
            Content-Disposition: form-data; name="attachment"; filename="data.bin"\r
            Content-Type: application/octet-stream\r
            \r

            """.utf8)
        body += fileContent
        body += Array("\r\n--\(boundary)--\r\n".utf8)

        let response = try client.request(
            "POST", "/upload",
            headers: [("Content-Type", "multipart/form-data; boundary=\(boundary)")],
            body: body
        )

        #expect(response.status == 200)
        #expect(texts.value == ["title=Grüße"])
        let upload = try #require(uploads.value.first)
        #expect(upload.field == "attachment")
        #expect(upload.file.filename == "data.bin")
        #expect(upload.file.contentType == "application/octet-stream")
        #expect(upload.file.size == fileContent.count)
        #expect(upload.content == fileContent)
        #expect(eventually { access(upload.file.path, F_OK) != 0 }, "the temporary file is removed after the response")
    }

    @Test func anUploadCutShortLeavesNoTemporaryFile() throws {
        let server = try startServer { _ in HTTPResponse(status: .noContent) }
        defer { server.stop() }
        let before = Set(uploadFiles())
        let client = try TestClient(port: server.port)
        let boundary = "cutShortBoundary"
        try client.send(
            "POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Content-Type: multipart/form-data; boundary=\(boundary)\r\nContent-Length: 1000000\r\n\r\n"
                + "--\(boundary)\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\n\r\n"
        )
        try client.send(Array(repeating: UInt8(ascii: "a"), count: 100_000))
        #expect(eventually { !Set(uploadFiles()).subtracting(before).isEmpty }, "the part is being stored")
        let created = Set(uploadFiles()).subtracting(before)

        _ = consume client

        #expect(eventually { Set(uploadFiles()).intersection(created).isEmpty }, "the file is removed when the request ends")
    }

    @Test func malformedFormsAreBadRequests() throws {
        let calls = Shared(0)
        let server = try startServer { _ in
            calls.mutate { $0 += 1 }
            return HTTPResponse(status: .noContent)
        }
        defer { server.stop() }

        let missingBoundary = try TestClient(port: server.port).request(
            "POST", "/upload", headers: [("Content-Type", "multipart/form-data")], body: Array("x".utf8)
        )
        #expect(missingBoundary.status == 400)

        let truncated = try TestClient(port: server.port).request(
            "POST", "/upload",
            headers: [("Content-Type", "multipart/form-data; boundary=XYZ")],
            body: Array("--XYZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nvalue without end".utf8)
        )
        #expect(truncated.status == 400)
        #expect(truncated.header("Content-Type") == "application/problem+json")

        let badUTF8 = try TestClient(port: server.port).request(
            "POST", "/form",
            headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array("ok=1&name=%FF%FE".utf8)
        )
        #expect(badUTF8.status == 400)
        #expect(badUTF8.text.contains(#""parameter":"name""#))
        #expect(calls.value == 0)
    }

    // MARK: - Raw bodies and limits

    @Test func otherContentTypesArriveAsRawBytes() throws {
        let seen = Shared<[HTTPRequest]>([])
        let server = try startServer { request in
            seen.mutate { $0.append(request) }
            return HTTPResponse(json: request.body)
        }
        defer { server.stop() }
        let client = try TestClient(port: server.port)
        let json = Array(#"{"name":"Zoë","values":[1,2,3]}"#.utf8)

        let response = try client.request("POST", "/echo", headers: [("Content-Type", "application/json")], body: json)

        #expect(response.status == 200)
        #expect(response.body == json)
        #expect(response.header("Content-Type") == "application/json; charset=utf-8")
        let request = try #require(seen.value.first)
        #expect(request.contentType == "application/json")
        #expect(request.formFields.isEmpty)
    }

    @Test func aBodyLargerThanAllBodiesTogetherMayBeIsContentTooLarge() throws {
        var configuration = HTTPServer.Configuration(maximumBodySize: 10_000)
        configuration.maximumBodyBytesInFlight = 4_000
        let server = try startServer(configuration) { _ in HTTPResponse(status: .noContent) }
        defer { server.stop() }
        let body = [UInt8](repeating: UInt8(ascii: " "), count: 5_000)
        // Alone on the server, it could never be held: 413 naming the limit it meets, not a 503 to retry.
        let alone = try TestClient.request("POST", "/big", port: server.port, headers: [("Content-Type", "application/json")], body: body)
        #expect(alone.status == 413 && alone.header("Retry-After") == nil, "\(alone)")
        #expect(alone.text.contains("limit of 4000 bytes"), "\(alone.text)")
        let chunked = try TestClient(port: server.port)
        try chunked.send(
            "POST /big HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n1388\r\n\(String(repeating: " ", count: 5_000))\r\n0\r\n\r\n"
        )
        #expect(try chunked.readResponse().status == 413)
        let within = try TestClient.request(
            "POST", "/big", port: server.port, headers: [("Content-Type", "application/json")], body: Array(body.prefix(3_000)))
        #expect(within.status == 204)
    }

    @Test func aBodyOverTheLimitIsContentTooLarge() throws {
        let calls = Shared(0)
        let server = try startServer(.init(maximumBodySize: 1000)) { _ in
            calls.mutate { $0 += 1 }
            return HTTPResponse(status: .noContent)
        }
        defer { server.stop() }

        let declared = try TestClient(port: server.port)
        try declared.send("POST /big HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n")
        let declaredResponse = try declared.readResponse()
        #expect(declaredResponse.status == 413)
        #expect(declaredResponse.header("Content-Type") == "application/problem+json")
        #expect(declaredResponse.text.contains(#""status":413"#))

        let chunked = try TestClient(port: server.port)
        let chunk = String(repeating: "x", count: 600)
        try chunked.send(
            "POST /big HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "258\r\n\(chunk)\r\n258\r\n\(chunk)\r\n0\r\n\r\n"
        )
        #expect(try chunked.readResponse().status == 413)

        let withinLimit = try TestClient(port: server.port).request("POST", "/small", body: Array(repeating: 65, count: 1000))
        #expect(withinLimit.status == 204)
        #expect(calls.value == 1)
    }
}

extension FormField {
    var text: String? {
        if case .text(let text) = value { return text }
        return nil
    }
}

func readFile(_ path: String) -> [UInt8] {
    guard let file = fopen(path, "rb") else { return [] }
    defer { fclose(file) }
    var content: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = fread(&buffer, 1, buffer.count, file)
        if count == 0 { return content }
        content += buffer[0..<count]
    }
}

/// The names in the folder at `path` (empty if it cannot be read).
func directoryNames(_ path: String) -> [String] {
    guard let folder = opendir(path) else { return [] }
    defer { closedir(folder) }
    var names: [String] = []
    while let entry = readdir(folder) {
        // `d_name` is declared 256 bytes long but the entry may end sooner:
        // read the name in place, up to its NUL, never copy the whole field.
        names.append(
            String(
                cString: UnsafeRawPointer(entry).advanced(by: MemoryLayout<dirent>.offset(of: \dirent.d_name)!)
                    .assumingMemoryBound(to: CChar.self)))
    }
    return names
}

/// The upload files the server currently holds (`http-upload-*` in the temporary folder).
func uploadFiles() -> [String] {
    let directory = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    return directoryNames(directory).filter { $0.hasPrefix("http-upload-") }
}
