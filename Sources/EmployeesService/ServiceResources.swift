import PostgreSQL
import PostgreSQLWebService

/// What the routes of ``EmployeesService`` and ``DepartmentsService`` read,
/// in PostgREST's language: each list and object is a resource, whose
/// details are relationships bound by parameters, so that
/// `select=*,titles(*)` and `details=titles` are one request. The two
/// lists name their table's schema: with their key, what an event stream
/// follows them by (``Resource/listKey``).
///
/// ```
/// GET /employees?select=lastName,titles(title,fromDate)&titles.order=fromDate.desc
/// GET /employees?or=(lastName.eq.Facello,firstName.eq.Georgi)&limit=5
/// ```
enum ServiceResources {
    static let employees = 0
    static let employee = 1
    static let departments = 2
    static let department = 3

    /// The employees list's and object's details, by name.
    private static let details = [
        (EmployeeDetail.titles, 4), (EmployeeDetail.salaries, 5), (EmployeeDetail.departments, 6),
    ]

    static let graph = ResourceGraph([
        Resource(
            name: "employees", schema: "public", sql: EmployeesService.listQuery, columns: summaryColumns(isFilterable: true),
            relationships: detailRelationships, key: ["employeeNumber"]),
        Resource(
            name: "employees", sql: EmployeesService.employeeQuery,
            columns: summaryColumns(isFilterable: false) + [
                .init("birthDate", type: .date, aliases: ["birth_date"], isFilterable: false),
                .init("gender", type: .bpchar, isFilterable: false),
                .init("hireDate", type: .date, aliases: ["hire_date"], isFilterable: false),
            ],
            relationships: detailRelationships, key: ["employeeNumber"]),
        Resource(
            name: "departments", schema: "public", sql: DepartmentsService.listQuery, columns: departmentColumns(isFilterable: true),
            key: ["departmentNumber"]),
        Resource(
            name: "departments", sql: DepartmentsService.departmentQuery, columns: departmentColumns(isFilterable: false),
            relationships: [.init(name: "managers", target: 7, cardinality: .many, link: .parameters)],
            key: ["departmentNumber"]),
        Resource(
            name: "titles", sql: EmployeeDetail.titles.sql,
            columns: [
                .init("title", type: .varchar), .init("fromDate", type: .date, aliases: ["from_date"]),
                .init("toDate", type: .date, aliases: ["to_date"]),
            ]),
        Resource(
            name: "salaries", sql: EmployeeDetail.salaries.sql,
            columns: [
                .init("salary", type: .int4), .init("fromDate", type: .date, aliases: ["from_date"]),
                .init("toDate", type: .date, aliases: ["to_date"]),
            ]),
        Resource(
            name: "departments", sql: EmployeeDetail.departments.sql,
            columns: departmentColumns(isFilterable: true) + [
                .init("fromDate", type: .date, aliases: ["from_date"]), .init("toDate", type: .date, aliases: ["to_date"]),
            ]),
        Resource(
            name: "managers", sql: DepartmentsService.managersQuery,
            columns: summaryColumns(isFilterable: true) + [
                .init("fromDate", type: .date, aliases: ["from_date"]), .init("toDate", type: .date, aliases: ["to_date"]),
            ]),
    ])

    private static var detailRelationships: [Relationship] {
        details.map { detail, index in Relationship(name: detail.rawValue, target: index, cardinality: .many, link: .parameters) }
    }

    /// An employee's number and names, as every employee resource begins.
    private static func summaryColumns(isFilterable: Bool) -> [Resource.Column] {
        [
            .init("employeeNumber", type: .int4, aliases: ["emp_no"], isFilterable: isFilterable),
            .init("firstName", type: .varchar, aliases: ["first_name"], isFilterable: isFilterable),
            .init("lastName", type: .varchar, aliases: ["last_name"], isFilterable: isFilterable),
        ]
    }

    private static func departmentColumns(isFilterable: Bool) -> [Resource.Column] {
        [
            .init("departmentNumber", type: .bpchar, aliases: ["dept_no"], isFilterable: isFilterable),
            .init("departmentName", type: .varchar, aliases: ["dept_name"], isFilterable: isFilterable),
        ]
    }
}
