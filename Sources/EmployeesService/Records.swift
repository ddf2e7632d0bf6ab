import WebService

// The shapes of the JSON the employees and departments services write.
// Rows are streamed straight from the database; these types exist so that
// `?api` can document them (their fields are read by the dispatcher).

/// An employee as listed by a search.
public struct EmployeeSummary: Codable, Sendable {
    public var employeeNumber: Int
    public var firstName: String
    public var lastName: String
    public var titles: [Title]?
    public var salaries: [Salary]?
    public var departments: [DepartmentAssignment]?
}

/// One employee in full.
public struct Employee: Codable, Sendable {
    public var employeeNumber: Int
    public var firstName: String
    public var lastName: String
    public var birthDate: CalendarDate
    public var gender: Gender
    public var hireDate: CalendarDate
    public var titles: [Title]?
    public var salaries: [Salary]?
    public var departments: [DepartmentAssignment]?
}

/// An employee's recorded gender.
public enum Gender: String, Codable, Sendable, CaseIterable {
    case male = "M"
    case female = "F"
}

/// A job title held from `fromDate` to `toDate` (9999-01-01 while current).
public struct Title: Codable, Sendable {
    public var title: String
    public var fromDate: CalendarDate
    public var toDate: CalendarDate?
}

/// A salary paid from `fromDate` to `toDate` (9999-01-01 while current).
public struct Salary: Codable, Sendable {
    public var salary: Int
    public var fromDate: CalendarDate
    public var toDate: CalendarDate
}

/// A department an employee belonged to, and when.
public struct DepartmentAssignment: Codable, Sendable {
    public var departmentNumber: String
    public var departmentName: String
    public var fromDate: CalendarDate
    public var toDate: CalendarDate
}

/// A department.
public struct Department: Codable, Sendable {
    public var departmentNumber: String
    public var departmentName: String
    public var managers: [Manager]?
    public var employees: [DepartmentMember]?
}

/// A manager of a department, and when.
public struct Manager: Codable, Sendable {
    public var employeeNumber: Int
    public var firstName: String
    public var lastName: String
    public var fromDate: CalendarDate
    public var toDate: CalendarDate
}

/// A current member of a department, since `fromDate`.
public struct DepartmentMember: Codable, Sendable {
    public var employeeNumber: Int
    public var firstName: String
    public var lastName: String
    public var fromDate: CalendarDate
}

/// What `GET /departments/{d}` can nest in the department.
public enum DepartmentDetail: String, CaseIterable, ArgumentValue {
    case managers
    case employees
}
