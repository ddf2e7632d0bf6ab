import Foundation
import PostgreSQL
import PostgreSQLWebService
import WebService

/// `GET /hello/{name}` answers `{"greeting": "Hello, name!"}`, from the database.
struct HelloService: WebService {
    let pool: ConnectionPool
    let path = "/hello"
    let description = "Greetings from PostgreSQL."

    var routes: [Route] {
        Route(.get, "/?:name", description: "Greets someone by name.",
              Parameter<String>("name", description: "Who to greet.")) { name in
            let adapter = ResultSetAdapter(pool, sql: "SELECT 'Hello, ' || :name || '!' AS greeting",
                                           arguments: ["name": name], shape: .object)
            _ = try adapter.start()
            return adapter
        }
    }
}

// The database comes from DATABASE_URL, else the PG* variables; the port from PORT.
let pool = ConnectionPool(.init(conninfo: ProcessInfo.processInfo.environment["DATABASE_URL"] ?? ""))
let router = WebServiceRouter(services: [HelloService(pool: pool)])
let port = Int(ProcessInfo.processInfo.environment["PORT"] ?? "") ?? 8080
let server = HTTPServer(configuration: .init(port: port)) { router.respond(to: $0) }
try server.start()
print("Serving http://127.0.0.1:\(server.port)/hello/world")
server.runUntilSignalled()
