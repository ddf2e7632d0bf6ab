import CalendarDates
import FoundationEssentials
import PostgreSQL
import WebService

/// How the arguments of a parameter of one PostgreSQL type are read: the
/// type `?api` and the 400 problems name, and the conversion of what the
/// request sent into the text PostgreSQL receives. A value that does not
/// convert is the client's 400, worded as for a typed Swift parameter.
///
/// | PostgreSQL | documented as | accepts |
/// | --- | --- | --- |
/// | `int2`, `int4`, `int8` | integer | a decimal integer in the type's range |
/// | `numeric` | double | a decimal number, sent exactly as written |
/// | `float4`, `float8` | double | a decimal number |
/// | `bool` | boolean | `true`, `false`, `1`, `0` |
/// | `text`, `varchar`, `char`, `name` | string | any text |
/// | `date` | date | `2024-05-01` |
/// | `timestamp`, `timestamptz` | date-time | ISO 8601, `2024-05-01T10:00:00Z` (a timestamp is taken as UTC) |
/// | `uuid` | uuid | a UUID |
/// | `json`, `jsonb` | a JSON value | a JSON body member, or a JSON document as text |
/// | an enumeration | its name | one of its labels |
/// | a domain | its base type | as its base type |
/// | an array of these | a list | repeated arguments, or a JSON array |
/// | any other type | string | any text, which PostgreSQL reads (a value it refuses is a 400 too) |
struct ArgumentType: Sendable {
    let valueType: ValueType
    /// Converts the inputs of one argument (at least one).
    let convert: @Sendable ([ArgumentInput]) throws(ArgumentConversionError) -> SQLValue
    /// The enumerations `valueType` names, for the documentation.
    let enumerations: [EnumerationDocumentation]
    /// The range `convert` holds integers to (each element's, for a list), for the documentation.
    var constraints: ArgumentConstraints = .none

    /// The argument type of a parameter of `type`; `catalog` describes the types that are not built in.
    static func of(_ type: PostgresType, catalog: [PostgresType: PostgresTypeDescription]) -> ArgumentType {
        if let element = type.elementType ?? catalog[type]?.elementType {
            return array(of: of(element, catalog: catalog))
        }
        switch type {
        case .int2: return integer(in: Int(Int16.min)...Int(Int16.max))
        case .int4: return integer(in: Int(Int32.min)...Int(Int32.max))
        case .int8: return scalar(Int.self) { String($0) }
        case .float4, .float8: return scalar(Double.self) { String($0) }
        case .numeric: return numeric
        case .bool: return scalar(Bool.self) { $0 ? "true" : "false" }
        case .date: return calendarDate
        case .timestamp, .timestamptz: return timestamp
        case .uuid: return scalar(UUID.self) { $0.uuidString.lowercased() }
        case .json, .jsonb: return scalar(JSONValue.self) { $0.jsonText }
        default: break
        }
        if let description = catalog[type] {
            if description.kind == "e" { return enumeration(description.name, labels: description.enumLabels) }
            if description.kind == "d", let base = description.baseType { return of(base, catalog: catalog) }
        }
        return scalar(String.self) { $0 }
    }

    // MARK: - Kinds

    /// Read as the Swift type `T` reads an argument, sent as `text(value)`.
    private static func scalar<T: ArgumentValue>(_: T.Type, _ text: @escaping @Sendable (T) -> String) -> ArgumentType {
        ArgumentType(
            valueType: T.valueType,
            convert: { inputs throws(ArgumentConversionError) in
                .text(text(try T.convert(inputs)))
            }, enumerations: [])
    }

    /// An `Int` within `range`: `int2` and `int4` refuse what they cannot hold with a 400 naming the range.
    private static func integer(in range: ClosedRange<Int>) -> ArgumentType {
        let constraints = ArgumentConstraints.range(range)
        return ArgumentType(
            valueType: .integer,
            convert: { inputs throws(ArgumentConversionError) in
                let value = try Int.convert(inputs)
                try constraints.check(value, received: inputs[0].received)
                return .text(String(value))
            }, enumerations: [], constraints: constraints)
    }

    /// A decimal number, sent as written so that `numeric` keeps every digit.
    private static let numeric = ArgumentType(
        valueType: .double,
        convert: { inputs throws(ArgumentConversionError) in
            guard inputs.count == 1, let text = inputs[0].scalarText, isDecimalNumber(text) else {
                throw ArgumentConversionError(
                    expected: .double, received: inputs.count == 1 ? inputs[0].received : "\(inputs.count) values")
            }
            return .text(text)
        }, enumerations: [])

    /// A calendar day, `2024-05-01`.
    private static let calendarDate = ArgumentType(
        valueType: .date,
        convert: { inputs throws(ArgumentConversionError) in
            guard inputs.count == 1, let text = inputs[0].scalarText, isCalendarDate(text) else {
                throw ArgumentConversionError(expected: .date, received: inputs.count == 1 ? inputs[0].received : "\(inputs.count) values")
            }
            return .text(text)
        }, enumerations: [])

    /// An instant, read as `Date` reads it, sent in UTC.
    private static let timestamp = ArgumentType(
        valueType: .dateTime,
        convert: { inputs throws(ArgumentConversionError) in
            do throws(ArgumentConversionError) {
                return try Date.convert(inputs).sqlValue
            } catch {
                throw ArgumentConversionError(expected: .dateTime, received: error.received)
            }
        }, enumerations: [])

    /// One of an enumeration's labels.
    private static func enumeration(_ name: String, labels: [String]) -> ArgumentType {
        let type = ValueType.enumeration(name: name, values: labels)
        return ArgumentType(
            valueType: type,
            convert: { inputs throws(ArgumentConversionError) in
                guard inputs.count == 1, let text = inputs[0].scalarText, labels.contains(text) else {
                    throw ArgumentConversionError(
                        expected: type, received: inputs.count == 1 ? inputs[0].received : "\(inputs.count) values")
                }
                return .text(text)
            }, enumerations: [EnumerationDocumentation(name, values: labels)])
    }

    /// A list of `element`s: repeated arguments, a JSON array, or both.
    private static func array(of element: ArgumentType) -> ArgumentType {
        ArgumentType(
            valueType: .array(element.valueType),
            convert: { inputs throws(ArgumentConversionError) in
                var values: [SQLValue] = []
                for input in inputs {
                    if case .json(.array(let elements)) = input {
                        for value in elements { values.append(try element.convert([.json(value)])) }
                    } else {
                        values.append(try element.convert([input]))
                    }
                }
                return values.sqlValue
            }, enumerations: element.enumerations, constraints: element.constraints)
    }

    // MARK: - Texts

    /// `-12`, `3.25`, `.5`, `1e-3`: what `numeric` input takes, short of `NaN` and infinities.
    static func isDecimalNumber(_ text: String) -> Bool {
        var bytes = text.utf8[...]
        if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
        func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        let integral = bytes.prefix(while: isDigit).count
        bytes = bytes.dropFirst(integral)
        var fraction = 0
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            fraction = bytes.prefix(while: isDigit).count
            bytes = bytes.dropFirst(fraction)
        }
        guard integral + fraction > 0 else { return false }
        if let e = bytes.first, e | 0x20 == UInt8(ascii: "e") {
            bytes = bytes.dropFirst()
            if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
            let exponent = bytes.prefix(while: isDigit).count
            guard exponent > 0 else { return false }
            bytes = bytes.dropFirst(exponent)
        }
        return bytes.isEmpty
    }

    /// `YYYY-MM-DD`, a day that exists.
    static func isCalendarDate(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let year = Int64(parts[0]), let month = Int64(parts[1]), let day = Int64(parts[2]),
            year >= 1, (1...12).contains(month)
        else { return false }
        return day >= 1 && day <= CivilCalendar.daysInMonth(year: year, month: month)
    }
}

// MARK: - Result columns

extension ArgumentType {
    /// The documented type of a result column of `type`.
    static func documentedType(of type: PostgresType, catalog: [PostgresType: PostgresTypeDescription]) -> ValueType {
        if let element = type.elementType ?? catalog[type]?.elementType {
            return .array(documentedType(of: element, catalog: catalog))
        }
        switch type {
        case .int2, .int4, .int8: return .integer
        case .float4, .float8, .numeric: return .double
        case .bool: return .boolean
        case .date: return .date
        case .timestamp, .timestamptz: return .dateTime
        case .uuid: return .uuid
        case .json, .jsonb: return .any
        default: break
        }
        if let description = catalog[type] {
            if description.kind == "e" { return .enumeration(name: description.name, values: description.enumLabels) }
            if description.kind == "d", let base = description.baseType { return documentedType(of: base, catalog: catalog) }
        }
        return .string
    }
}
