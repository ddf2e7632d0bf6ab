/// Something wrong with a service file, where it is: printed as
/// `FILE:LINE: message`, as compilers print their diagnostics.
///
/// ```swift
/// ServiceProblem(file: "services/employees/get.sql", line: 7, message: "column \"emp_nox\" does not exist").description
/// // services/employees/get.sql:7: column "emp_nox" does not exist
/// ```
public struct ServiceProblem: Sendable, Hashable, CustomStringConvertible {
    /// The file, as the folder's path and the file's path below it (`services/employees/get.sql`).
    public var file: String
    /// The line, from 1.
    public var line: Int
    public var message: String

    public init(file: String, line: Int, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var description: String { "\(file):\(line): \(message)" }
}

/// Every problem of a folder of service files, found at once: nothing is
/// served while there is one. Its description is a line of summary, then
/// one `FILE:LINE: message` line per problem.
///
/// ```swift
/// do { _ = try ServiceFolder("services").load(on: connection) }
/// catch let error as ServiceProblems { for problem in error.problems { print(problem) } }
/// ```
public struct ServiceProblems: Error, Sendable, CustomStringConvertible {
    /// The folder that was read.
    public var folder: String
    /// The problems, by file and line.
    public var problems: [ServiceProblem]

    public init(folder: String, problems: [ServiceProblem]) {
        self.folder = folder
        self.problems = problems.sorted { ($0.file, $0.line, $0.message) < ($1.file, $1.line, $1.message) }
    }

    public var description: String {
        let count = problems.count == 1 ? "1 problem" : "\(problems.count) problems"
        return "The services in \(folder) have \(count):\n" + problems.map(\.description).joined(separator: "\n")
    }
}
