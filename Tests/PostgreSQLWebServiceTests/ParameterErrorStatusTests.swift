import HTTPServer
import PostgreSQL
import PostgreSQLWebService
import Testing
import WebService

@Suite("SQL parameter errors to HTTP status")
struct ParameterErrorStatusTests {
    @Test("a NUL in a value is the client's 400; a missing parameter is the service's 500")
    func statuses() {
        #expect(ParameterError(.nulCharacter, name: "name").httpError?.status.code == 400)
        #expect(ParameterError(.missing, name: "name").httpError == nil)
        #expect(ParameterError(.unknown, name: "name").httpError == nil)
    }
}
