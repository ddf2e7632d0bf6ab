import HTTPServer
import PostgreSQL

/// One `.sql` file of a service folder, parsed but not yet checked against
/// the database: the header (method and path, description, directives:
/// the first run of `--` lines, up to a blank line or code) and the SQL,
/// the operation's statements and its detail sections, each with the line
/// it starts on.
///
/// ```sql
/// -- GET /departments/{departmentNumber}
/// -- One department, with its managers when asked.
/// -- @param departmentNumber The department's number, such as d005.
/// SELECT dept_no AS "departmentNumber", dept_name AS "departmentName"
/// FROM departments WHERE dept_no = :departmentNumber;
///
/// -- @detail managers
/// SELECT emp_no AS "employeeNumber", from_date AS "fromDate"
/// FROM dept_manager WHERE dept_no = :departmentNumber ORDER BY from_date;
/// ```
///
/// docs/SQL-SERVICES.md describes every directive.
public struct ServiceFile: Sendable {
    /// A segment of the route's path: `departments` or `{departmentNumber}`.
    public enum Segment: Sendable, Hashable {
        case literal(String)
        case variable(String)
    }

    /// What the operation answers with: `@returns list|object`.
    public enum Shape: String, Sendable {
        case list
        case object
    }

    /// `@param NAME [= DEFAULT] text`.
    public struct ParameterDirective: Sendable {
        public var name: String
        /// The default as written (quotes removed); `nil` without `= DEFAULT`.
        public var defaultText: String?
        public var description: String
        public var line: Int
    }

    /// `@returns list|object [TypeName]`.
    public struct ReturnsDirective: Sendable {
        public var shape: Shape
        /// The name `?api` gives the returned structure.
        public var typeName: String?
        public var line: Int
    }

    /// A directive's text and its line (`@notfound`, `@service`).
    public struct TextDirective: Sendable {
        public var text: String
        public var line: Int
    }

    /// `@example NAME VALUE`: a value of a parameter, as a request sends
    /// it, for `?api`'s example request and the OpenAPI document.
    public struct ExampleDirective: Sendable {
        public var name: String
        public var text: String
        public var line: Int
    }

    /// `@filter` or `@order`: the result columns, by label, that a request
    /// may filter on or order by; `*`: all of them.
    public struct ColumnsDirective: Sendable {
        /// The labels named; `nil` for `*`.
        public var labels: [String]?
        public var line: Int
    }

    /// One SQL statement and where it is.
    public struct Statement: Sendable {
        /// The statement's text, without its semicolon; its leading blank
        /// lines and comments are kept, so that its lines are the file's.
        public var text: String
        /// The file's line where `text` starts.
        public var line: Int

        /// The file's line of the statement's first line of code (past
        /// blank lines and `--` comments).
        public var codeLine: Int {
            var line = self.line
            for textLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
                let trimmed = textLine.drop { $0 == " " || $0 == "\t" || $0 == "\r" }
                if !trimmed.isEmpty, !trimmed.hasPrefix("--") { return line }
                line += 1
            }
            return self.line
        }

        /// The file's line of a character position (from 1) in the
        /// statement as PostgreSQL received it (`:name` replaced by `$n`,
        /// which keeps the lines).
        public func line(atPosition position: Int) -> Int {
            let sent = Parameters.parse(text).sql
            return line + sent.prefix(max(0, position - 1)).count { $0 == "\n" }
        }

        /// The file's line where the statement first uses its `number`th
        /// parameter (`$number` as PostgreSQL received it), if it does.
        public func line(ofParameter number: Int) -> Int? {
            let sent = Parameters.parse(text).sql
            var found: Int?
            SQLScript.placeholders(in: sent) { placeholder, offset in
                if found == nil, placeholder == number {
                    found = line + sent.utf8.prefix(offset).count { $0 == UInt8(ascii: "\n") }
                }
            }
            return found
        }
    }

    /// A `@detail NAME` or `@stream NAME` section: a query nested in the answer.
    public struct Section: Sendable {
        /// The name, dotted for a detail nested in another (`managers.titles`).
        public var name: String
        /// `@stream`: its rows are streamed as a member of the object.
        public var isStreamed: Bool
        /// Text after the name, for the documentation.
        public var description: String
        public var statement: Statement
        /// The line of the `@detail` or `@stream` comment.
        public var line: Int

        /// The name's parts: `["managers", "titles"]`.
        public var path: [String] { name.split(separator: ".").map(String.init) }
    }

    /// The file as named in messages: the folder's path and the file's below it.
    public var file: String
    public var method: HTTPMethod
    /// The path as written in the header: `/departments/{departmentNumber}`.
    public var path: String
    public var segments: [Segment]
    /// The header's first line, where the method and path are.
    public var headerLine: Int
    /// The header's lines that are not directives, joined; a `--` line alone starts a paragraph.
    public var description: String
    public var parameters: [ParameterDirective] = []
    public var returns: ReturnsDirective?
    /// The line of `@paged`, if the file has it.
    public var pagedLine: Int?
    /// `@filter`: the columns a request may filter on.
    public var filter: ColumnsDirective?
    /// `@order`: the columns a request may order by.
    public var order: ColumnsDirective?
    public var notFound: TextDirective?
    /// `@example`s, in order.
    public var examples: [ExampleDirective] = []
    /// `@service TEXT`: the description of the service the operation belongs to.
    public var serviceDescription: TextDirective?
    /// `@listen CHANNEL`: the channel whose notifications a GET list's event streams relay after its rows.
    public var listen: TextDirective?
    /// `@writes TABLE`: a write of the table's rows as PostgREST's clients
    /// send it (the server builds the statement); the file has none.
    public var writes: TextDirective?
    /// `@unfiltered`: a `@writes` PATCH or DELETE that takes no filter too,
    /// and then writes every row (refused without it).
    public var unfilteredLine: Int?
    /// `@function NAME`: a call of the PostgreSQL function (each of its
    /// overloads) with the arguments the request names, as PostgREST's
    /// `/rpc` calls it (the server builds the statement); the file has none.
    public var function: TextDirective?
    /// The operation's statements, in order: one for a GET, one or more for a write.
    public var statements: [Statement] = []
    public var sections: [Section] = []

    /// The path's variables, in order.
    public var variables: [String] {
        segments.compactMap { if case .variable(let name) = $0 { name } else { nil } }
    }

    /// The first segment: the service the operation belongs to (`departments`).
    public var serviceName: String {
        if case .literal(let name) = segments.first { return name }
        return ""
    }

    /// The path's last segment that is not a variable: what the operation
    /// answers about (`/titles/{title}/holders`: `holders`).
    public var lastName: String {
        for segment in segments.reversed() {
            if case .literal(let name) = segment { return name }
        }
        return serviceName
    }

    /// The path below the service as the router writes it: `/?:departmentNumber`.
    public var routePath: String {
        "/"
            + segments.dropFirst().map { segment in
                switch segment {
                case .literal(let text): text
                case .variable(let name): "?:" + name
                }
            }.joined(separator: "/")
    }

    /// The shape the path implies, unless `@returns` says otherwise: an
    /// object when the last segment is a variable, a list otherwise.
    public var shape: Shape {
        if let returns { return returns.shape }
        if case .variable = segments.last { return .object }
        return .list
    }
}
