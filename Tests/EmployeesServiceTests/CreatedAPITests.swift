import HTTPTestClient
import PostgreSQL
import PostgreSQLWebService
import Testing
import WebService

/// Creates in their one form, `created(at:)`: the statements select the
/// row they would insert, so that the tests write nothing.
private struct CreatingService: WebService {
    let path = "/things"
    let description = "Creates that write nothing."

    struct Thing: Codable, Sendable {
        var id: Int?
        var name: String
    }

    var routes: [Route] {
        Route(.post, "/object", returns: Thing.self) {
            Query.object("SELECT 7 AS id, 'seven' AS name", notFound: "none").created(at: "/things/{id}")
        }
        Route(.post, "/transaction", returns: Thing.self) {
            Query.transaction(["SELECT 1", "SELECT 8 AS id, 'eight / ocho' AS name"]).created(at: "/things/{name}")
        }
        Route(.post, "/unlocated", returns: Thing.self) {
            Query.transaction(["SELECT NULL::int AS id, 'nobody' AS name"]).created(at: "/things/{id}")
        }
    }
}

@Suite struct CreatedAPITests {
    @Test("created(at:) answers 201 with Location, on a transaction and on an object query alike")
    func createsAnswer201WithLocation() throws {
        let runner = QueryRunner(pool: ConnectionPool(.init(conninfo: try TestEnvironment.conninfo(), size: 2)))
        let server = try TestServer.serve([CreatingService()], runner: runner)
        try server.start()
        defer { server.stop() }

        let object = try TestClient.request("POST", "/things/object", port: server.port)
        #expect(object.status == 201)
        #expect(object.header("Location") == "/things/7")
        #expect(object.text == #"{"id":7,"name":"seven"}"#)

        let transaction = try TestClient.request("POST", "/things/transaction", port: server.port)
        #expect(transaction.status == 201)
        #expect(transaction.header("Location") == "/things/eight%20%2F%20ocho", "a value is percent-encoded as one segment")

        let unlocated = try TestClient.request("POST", "/things/unlocated", port: server.port)
        #expect(unlocated.status == 201)
        #expect(unlocated.header("Location") == nil, "no Location when the row's value is NULL")
    }
}
