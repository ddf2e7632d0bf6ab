import Foundation
import HTTPTestClient
import PostgreSQL
@testable import PostgreSQLWebService

/// Helpers for the integration tests: they use the PostgreSQL cluster named
/// by the standard `PG*` environment variables (`scripts/pg-cluster env`).
enum TestDatabase {
    /// A new connection from the `PG*` environment.
    static func connect() throws -> Connection {
        try Connection()
    }

    /// A pool over the `PG*` environment.
    static func pool(size: Int = 4, acquireTimeout: Duration = .seconds(5)) -> ConnectionPool {
        ConnectionPool(.init(conninfo: "", size: size, acquireTimeout: acquireTimeout))
    }

    /// Creates a schema of its own for one test, runs `body` with its name,
    /// and drops it afterwards.
    static func withScratchSchema<R>(_ setup: String, _ body: (String) throws -> R) throws -> R {
        let schema = "test_\(UInt32.random(in: 0...UInt32.max))"
        let connection = try connect()
        try connection.executeScript("CREATE SCHEMA \(schema); SET search_path = \(schema); \(setup)")
        defer { try? connection.executeScript("DROP SCHEMA \(schema) CASCADE") }
        return try body(schema)
    }

    /// A query's rows, started on a connection of `pool` (as its runner
    /// starts them, before a response): an object query's first row.
    static func rows(of query: Query, on pool: ConnectionPool, blockSize: Int? = nil, access: Access = .unrestricted) throws -> RowStream {
        let format: RowStream.Format = if case .object = query.shape { .firstRow } else { .json }
        return try query.rows(on: pool, format: format, options: JSONRenderingOptions(), access: access, blockSize: blockSize)
    }

    /// A query's rows, started on `connection`, which stays the caller's.
    static func rows(of query: Query, on connection: Connection) throws -> RowStream {
        let format: RowStream.Format = if case .object = query.shape { .firstRow } else { .json }
        return try query.rows(on: connection, from: nil, format: format, options: JSONRenderingOptions(), access: .unrestricted)
    }

    /// Streams a query's whole body into one string.
    static func body(of query: Query, on pool: ConnectionPool, blockSize: Int? = nil) throws -> String {
        try body(of: rows(of: query, on: pool, blockSize: blockSize))
    }

    /// Streams the rest of a stream's body into one string, and closes it.
    static func body(of rows: RowStream) throws -> String {
        var output: [UInt8] = []
        defer { rows.close() }
        while try rows.write(into: &output) {}
        return String(decoding: output, as: UTF8.self)
    }

    /// Parses JSON text into Foundation values, for comparing documents.
    static func json(_ text: String) throws -> NSObject {
        try JSONReader.value(text.utf8) as! NSObject
    }
}
