import PostgreSQLWebService
import WebService

/// The departments of the sample database, with their managers and their
/// current employees.
///
/// ```
/// GET /departments
/// GET /departments?departmentName=like.*Sales*&select=departmentNumber
/// GET /departments/d005?select=departmentName,managers(lastName)
/// GET /departments/d005?details=managers,employees
/// ```
public struct DepartmentsService: WebService {
    public let path = "/departments"
    public let description = "Departments of the sample database, their managers and current employees."

    public init() {}

    public var routes: [Route] {
        Route(
            .get, "/", description: "Lists the departments ordered by number.", returns: [Department].self,
            ReadArguments(graph: ServiceResources.graph, resource: ServiceResources.departments)
        ) { read in
            Query.list(Self.listQuery).reading(read)
        }.cacheControl("max-age=300")

        Route(
            .get, "/?:departmentNumber",
            description: """
                Returns one department. `managers` nests every manager it has had; `employees` streams \
                its current employees, ordered by number.
                """,
            returns: Department.self,
            Parameter<String>("departmentNumber", example: "d005", description: "The department's number, such as `d005`."),
            Parameter<CommaList<DepartmentDetail>>(
                "details", example: CommaList([.managers]),
                description: "What to nest."),
            ReadArguments(graph: ServiceResources.graph, resource: ServiceResources.department, taken: ["departmentNumber", "details"])
        ) { departmentNumber, details, read in
            try find(departmentNumber: departmentNumber, details: details, read: read)
        }
    }

    static let listQuery = """
        SELECT dept_no AS "departmentNumber", dept_name AS "departmentName" FROM departments ORDER BY dept_no
        """

    static let departmentQuery = """
        SELECT dept_no AS "departmentNumber", dept_name AS "departmentName" FROM departments WHERE dept_no = :departmentNumber
        """

    static let managersQuery = """
        SELECT e.emp_no AS "employeeNumber", e.first_name AS "firstName", e.last_name AS "lastName",
               m.from_date AS "fromDate", m.to_date AS "toDate"
        FROM dept_manager m JOIN employees e ON e.emp_no = m.emp_no
        WHERE m.dept_no = :departmentNumber ORDER BY m.from_date, e.emp_no
        """

    static let employeesQuery = """
        SELECT e.emp_no AS "employeeNumber", e.first_name AS "firstName", e.last_name AS "lastName",
               de.from_date AS "fromDate"
        FROM dept_emp de JOIN employees e ON e.emp_no = de.emp_no
        WHERE de.dept_no = :departmentNumber AND de.to_date = DATE '9999-01-01'
        ORDER BY de.emp_no
        """

    /// The department's own fields come first; its employees, of whom there
    /// can be tens of thousands, are streamed by a query of their own rather
    /// than collected as an attachment.
    private func find(departmentNumber: String, details: CommaList<DepartmentDetail>, read: ReadRequest) throws -> Query {
        var department = Query.object(
            Self.departmentQuery, ["departmentNumber": departmentNumber],
            notFound: HTTPError(.notFound, detail: "There is no department \"\(departmentNumber)\".", parameter: "departmentNumber"))
        if details.contains(.employees) {
            department = department.streaming("employees", Query.list(Self.employeesQuery, ["departmentNumber": departmentNumber]))
        }
        return department.reading(try read.embedding(details.contains(.managers) ? ["managers"] : []))
    }
}
