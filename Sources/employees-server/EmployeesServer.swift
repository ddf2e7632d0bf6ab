import EmployeesService
import ServiceHost

/// Serves the employees sample database over HTTP; `--help` lists the
/// options, each also an `EMPLOYEES_` environment variable.
///
/// ```
/// employees-server --port 8080 --database-url postgresql:///employees
/// ```
@main
enum EmployeesServer {
    static func main() {
        ServerProgram(
            name: "employees-server",
            overview: "Serves the employees sample database as a REST API.",
            environmentPrefix: "EMPLOYEES_",
            services: [EmployeesService(), DepartmentsService(), MathService()]
        ).run()
    }
}
