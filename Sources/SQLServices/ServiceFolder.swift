import FoundationEssentials
import HTTPServer
import PostgreSQL
import WebService

/// A folder of annotated `.sql` files, one operation per file, anywhere
/// below it: read, parsed, and checked against the database (every
/// statement prepared and described on one connection) into services
/// grouped by the first segment of their paths.
///
/// ```swift
/// let loaded = try pool.withConnection { try ServiceFolder("services").load(on: $0) }
/// let router = try WebServiceRouter(services: loaded.services, runners: [QueryRunner(pool: pool)])
/// ```
///
/// Loading either succeeds whole or throws ``ServiceProblems`` with every
/// problem of every file, each as `FILE:LINE: message`; docs/SQL-SERVICES.md
/// lists what is checked.
public struct ServiceFolder: Sendable {
    /// The folder, as given: file names in messages begin with it. A path
    /// to one `.sql` file stands for a folder of that file alone (`sql-rest
    /// check` on the file being written prints its problems only).
    public let path: String

    /// The folder (or the one file) at `path`.
    public init(_ path: String) {
        self.path = path
    }

    /// Why a folder could not be read at all.
    public struct ReadError: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// The services of the folder's files, checked on `connection`.
    ///
    /// With `leavingOut`, a file with a problem is left out and the
    /// others are loaded (``LoadedServices/leftOut`` holds its problems),
    /// as long as one is left: `sql-rest serve` serves the rest of a folder.
    ///
    /// ```swift
    /// let loaded = try ServiceFolder("services").load(on: connection, leavingOut: true)
    /// for problem in loaded.leftOut { print("left out", problem) }
    /// ```
    ///
    /// - Throws: ``ServiceProblems`` for problems in the files (without
    ///   `leavingOut`), or when no file is free of them,
    ///   ``ReadError`` when the folder cannot be read or holds no `.sql`
    ///   file, `DatabaseError` when the connection fails.
    public func load(on connection: Connection, leavingOut: Bool = false) throws -> LoadedServices {
        let files = try sqlFiles()
        var problems: [ServiceProblem] = []
        var parsed: [ServiceFile] = []
        for name in files {
            guard let data = FileManager.default.contents(atPath: name), let text = String(data: data, encoding: .utf8) else {
                problems.append(ServiceProblem(file: name, line: 1, message: "the file cannot be read as UTF-8 text"))
                continue
            }
            do {
                parsed.append(try ServiceFile(parsing: text, file: name))
            } catch {
                problems += error.problems
            }
        }

        var described: [DescribedFile] = []
        for file in parsed {
            if let file = try DescribedFile(file, on: connection, problems: &problems) { described.append(file) }
        }
        let catalog = try typeCatalog(of: described, on: connection)

        var drafts: [OperationDraft] = []
        for file in described {
            let draft =
                file.function != nil
                ? OperationDraft.function(file, catalog: catalog, problems: &problems)
                : OperationDraft(file, catalog: catalog, problems: &problems)
            if let draft { drafts.append(draft) }
        }
        problems += Self.duplicates(in: drafts)
        // Left out until what is left has no problem: a table write's and an
        // example's problems are known once the graph is built.
        while true {
            if !problems.isEmpty {
                guard leavingOut else { throw ServiceProblems(folder: path, problems: problems) }
                let files = Set(problems.map(\.file))
                drafts.removeAll { files.contains($0.file.file) }
                guard !drafts.isEmpty else { throw ServiceProblems(folder: path, problems: problems) }
            }
            let graph = try FolderGraph(drafts: drafts, types: catalog, on: connection)
            let graphProblems = graph.problems + graph.exampleProblems(drafts)
            guard graphProblems.isEmpty else {
                problems += graphProblems
                let files = Set(graphProblems.map(\.file))
                // Each round leaves a file out, or ends.
                guard leavingOut, drafts.contains(where: { files.contains($0.file.file) }) else {
                    throw ServiceProblems(folder: path, problems: problems)
                }
                continue
            }
            var loaded = LoadedServices(
                drafts: drafts, catalog: catalog, graph: graph, parameters: LoadedServices.parameters(of: drafts, graph: graph))
            loaded.leftOut = ServiceProblems(folder: path, problems: problems).problems
            return loaded
        }
    }

    /// The `.sql` files below the folder, their paths beginning with the
    /// folder's, sorted; folders whose name begins with `.` are skipped.
    /// `path` itself when it names a `.sql` file.
    func sqlFiles() throws(ReadError) -> [String] {
        if path.hasSuffix(".sql"), FileManager.default.fileExists(atPath: path),
            (try? FileManager.default.contentsOfDirectory(atPath: path)) == nil
        {
            return [path]
        }
        guard let all = try? FileManager.default.subpathsOfDirectory(atPath: path) else {
            throw ReadError(description: "\(path): no such folder, or it cannot be read")
        }
        let files = all.filter { relative in
            relative.hasSuffix(".sql") && !relative.split(separator: "/").contains { $0.hasPrefix(".") }
        }.sorted()
        guard !files.isEmpty else { throw ReadError(description: "\(path): no .sql file in the folder or below it") }
        return files.map { (path.hasSuffix("/") ? path : path + "/") + $0 }
    }

    /// Descriptions of the types the statements use that are not built in
    /// (enumerations, domains, arrays of them), with what those refer to.
    private func typeCatalog(of files: [DescribedFile], on connection: Connection) throws -> [PostgresType: PostgresTypeDescription] {
        var wanted: Set<PostgresType> = []
        for file in files {
            for description in file.descriptions {
                for parameter in description.parameters { wanted.insert(parameter.type) }
                for column in description.columns { wanted.insert(column.type) }
            }
        }
        var catalog: [PostgresType: PostgresTypeDescription] = [:]
        // Built-in types have OIDs below 16384; the others come from the catalog, and what they refer to in turn.
        var round = wanted.filter { $0.oid >= 16_384 }
        while !round.isEmpty {
            let found = try connection.describeTypes(Array(round))
            catalog.merge(found) { first, _ in first }
            round = Set(found.values.flatMap { [$0.baseType, $0.elementType].compactMap { $0 } })
                .filter { $0.oid >= 16_384 && catalog[$0] == nil }
        }
        return catalog
    }

    /// Two files with one method and path (variables' names aside): the later file is reported.
    private static func duplicates(in drafts: [OperationDraft]) -> [ServiceProblem] {
        var problems: [ServiceProblem] = []
        var seen: [String: ServiceFile] = [:]
        for draft in drafts {
            let shape = draft.file.segments.map { segment -> String in
                if case .literal(let text) = segment { return text }
                return "{}"
            }
            let key = draft.file.method.rawValue + " /" + shape.joined(separator: "/")
            if let first = seen[key] {
                problems.append(
                    ServiceProblem(
                        file: draft.file.file, line: draft.file.headerLine,
                        message: "\(draft.file.method) \(draft.file.path) is also declared by \(first.file):\(first.headerLine)"))
            } else {
                seen[key] = draft.file
            }
        }
        return problems
    }
}

// MARK: - Files described by the database

/// A parsed file whose statements PostgreSQL prepared and described.
struct DescribedFile {
    let file: ServiceFile
    /// One per statement of the operation.
    let statements: [StatementDescription]
    /// One per section, in the file's order.
    let sections: [StatementDescription]
    /// For a `@function` file: the function's overloads. Its `statements`
    /// then hold one description made from the catalog, of the first
    /// overload's arguments (as parameters) and result, for the documents.
    let function: FunctionCatalog?

    var descriptions: [StatementDescription] { statements + sections }

    /// Prepares and describes every statement of `file`; `nil` (with the
    /// problems noted) when one does not prepare, or when a GET writes.
    /// Throws only when the connection fails.
    init?(_ file: ServiceFile, on connection: Connection, problems: inout [ServiceProblem]) throws {
        let count = problems.count
        func describe(_ statement: ServiceFile.Statement) throws -> StatementDescription? {
            do {
                return try connection.describe(statement.text)
            } catch let error as DatabaseError where !error.isConnectionFailure {
                // Where the error is; an untyped parameter has no position, but its first use is where to add a cast.
                let parameter =
                    error.code == .indeterminateDatatype
                    ? error.message.firstMatch(of: /\$([0-9]+)/).flatMap { Int($0.1) }.flatMap(statement.line(ofParameter:)) : nil
                let line = error.position.map(statement.line(atPosition:)) ?? parameter ?? statement.codeLine
                problems.append(ServiceProblem(file: file.file, line: line, message: Self.message(error, statement: statement)))
                return nil
            }
        }
        if let directive = file.function {
            let found: FunctionCatalog?
            do {
                found = try FunctionCatalog.read(directive.text, on: connection)
            } catch let error as DatabaseError where !error.isConnectionFailure {
                problems.append(
                    ServiceProblem(file: file.file, line: directive.line, message: "@function \(directive.text): \(error.message)"))
                return nil
            }
            guard let found, let first = found.overloads.first else {
                let reasons = found.map { "; " + $0.leftOut.joined(separator: "; ") } ?? ""
                problems.append(
                    ServiceProblem(
                        file: file.file, line: directive.line,
                        message: "@function names \(directive.text), which is no function a request can call\(reasons)"))
                return nil
            }
            self.file = file
            self.function = found
            self.sections = []
            self.statements = [Self.description(of: first)]
            return
        }
        let statements = try file.statements.compactMap(describe)
        let sections = try file.sections.compactMap { try describe($0.statement) }
        // A statement that did not describe noted its problem.
        guard problems.count == count else { return nil }
        self.file = file
        self.statements = statements
        self.sections = sections
        self.function = nil

        if file.method == .get {
            for (statement, line) in zip(file.statements + file.sections.map(\.statement), [nil] + file.sections.map(\.line)) {
                let writes: Bool
                do {
                    writes = try connection.planWrites(statement.text)
                } catch let error as DatabaseError where !error.isConnectionFailure {
                    problems.append(
                        ServiceProblem(file: file.file, line: statement.codeLine, message: Self.message(error, statement: statement)))
                    continue
                }
                if writes {
                    let what = line == nil ? "a GET statement" : "a detail of a GET"
                    problems.append(
                        ServiceProblem(
                            file: file.file, line: statement.codeLine,
                            message:
                                "\(what) must only read, but this one writes (its plan modifies a table or locks rows); use POST, PUT, PATCH or DELETE"
                        ))
                }
            }
            guard problems.count == count else { return nil }
        }
    }

    /// An overload as a statement's description: its arguments as
    /// parameters, its result's columns (a scalar's one column, `value`).
    static func description(of overload: FunctionCatalog.Overload) -> StatementDescription {
        let parameters = overload.arguments.map { StatementDescription.Parameter(name: $0.name, type: $0.type) }
        let columns: [StatementDescription.ResultColumn]
        switch overload.returns {
        case .rows(let found), .row(let found):
            columns = found.map {
                StatementDescription.ResultColumn(
                    label: ServiceScaffold.lowerCamelCase($0.name), type: $0.type, table: $0.table, tableColumn: $0.number,
                    isNullable: $0.isNullable)
            }
        case .value(let type), .values(let type):
            columns = [StatementDescription.ResultColumn(label: "value", type: type, table: nil, tableColumn: nil, isNullable: true)]
        case .none:
            columns = []
        }
        return StatementDescription(parameters: parameters, columns: columns)
    }

    /// The server's message, with `$n` named as the file names it (`:employeeNumber`) and its hint.
    private static func message(_ error: DatabaseError, statement: ServiceFile.Statement) -> String {
        var message = error.message
        let names = Parameters.parse(statement.text).names
        for (index, name) in names.enumerated().reversed() {
            message = message.replacing("$\(index + 1)", with: ":" + name)
        }
        if error.code == .indeterminateDatatype {
            message += "; give it a type with a cast, as in `CAST(:name AS integer)` or `:name::integer`"
        } else if let hint = error.hint {
            message += " (\(hint))"
        }
        return message
    }
}
