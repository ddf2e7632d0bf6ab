import Foundation
import OpenAPIRuntime
import OpenAPIURLSession

// Calls a live employees-server through the client that swift-openapi-generator
// made from its /openapi.json, and compares what the client decodes with the
// values scripts/openapi-client-check read from the database:
//
//   openapi-client-check http://127.0.0.1:8080
//
// EXPECTED_EMPLOYEE   10004|first|last|birth date|gender|hire date|titles|salaries
// EXPECTED_SEARCH     the first five numbers of `bal*`, comma-separated
// EXPECTED_DEPARTMENTS d001=Marketing,d002=Finance,...

struct CheckFailure: Error, CustomStringConvertible {
    let description: String
}

func expect<T: Equatable>(_ actual: T, _ expected: T, _ what: String) throws {
    guard actual == expected else { throw CheckFailure(description: "\(what): got \(actual), expected \(expected)") }
    print("ok   \(what): \(actual)")
}

func environment(_ name: String) throws -> String {
    guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else {
        throw CheckFailure(description: "\(name) is not set")
    }
    return value
}

@main
enum OpenAPIClientCheck {
    static func main() async {
        do {
            try await run()
        } catch {
            FileHandle.standardError.write(Data("openapi-client-check: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run() async throws {
        guard CommandLine.arguments.count == 2, let serverURL = URL(string: CommandLine.arguments[1]) else {
            throw CheckFailure(description: "usage: openapi-client-check BASE-URL")
        }
        let client = Client(serverURL: serverURL, transport: URLSessionTransport())

        // One employee with two of its details (a path variable and a comma list).
        let fields = try environment("EXPECTED_EMPLOYEE").split(separator: "|").map(String.init)
        let number = Int64(fields[0])!
        let employee = try await client.employees_getByEmployeeNumber(
            path: .init(employeeNumber: number), query: .init(details: [.titles, .salaries])
        ).ok.body.json
        try expect(employee.employeeNumber, number, "employees.getByEmployeeNumber employeeNumber")
        try expect(employee.firstName, fields[1], "firstName")
        try expect(employee.lastName, fields[2], "lastName")
        try expect(employee.birthDate, fields[3], "birthDate (format: date)")
        try expect(employee.gender.rawValue, fields[4], "gender (an enumeration)")
        try expect(employee.hireDate, fields[5], "hireDate")
        try expect(employee.titles?.count, Int(fields[6]), "titles nested")
        try expect(employee.salaries?.count, Int(fields[7]), "salaries nested")
        try expect(employee.departments == nil, true, "departments not asked for, not there")

        // A streamed list, filtered and limited.
        let search = try await client.employees_get(query: .init(name: "bal*", limit: 5)).ok.body.json
        try expect(
            search.map { String($0.employeeNumber) }.joined(separator: ","), try environment("EXPECTED_SEARCH"),
            "employees.get name=bal* limit=5")

        // Another list, whole.
        let departments = try await client.departments_get().ok.body.json
        try expect(
            departments.map { "\($0.departmentNumber)=\($0.departmentName)" }.joined(separator: ","),
            try environment("EXPECTED_DEPARTMENTS"), "departments.get")

        // A documented problem: an employee that does not exist.
        let missing = try await client.employees_getByEmployeeNumber(path: .init(employeeNumber: 1))
        let problem = try missing.notFound.body.applicationProblemJson
        try expect(problem.status, 404, "employees.getByEmployeeNumber 1 is a 404 problem")
        try expect(problem.parameter, "employeeNumber", "the problem names the parameter")

        // Merged overloads: one operation, either set of arguments.
        try expect(try await client.math_getSum(query: .init(a: 2, b: 4)).ok.body.json, 6, "math.getSum a=2 b=4")
        try expect(try await client.math_getSum(query: .init(values: [1, 2, 3.5])).ok.body.json, 6.5, "math.getSum values=1,2,3.5")
    }
}
