/// The type of a parameter, field or result, as `?api` names it.
///
/// ```swift
/// ValueType.array(.double).name          // "[double]"
/// ValueType.structure("Employee").name   // "Employee"
/// ```
public indirect enum ValueType: Sendable, Hashable, CustomStringConvertible {
    case string
    /// `Int`.
    case integer
    /// `Int64`.
    case long
    case double
    case boolean
    /// A calendar day, `2024-05-01` (`CalendarDate`).
    case date
    /// An instant, an ISO 8601 date-time with an offset, `2024-05-01T12:30:00Z`
    /// (`Date`; as an argument, a calendar date alone means its midnight UTC).
    case dateTime
    case uuid
    case url
    /// An uploaded file (a part of a multipart form).
    case file
    /// A string-backed enumeration, with its allowed values.
    case enumeration(name: String, values: [String])
    case array(ValueType)
    /// A string-keyed object of values of one type.
    case map(ValueType)
    /// A structure, described among the service's structures.
    case structure(String)
    /// Whatever JSON value.
    case any

    /// The name used in documentation and error messages.
    public var name: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .long: "long"
        case .double: "double"
        case .boolean: "boolean"
        case .date: "date"
        case .dateTime: "date-time"
        case .uuid: "uuid"
        case .url: "url"
        case .file: "file"
        case .enumeration(let name, _): name
        case .array(let element): "[\(element.name)]"
        case .map(let value): "[string: \(value.name)]"
        case .structure(let name): name
        case .any: "any"
        }
    }

    public var description: String { name }

    /// The name with an indefinite article, for messages ("an integer").
    var nameWithArticle: String {
        switch self {
        case .integer: "an \(name)"
        case .any: "a JSON value"
        case .enumeration(let name, let values): "one of \(values.joined(separator: ", ")) (\(name))"
        case .array(let element): "a list of \(element.name)"
        default: "a \(name)"
        }
    }
}
