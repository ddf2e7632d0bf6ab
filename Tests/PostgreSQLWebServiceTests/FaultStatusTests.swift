import HTTPServer
import PostgreSQL
import PostgreSQLWebService
import Testing
import WebService

/// The statuses the fault tests (Tests/ReliabilityTests) rely on: a lost or
/// refused database answers 503 with `Retry-After`, a cancelled statement 504.
@Suite struct FaultStatusTests {
    @Test(arguments: [
        SQLState.connectionFailure, .sqlClientUnableToEstablishSQLConnection, .connectionDoesNotExist,
        .adminShutdown, .crashShutdown, .cannotConnectNow,
    ])
    func lostDatabaseAnswers503WithRetryAfter(code: SQLState) throws {
        let problem = try #require(DatabaseError(code: code, message: "server closed the connection").httpError)
        #expect(problem.status == .serviceUnavailable)
        #expect(problem.headers["Retry-After"] == "1")
        #expect(!problem.detail.contains("server closed"), "the server's message is not sent to clients")
    }

    @Test func cancelledStatementAnswers504() throws {
        let problem = try #require(DatabaseError(code: .queryCanceled, message: "canceling statement due to statement timeout").httpError)
        #expect(problem.status == .gatewayTimeout)
    }

    @Test func busyPoolAnswers503WithRetryAfter() throws {
        let problem = try #require(PoolTimeoutError(timeout: .milliseconds(500), poolSize: 2).httpError)
        #expect(problem.status == .serviceUnavailable)
        #expect(problem.headers["Retry-After"] == "1")
    }
}
