import Foundation
import WebService

/// A list of enumeration values given as repeated arguments, as
/// comma-separated values, or both: `details=titles&details=salaries` and
/// `details=titles,salaries` mean the same. Duplicates are dropped; order is
/// kept.
///
/// ```swift
/// Parameter<DetailList<EmployeeDetail>>("details")
/// ```
public struct DetailList<Element>: ParameterValue
where Element: ArgumentValue & RawRepresentable & CaseIterable & Hashable & Sendable, Element.RawValue == String {
    public var elements: [Element]

    public init(_ elements: [Element]) {
        self.elements = elements
    }

    public func contains(_ element: Element) -> Bool {
        elements.contains(element)
    }

    public static var valueType: ValueType { .array(Element.valueType) }
    public static var valueWhenAbsent: DetailList? { DetailList([]) }

    public static func convert(_ inputs: [ArgumentInput]) throws(ArgumentConversionError) -> DetailList {
        var elements: [Element] = []
        for input in inputs {
            guard case .text(let text) = input else {
                elements.append(contentsOf: try [Element].convert([input]))
                continue
            }
            for item in text.split(separator: ",", omittingEmptySubsequences: false) {
                let name = item.trimmingCharacters(in: .whitespaces)
                guard let element = Element(rawValue: name) else {
                    throw ArgumentConversionError(expected: Element.valueType, received: "\"\(name)\"")
                }
                elements.append(element)
            }
        }
        var seen = Set<Element>()
        return DetailList(elements.filter { seen.insert($0).inserted })
    }
}

/// What `GET /employees` and `GET /employees/{n}` can nest in each employee.
public enum EmployeeDetail: String, CaseIterable, Hashable, Sendable, ArgumentValue {
    case titles
    case salaries
    case departments
}

/// What `GET /departments/{d}` can nest in the department.
public enum DepartmentDetail: String, CaseIterable, Hashable, Sendable, ArgumentValue {
    case managers
    case employees
}
