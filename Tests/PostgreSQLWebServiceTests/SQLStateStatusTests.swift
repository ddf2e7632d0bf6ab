import PostgreSQL
import PostgreSQLWebService
import Testing
import WebService

/// The SQLSTATE → HTTP table of `DatabaseError+HTTP.swift`, without a
/// database (EmployeesServiceTests checks it end to end on a real server).
@Suite("SQLSTATE to HTTP status")
struct SQLStateStatusTests {
    @Test(
        "each mapped SQLSTATE gets its status and a fixed detail",
        arguments: [
            ("22P02", 400), ("22003", 400), ("22007", 400), ("22008", 400), ("22001", 400),
            ("42501", 403), ("23505", 409), ("23503", 409), ("23P01", 409), ("23502", 400), ("23514", 400), ("57014", 504),
            ("22012", 400), ("25006", 405), ("42601", 400), ("53300", 503), ("28000", 403), ("2201B", 400), ("22025", 400),
            ("21000", 400), ("0A000", 400), ("44000", 400),
            ("08000", 503), ("08001", 503), ("08003", 503), ("08006", 503), ("08P01", 503),
            ("57P01", 503), ("57P02", 503), ("57P03", 503),
        ])
    func mapped(code: String, status: Int) throws {
        let message = #"invalid input syntax for type integer: "hunter2""#
        let error = DatabaseError(code: SQLState(rawValue: code), message: message, detail: "Key (x)=(hunter2)")
        let problem = try #require(error.httpError)
        #expect(problem.status.code == status)
        #expect(problem.headers["Retry-After"] == (status == 503 ? "1" : nil))
        let body = String(decoding: problem.problemJSON, as: UTF8.self)
        #expect(body.contains(#""sqlState":"\#(code)""#))
        #expect(!body.contains("hunter2"))
        #expect(!body.contains("invalid input syntax"))
    }

    @Test(
        "other SQLSTATEs are left to the router's 500 with an error id",
        arguments: [
            "XX000", "40001", "42P17", "P0002", "53400", "25001", "54001", "55P03", "58030",
        ])
    func unmapped(code: String) {
        #expect(DatabaseError(code: SQLState(rawValue: code), message: "anything").httpError == nil)
    }

    @Test("a violated constraint is named, or the column of a missing value; the values never are")
    func constraintNames() throws {
        let unique = DatabaseError(
            code: .uniqueViolation, message: "duplicate", detail: "Key (name)=(hunter2)", constraint: "items_name_key")
        let problem = try #require(unique.httpError)
        #expect(problem.detail == #"The request conflicts with an existing record (constraint "items_name_key")."#)
        let body = String(decoding: problem.problemJSON, as: UTF8.self)
        #expect(body.contains(#""constraint":"items_name_key""#) && !body.contains("hunter2"))
        let missing = try #require(DatabaseError(code: .notNullViolation, message: "null", column: "name").httpError)
        #expect(missing.status == .badRequest && missing.detail == #"A required value is missing (column "name")."#)
        let check = try #require(DatabaseError(code: .checkViolation, message: "check", constraint: "price_check").httpError)
        #expect(check.detail == #"A value in the request breaks a rule of the database (constraint "price_check")."#)
        #expect(
            try #require(DatabaseError(code: .foreignKeyViolation, message: "fk").httpError).detail
                == "The request refers to a record that does not exist or is still referenced.")
    }

    @Test("PostgREST's mapping of what names the schema's objects or comes from a function's RAISE: its message is the caller's")
    func callerMessages() throws {
        let column = try #require(DatabaseError(code: .undefinedColumn, message: "column people.agee does not exist").httpError)
        #expect(column.status == .badRequest && column.detail == "column people.agee does not exist" && column.code == "42703")
        let function = try #require(DatabaseError(code: SQLState(rawValue: "42883"), message: "function f(int) does not exist").httpError)
        #expect(function.status == .notFound)
        let raised = try #require(
            DatabaseError(code: SQLState(rawValue: "P0001"), message: "out of stock", detail: "item 4", hint: "order less").httpError)
        #expect(raised.status == .badRequest && raised.detail == "out of stock" && raised.hint == "order less")
        let status = try #require(DatabaseError(code: SQLState(rawValue: "PT402"), message: "pay first").httpError)
        #expect(status.status.code == 402 && status.detail == "pay first")
        #expect(DatabaseError(code: SQLState(rawValue: "PT40A"), message: "x").httpError == nil)
    }

    @Test("a pool timeout is 503 with Retry-After")
    func poolTimeout() throws {
        let problem = try #require(PoolTimeoutError(timeout: .seconds(5), poolSize: 10).httpError)
        #expect(problem.status == .serviceUnavailable)
        #expect(problem.headers["Retry-After"] == "1")
    }

    @Test("each error answered over HTTP counts once under its SQLSTATE class, mapped or not (a 500)")
    func countedByClass() {
        func count(_ sqlStateClass: String) -> UInt64 {
            DatabaseError.answeredByClass.values.first { $0.name == sqlStateClass }?.value ?? 0
        }
        // Class "XX" (internal error) and "P0" (PL/pgSQL) are used by no other test here.
        let internalBefore = count("XX")
        let raisedBefore = count("P0")
        _ = DatabaseError(code: SQLState(rawValue: "XX000"), message: "internal").httpError
        _ = DatabaseError(code: SQLState(rawValue: "XX001"), message: "corrupted").httpError
        _ = DatabaseError(code: SQLState(rawValue: "P0001"), message: "raised").httpError
        #expect(count("XX") - internalBefore == 2)
        #expect(count("P0") - raisedBefore == 1)
    }
}
