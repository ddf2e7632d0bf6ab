import PostgreSQL
import PostgreSQLWebService
import WebService

/// The employees sample database as a REST service, after HTTP-RPC's
/// "employees" example.
///
/// ```
/// GET /employees?name=bal*                          search, streamed
/// GET /employees?lastName=eq.Facello&order=firstName.desc&select=employeeNumber,firstName
///                                                   filters, order and members, as PostgREST takes them
/// GET /employees?details=titles&limit=10            nested details for every match
/// GET /employees?select=lastName,titles(title)&titles.order=fromDate.desc
///                                                   the same, embedded as PostgREST embeds
/// GET /employees/10004?details=titles,salaries      one employee, with details
/// ```
public struct EmployeesService: WebService {
    public let path = "/employees"
    public let description = "Employees of the sample database: search, details, title and salary histories."

    public init() {}

    public var routes: [Route] {
        Route(
            .get, "/",
            description: """
                Lists employees ordered by number, streamed. With `name`, only those whose first or last \
                name matches the pattern (case-insensitive; `*` matches any run of characters, other \
                characters match themselves). Filters, `order`, `select` and embedding as PostgREST takes them: \
                `lastName=eq.Facello`, `order=lastName.desc`, `select=employeeNumber,lastName,titles(title)`.
                """,
            returns: [EmployeeSummary].self,
            Parameter<String?>("name", example: "bal*", description: "A name pattern such as `bal*` or `*son`."),
            Parameter<CommaList<EmployeeDetail>>("details", description: "What to nest in each employee."),
            Parameter<Int?>("limit", example: 10, constraints: .atLeast(0), description: "At most this many employees (0 or more)."),
            Parameter<Int>("offset", default: 0, constraints: .atLeast(0), description: "Skip this many employees first (0 or more)."),
            ReadArguments(
                graph: ServiceResources.graph, resource: ServiceResources.employees, taken: ["name", "details", "limit", "offset"])
        ) { name, details, limit, offset, read in
            try list(name: name, limit: limit, offset: offset).reading(read.embedding(details.map(\.rawValue)))
        }

        Route(
            .get, "/?:employeeNumber", description: "Returns one employee, with the details asked for.",
            returns: Employee.self,
            Parameter<Int>("employeeNumber", example: 10004, description: "The employee's number (10001 and up)."),
            Parameter<CommaList<EmployeeDetail>>(
                "details", example: CommaList([.titles, .salaries]),
                description: "What to nest."),
            ReadArguments(graph: ServiceResources.graph, resource: ServiceResources.employee, taken: ["employeeNumber", "details"])
        ) { employeeNumber, details, read in
            try Query.object(
                Self.employeeQuery, ["employeeNumber": employeeNumber],
                notFound: HTTPError(
                    .notFound, detail: "There is no employee number \(employeeNumber).",
                    parameter: "employeeNumber")
            )
            .reading(read.embedding(details.map(\.rawValue)))
        }
    }

    // MARK: - Queries

    static let summarySelectList = #"emp_no AS "employeeNumber", first_name AS "firstName", last_name AS "lastName""#

    /// Every employee, by number: the list's rows without `name`.
    static let listQuery = "SELECT \(summarySelectList) FROM employees ORDER BY emp_no"

    private func list(name: String?, limit: Int?, offset: Int) -> Query {
        guard let name else { return Query.list(Self.listQuery).paged(limit: limit, offset: offset) }
        return Query.list(
            """
            SELECT \(Self.summarySelectList) FROM employees
            WHERE lower(first_name) LIKE :pattern OR lower(last_name) LIKE :pattern ORDER BY emp_no
            """, ["pattern": Self.likePattern(name)]
        ).paged(limit: limit, offset: offset)
    }

    /// One employee by number. `CAST(:employeeNumber AS bigint)` makes the
    /// parameter a `bigint` rather than the `integer` of `emp_no`, so that
    /// any number a client sends is compared, not converted: one past the
    /// `integer` range finds no row (404) instead of failing (22003, 400).
    static let employeeQuery = """
        SELECT \(summarySelectList), birth_date AS "birthDate", gender, hire_date AS "hireDate"
        FROM employees WHERE emp_no = CAST(:employeeNumber AS bigint)
        """

    /// The LIKE pattern for a name pattern: lower-cased, `%`, `_` and `\`
    /// escaped so they match themselves, `*` turned into `%`.
    static func likePattern(_ name: String) -> String {
        var pattern = ""
        for character in name.lowercased() {
            switch character {
            case "%", "_", "\\": pattern += "\\\(character)"
            case "*": pattern += "%"
            default: pattern.append(character)
            }
        }
        return pattern
    }
}

/// What `GET /employees` and `GET /employees/{n}` can nest in each employee.
public enum EmployeeDetail: String, CaseIterable, ArgumentValue {
    case titles
    case salaries
    case departments

    /// The rows nested under the detail's name, bound to the employee by `:employeeNumber`.
    var sql: String {
        switch self {
        case .titles:
            """
            SELECT title, from_date AS "fromDate", to_date AS "toDate"
            FROM titles WHERE emp_no = :employeeNumber ORDER BY from_date, title
            """
        case .salaries:
            """
            SELECT salary, from_date AS "fromDate", to_date AS "toDate"
            FROM salaries WHERE emp_no = :employeeNumber ORDER BY from_date
            """
        case .departments:
            """
            SELECT d.dept_no AS "departmentNumber", d.dept_name AS "departmentName",
                   de.from_date AS "fromDate", de.to_date AS "toDate"
            FROM dept_emp de JOIN departments d ON d.dept_no = de.dept_no
            WHERE de.emp_no = :employeeNumber ORDER BY de.from_date, d.dept_no
            """
        }
    }
}
