import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import WebServiceClient

/// The cache never lets one caller's answer reach another, and keeps no
/// credential where another could read it.
@Suite("ResponseCache and credentials")
struct ResponseCacheCredentialTests {
    private func client(_ server: URL, _ authorization: Authorization?, _ folder: URL) throws -> WebServiceClient {
        // A cache of its own on the shared folder, as another process would open it.
        WebServiceClient(baseURL: server, configuration: .init(credentials: authorization, cache: try ResponseCache(directory: folder)))
    }

    @Test func callersWithOtherCredentialsNeverGetAnotherCallersAnswerOnlineOrOffline() async throws {
        let folder = try ClientTestEnvironment.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try ClientTestEnvironment.startServer(poolSize: 1)
        defer { server.stop() }
        let url = ClientTestEnvironment.baseURL(of: server)
        let ann = try client(url, .basic(username: "ann", password: "ann-password"), folder)
        let bob = try client(url, .basic(username: "bob", password: "bob-password"), folder)
        let carol = try client(url, .bearer("carol-token"), folder)

        // `/echo/whoami` is fresh for a minute and names no `Vary`: keyed by URL
        // alone, Ann's answer would be Bob's.
        let forAnn = try await ann.send(WebServiceRequest(.get, "/echo/whoami"))
        #expect(try forAnn.decode(String.self) == "ann")
        let forBob = try await bob.send(WebServiceRequest(.get, "/echo/whoami", cachePolicy: .cacheFirst(maxAge: 3600)))
        #expect(!forBob.isFromCache)
        #expect(try forBob.decode(String.self) == "bob")
        let forBobAgain = try await bob.send(WebServiceRequest(.get, "/echo/whoami"))
        #expect(forBobAgain.isFromCache)
        #expect(try forBobAgain.decode(String.self) == "bob")
        // A call's own credentials count, not the client's.
        let forDan = try await ann.send(
            WebServiceRequest(
                .get, "/echo/whoami", credentials: .basic(username: "dan", password: "dan-password"),
                cachePolicy: .cacheFirst(maxAge: 3600)))
        #expect(try forDan.decode(String.self) == "dan")

        let employee = try await ann.send(WebServiceRequest(.get, "/employees/{n}", arguments: ["n": 10004]))
        #expect(employee.header("ETag") != nil)

        server.stop()
        // Offline, each caller has only what was stored for them.
        let annOffline = try await ann.send(WebServiceRequest(.get, "/employees/{n}", arguments: ["n": 10004]))
        #expect(annOffline.isStale && annOffline.data == employee.data)
        #expect(try await ann.send(WebServiceRequest(.get, "/echo/whoami")).decode(String.self) == "ann")
        for other in [bob, carol] {
            let error = await #expect(throws: WebServiceError.self) {
                try await other.send(WebServiceRequest(.get, "/employees/{n}", arguments: ["n": 10004]))
            }
            #expect(error?.code == .transport)
        }
        let carolsError = await #expect(throws: WebServiceError.self) {
            try await carol.send(WebServiceRequest(.get, "/echo/whoami", cachePolicy: .cacheFirst(maxAge: 3600)))
        }
        #expect(carolsError?.code == .transport)
    }

    @Test func credentialsOfTheSessionConfigurationKeyTheEntriesToo() async throws {
        let folder = try ClientTestEnvironment.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try ClientTestEnvironment.baseURL(of: ClientTestEnvironment.shared.get())
        let session = URLSessionConfiguration.default
        session.httpAdditionalHeaders = ["Authorization": Authorization.basic(username: "erin", password: "erin-password").headerValue]
        let erin = WebServiceClient(baseURL: server, configuration: .init(cache: try ResponseCache(directory: folder)), session: session)
        #expect(try await erin.send(WebServiceRequest(.get, "/echo/whoami")).decode(String.self) == "erin")
        _ = try await erin.send(WebServiceRequest(.get, "/employees/10004"))
        // Erin's answers are not an anonymous caller's.
        let anonymous = try client(server, nil, folder)
        let employee = try await anonymous.send(WebServiceRequest(.get, "/employees/10004", cachePolicy: .cacheFirst(maxAge: 3600)))
        #expect(!employee.isFromCache)
        let ann = try client(server, .basic(username: "ann", password: "ann-password"), folder)
        let forAnn = try await ann.send(WebServiceRequest(.get, "/echo/whoami", cachePolicy: .cacheFirst(maxAge: 3600)))
        #expect(try forAnn.decode(String.self) == "ann")
    }

    @Test func aPrivateAnswerWithoutCredentialsIsNotKept() async throws {
        let folder = try ClientTestEnvironment.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = try ResponseCache(directory: folder)
        let anonymous = try ClientTestEnvironment.sharedClient(configuration: .init(cache: cache))
        let answer = try await anonymous.send(WebServiceRequest(.get, "/echo/whoami"))
        #expect(try answer.decode(String.self) == "anonymous")
        #expect(cache.count == 0)
        _ = try await anonymous.send(WebServiceRequest(.get, "/departments"))
        #expect(cache.count == 1)
    }

    @Test func noCacheFileHoldsACredential() async throws {
        let folder = try ClientTestEnvironment.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try ClientTestEnvironment.baseURL(of: ClientTestEnvironment.shared.get())
        let password = "password-\(UUID().uuidString)"
        let token = "token-\(UUID().uuidString)"
        let cookie = "cookie-\(UUID().uuidString)"
        let basic = Authorization.basic(username: "ann", password: password)
        let clients = [
            try client(server, basic, folder),
            try client(server, .bearer(token), folder),
        ]
        for client in clients {
            for path in ["/echo/whoami", "/echo/whoami/varied", "/departments", "/employees/10004", "/echo/varied"] {
                _ = try await client.send(WebServiceRequest(.get, path, headers: ["Cookie": "session=\(cookie)", "X-Client": "a"]))
            }
        }
        let entries = try ResponseCache(directory: folder)
        #expect(entries.count == 10)

        let secrets = [password, token, cookie, basic.headerValue, String(basic.headerValue.dropFirst("Basic ".count))]
        var files = 0
        for case let file as URL in FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)! {
            guard let contents = try? Data(contentsOf: file) else { continue }
            files += 1
            for secret in secrets {
                #expect(contents.range(of: Data(secret.utf8)) == nil, "\(file.lastPathComponent) holds a credential")
            }
        }
        #expect(files == 10)
    }

    @Test func theFolderIsTheOwnersAloneAndSoIsEachFile() async throws {
        let parent = try ClientTestEnvironment.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: parent) }
        func permissions(_ url: URL) throws -> Int {
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            return (attributes[.posixPermissions] as! NSNumber).intValue & 0o777
        }

        let nested = parent.appending(path: "outer/inner")
        let cache = try ResponseCache(directory: nested)
        #expect(try permissions(parent.appending(path: "outer")) == 0o700)
        #expect(try permissions(nested) == 0o700)
        let client = try ClientTestEnvironment.sharedClient(configuration: .init(credentials: .bearer("t"), cache: cache))
        _ = try await client.send(WebServiceRequest(.get, "/departments"))
        _ = try await client.send(WebServiceRequest(.get, "/employees/10004"))
        let names = try FileManager.default.contentsOfDirectory(atPath: nested.path)
        #expect(names.count == 2)
        for name in names {
            #expect(try permissions(nested.appending(path: name)) == 0o600)
        }

        // A folder that was there already is made private too.
        let existing = parent.appending(path: "existing")
        try FileManager.default.createDirectory(at: existing, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        _ = try ResponseCache(directory: existing)
        #expect(try permissions(existing) == 0o700)
    }

    @Test func entriesOfTheEarlierFormatAreRemovedWhenTheCacheOpens() throws {
        let folder = try ClientTestEnvironment.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Named by a 64-bit hash, with a `Vary` value in clear.
        let earlier = folder.appending(path: "8c1f0d2e9a7b3c45.entry")
        try Data(#"{"key":"GET http://h/x","status":200,"headers":{},"storedAt":0,"varied":{"Authorization":"Bearer s"}}"#.utf8 + [10])
            .write(to: earlier)
        let cache = try ResponseCache(directory: folder)
        #expect(cache.count == 0)
        #expect(!FileManager.default.fileExists(atPath: earlier.path))
    }
}
