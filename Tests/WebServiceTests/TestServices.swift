import Foundation
import WebService

// MARK: - Types

enum Detail: String, CaseIterable, ArgumentValue {
    case titles, salaries
}

struct Title: Codable, Equatable {
    var title: String
    var fromDate: Date
    var toDate: Date?
}

struct Employee: Codable, Equatable {
    var employeeNumber: Int
    var firstName: String
    var lastName: String
    var hireDate: Date
    var titles: [Title]?
}

/// Every supported argument type, echoed back in declaration order.
struct Conversions: Encodable {
    var text: String
    var integer: Int
    var long: Int64
    var double: Double
    var flag: Bool
    var date: Date
    var uuid: UUID
    var url: URL
    var detail: Detail
    var limit: Int
    var note: String?
    var numbers: [Int]
}

extension Detail: Encodable {}

struct ConflictError: HTTPErrorConvertible {
    var httpError: HTTPError? { HTTPError(.conflict, detail: "The record was changed meanwhile.") }
}

struct SecretFailure: Error, CustomStringConvertible {
    var description: String { "password=hunter2 at /srv/secret.swift:42" }
}

/// Counts from 1 to `count` as a JSON array, one element per call.
final class CountingStream: StreamingBody {
    let count: Int
    var next = 1
    private(set) var closed = false

    init(count: Int) { self.count = count }

    func write(into output: inout [UInt8]) throws -> Bool {
        output.append(UInt8(ascii: next == 1 ? "[" : ","))
        JSONWriter.appendInteger(next, to: &output)
        next += 1
        if next > count {
            output.append(UInt8(ascii: "]"))
            return false
        }
        return true
    }

    func close() { closed = true }
}

// MARK: - Services

struct MathService: WebService {
    let path = "/math"
    let description = "Math operations."

    var routes: [Route] {
        Route(
            .get, "/sum", description: "Returns the sum of two numbers.",
            Parameter<Double>("a", description: "The first number."),
            Parameter<Double>("b", description: "The second number.")
        ) { a, b in a + b }
        Route(
            .get, "/sum", description: "Returns the sum of a list of numbers.",
            Parameter<[Double]>("values", description: "The numbers to add.")
        ) { values in values.reduce(0, +) }
    }
}

struct CatalogService: WebService {
    let path = "/catalog"
    let description = "Exercises routing, arguments and results <&>."

    var routes: [Route] {
        // MARK: Routing
        Route(.get, "/", description: "The root resource.") { "root" }
        Route(.get, "/items/?:id", description: "An item by number.", Parameter<Int>("id")) { id in "item \(id)" }
        Route(.get, "/items/special", description: "A literal beats a variable.") { "special" }
        Route(.put, "/items/?:id", Parameter<Int>("id"), Parameter<String>("name")) { id, name in "put \(id) \(name)" }
        Route(.patch, "/items/?:id", Parameter<Int>("id")) { id in "patch \(id)" }
        Route(.delete, "/items/?:id", Parameter<Int>("id")) { _ in }
        Route(.get, "/years/?/?", PathVariable<Int>(0), PathVariable<String>(1)) { year, name in "\(name) in \(year)" }

        // MARK: Arguments
        Route(
            .get, "/conversions", description: "Echoes every argument type.",
            Parameter<String>("text"), Parameter<Int>("integer"), Parameter<Int64>("long"),
            Parameter<Double>("double"), Parameter<Bool>("flag"), Parameter<Date>("date"),
            Parameter<UUID>("uuid"), Parameter<URL>("url"), Parameter<Detail>("detail"),
            Parameter<Int>("limit", default: 100), Parameter<String?>("note"),
            Parameter<[Int]>("numbers")
        ) { text, integer, long, double, flag, date, uuid, url, detail, limit, note, numbers in
            Conversions(
                text: text, integer: integer, long: long, double: double, flag: flag, date: date,
                uuid: uuid, url: url, detail: detail, limit: limit, note: note, numbers: numbers)
        }
        Route(.get, "/details", Parameter<[Detail]>("details")) { details in details.map(\.rawValue) }
        Route(.post, "/form", Parameter<String>("name"), Parameter<[Int]>("values")) { name, values in
            "\(name): \(values.reduce(0, +))"
        }
        Route(
            .post, "/upload", description: "Stores a file.",
            Parameter<String>("label"), Parameter<UploadedFile>("file")
        ) { label, file in
            "\(label) \(file.filename ?? "-") \(file.size) \(try String(contentsOfFile: file.path, encoding: .utf8))"
        }
        Route(
            .post, "/employees", description: "Creates an employee.",
            Body<Employee>(description: "The new employee.")
        ) { employee in employee }
        Route(.get, "/agent", Request()) { request in request.headers["User-Agent"] ?? "none" }

        // MARK: Results
        Route(.get, "/employee", description: "Returns an employee.") {
            Employee(
                employeeNumber: 10004, firstName: "Chirstian", lastName: "Koblick",
                hireDate: Date(timeIntervalSince1970: 533_779_200),
                titles: [Title(title: "Engineer", fromDate: Date(timeIntervalSince1970: 533_779_200), toDate: nil)])
        }
        Route(.post, "/void", description: "Returns nothing.") {}
        Route(.get, "/response") {
            var response = HTTPResponse(status: .created, text: "made")
            response.headers["Location"] = "/catalog/items/7"
            return response
        }
        Route(
            .get, "/stream", description: "Streams numbers.", returns: [Int].self,
            Parameter<Int>("count", default: 3)
        ) { count in CountingStream(count: count) }

        // MARK: Errors
        Route(.get, "/fail/status") { () throws -> String in throw HTTPError(.forbidden, detail: "Not yours.") }
        Route(.get, "/fail/convertible") { () throws -> String in throw ConflictError() }
        Route(.get, "/fail/internal") { () throws -> String in throw SecretFailure() }
    }
}

/// An optional last path variable, a calendar date, a comma list and examples.
struct ArchiveService: WebService {
    let path = "/archive"
    let description = "Entries by year; `year` may be left out."

    var routes: [Route] {
        Route(
            .get, "/?:year", description: "The entries of one `year`, or of every year.",
            Parameter<Int?>("year", example: 2024, description: "The year.")
        ) { year in
            year.map { "year \($0)" } ?? "every year"
        }
        Route(
            .post, "/entries", description: "Adds an entry.",
            Parameter<String>("title", example: "Lamp's day"),
            Parameter<CalendarDate>("day", example: CalendarDate(year: 2024, month: 5, day: 1)),
            Parameter<CommaList<Detail>>("details", example: CommaList([.titles, .salaries]), description: "What to keep."),
            Parameter<Bool>("draft", default: false)
        ) { title, day, details, draft in
            "\(title) on \(day): \(details.map(\.rawValue).joined(separator: "+"))\(draft ? " (draft)" : "")"
        }
    }
}
