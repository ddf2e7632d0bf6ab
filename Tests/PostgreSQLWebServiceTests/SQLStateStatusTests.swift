import HTTPServer
import PostgreSQL
import PostgreSQLWebService
import Testing
import WebService

/// The SQLSTATE to HTTP status table of `DatabaseError+HTTP.swift`.
@Suite("SQLSTATE to HTTP status")
struct SQLStateStatusTests {
    @Test("each SQLSTATE class answers its status", arguments: [
        ("22P02", 400), ("22003", 400), ("22007", 400), ("22008", 400),
        ("42501", 403), ("23505", 409), ("23503", 409), ("57014", 504),
        ("08006", 503), ("57P01", 503),
    ])
    func status(code: String, status: Int) throws {
        let error = DatabaseError(code: SQLState(rawValue: code), message: "secret input \"abc\"")
        let problem = try #require(error.httpError)
        #expect(problem.status.code == status)
        #expect(!problem.detail.contains("abc"), "the server's message is never echoed")
    }

    @Test("anything else is left to the router's 500")
    func unknown() {
        #expect(DatabaseError(code: .divisionByZero, message: "division by zero").httpError == nil)
    }
}

@Suite("SQL parameter errors to HTTP status")
struct ParameterErrorStatusTests {
    @Test("a NUL in a value is the client's 400; a missing parameter is the service's 500")
    func statuses() {
        #expect(ParameterError(.nulCharacter, name: "name").httpError?.status.code == 400)
        #expect(ParameterError(.missing, name: "name").httpError == nil)
        #expect(ParameterError(.unknown, name: "name").httpError == nil)
    }
}
