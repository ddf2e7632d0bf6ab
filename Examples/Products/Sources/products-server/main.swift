import Foundation
import PostgreSQL
import PostgreSQLWebService
import WebService

// The database comes from DATABASE_URL or the PG* variables; the port from PORT.
let environment = ProcessInfo.processInfo.environment
let pool = ConnectionPool(.init(conninfo: environment["DATABASE_URL"] ?? ""))
let router = WebServiceRouter(services: [ProductsService()], runners: [QueryRunner(pool: pool)])
let port = Int(environment["PORT"] ?? "") ?? 8080
let server = HTTPServer(configuration: .init(port: port, threading: .eventLoops(threads: 2))) { router.respond(to: $0) }
try server.start()
print("Serving http://127.0.0.1:\(server.port)/products")
server.runUntilSignalled()
