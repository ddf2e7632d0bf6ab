import FoundationEssentials
import HTTPServer

// MARK: - Raw arguments

/// One value a request supplied for an argument name: a query or form
/// field's text, an uploaded file, or a member of a JSON body.
public enum ArgumentInput: Sendable {
    case text(String)
    case file(UploadedFile)
    case json(JSONValue)

    /// The value as shown in an error message: a text quoted, a JSON value as written.
    public var received: String {
        switch self {
        case .text(let text): "\"\(text)\""
        case .file(let file): "a file" + (file.filename.map { " (\($0))" } ?? "")
        case .json(let value): value.jsonText
        }
    }

    /// The text of a scalar input; JSON numbers and booleans as written.
    public var scalarText: String? {
        switch self {
        case .text(let text): text
        case .file: nil
        case .json(let value): value.scalarText
        }
    }
}

/// Why an argument's value could not be converted: what was expected and
/// what arrived. The router turns it into a 400 naming the parameter:
/// `The parameter "limit" expects an integer; received "ten".`
///
/// ```swift
/// ArgumentConversionError(expected: .integer, received: "\"40000\"", requirement: "from -32768 to 32767")
/// // The parameter "n" expects an integer from -32768 to 32767; received "40000".
/// ```
public struct ArgumentConversionError: Error, Sendable {
    public var expected: ValueType
    public var received: String
    /// What the value must also be, after the type's name (a range); `nil` for any value of the type.
    public var requirement: String?

    public init(expected: ValueType, received: String, requirement: String? = nil) {
        self.expected = expected
        self.received = received
        self.requirement = requirement
    }
}

// MARK: - Parameter values

/// A type a ``Parameter`` can have: every ``ArgumentValue``, arrays of them
/// (repeated names or JSON arrays) and optionals.
///
/// ```swift
/// Parameter<Int>("limit", default: 100)
/// Parameter<[Double]>("values")
/// Parameter<Date?>("since")
/// ```
public protocol ParameterValue: Sendable {
    /// The type as documented.
    static var valueType: ValueType { get }
    /// The value when the request does not supply the argument, or `nil`
    /// when the argument is required (optionals give `nil`, arrays `[]`).
    static var valueWhenAbsent: Self? { get }
    /// Converts every value the request supplied for the name (at least one).
    static func convert(_ inputs: [ArgumentInput]) throws(ArgumentConversionError) -> Self
    /// The value as a request would supply it, one text per repetition of
    /// the name: what `convert` reads back (`[]` for `nil`, `["1", "2"]`
    /// for `[1, 2]`). The documentation shows defaults and examples with it.
    var argumentTexts: [String] { get }
}

/// A single value convertible from an argument's text: `String`, `Int`,
/// `Int64`, `Double`, `Bool`, `Date`, `CalendarDate`, `UUID`, `URL`, `UploadedFile`, and any
/// string-backed enumeration that declares the conformance.
///
/// ```swift
/// enum Detail: String, CaseIterable, ArgumentValue {
///     case titles, salaries
/// }
/// ```
public protocol ArgumentValue: ParameterValue {
    /// Parses an argument's text; `nil` when it is not a valid value.
    init?(argumentText: String)
    /// The text that `init?(argumentText:)` reads back as this value.
    var argumentText: String { get }
}

extension ArgumentValue {
    public static var valueWhenAbsent: Self? { nil }
    public var argumentText: String { "\(self)" }
    public var argumentTexts: [String] { [argumentText] }

    public static func convert(_ inputs: [ArgumentInput]) throws(ArgumentConversionError) -> Self {
        guard inputs.count == 1, let text = inputs[0].scalarText, let value = Self(argumentText: text) else {
            let received = inputs.count == 1 ? inputs[0].received : "\(inputs.count) values"
            throw ArgumentConversionError(expected: valueType, received: received)
        }
        return value
    }
}

extension ArgumentValue where Self: RawRepresentable & CaseIterable, RawValue == String {
    public static var valueType: ValueType {
        .enumeration(name: String(describing: Self.self), values: allCases.map(\.rawValue))
    }

    public init?(argumentText: String) {
        self.init(rawValue: argumentText)
    }

    public var argumentText: String { rawValue }
}

extension Array: ParameterValue where Element: ArgumentValue {
    public static var valueType: ValueType { .array(Element.valueType) }
    public static var valueWhenAbsent: [Element]? { [] }

    public static func convert(_ inputs: [ArgumentInput]) throws(ArgumentConversionError) -> [Element] {
        var values: [Element] = []
        for input in inputs {
            if case .json(.array(let elements)) = input {
                for element in elements { values.append(try Element.convert([.json(element)])) }
            } else {
                values.append(try Element.convert([input]))
            }
        }
        return values
    }

    public var argumentTexts: [String] { map(\.argumentText) }
}

extension Optional: ParameterValue where Wrapped: ParameterValue {
    public static var valueType: ValueType { Wrapped.valueType }
    public static var valueWhenAbsent: Wrapped?? { .some(nil) }

    public static func convert(_ inputs: [ArgumentInput]) throws(ArgumentConversionError) -> Wrapped? {
        if inputs.count == 1, case .json(.null) = inputs[0] { return nil }
        return try Wrapped.convert(inputs)
    }

    public var argumentTexts: [String] { self?.argumentTexts ?? [] }
}

// MARK: - Scalars

extension String: ArgumentValue {
    public static var valueType: ValueType { .string }
    public init?(argumentText: String) { self = argumentText }
}

extension Int: ArgumentValue {
    public static var valueType: ValueType { .integer }
    public init?(argumentText: String) { self.init(argumentText, radix: 10) }
}

extension Int64: ArgumentValue {
    public static var valueType: ValueType { .long }
    public init?(argumentText: String) { self.init(argumentText, radix: 10) }
}

extension Double: ArgumentValue {
    public static var valueType: ValueType { .double }
    public init?(argumentText: String) {
        // Swift also parses "nan", "inf" and hexadecimal; accept decimal only.
        guard let first = argumentText.utf8.first,
            first == UInt8(ascii: "-") || first == UInt8(ascii: ".") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first),
            !argumentText.contains(where: { $0 == "x" || $0 == "X" || $0 == "n" || $0 == "N" || $0 == "i" || $0 == "I" }),
            let value = Double(argumentText)
        else { return nil }
        self = value
    }
    /// Integral values without a fraction (`2`, not `2.0`), as JSON writes them.
    public var argumentText: String {
        if self == rounded(), let integral = Int64(exactly: self) { return String(integral) }
        return description
    }
}

extension Bool: ArgumentValue {
    public static var valueType: ValueType { .boolean }
    public init?(argumentText: String) {
        switch argumentText {
        case "true", "1": self = true
        case "false", "0": self = false
        default: return nil
        }
    }
}

extension Date: ArgumentValue {
    public static var valueType: ValueType { .dateTime }
    public init?(argumentText: String) {
        guard let date = ISO8601.parse(argumentText) else { return nil }
        self = date
    }

    public var argumentText: String { ISO8601.format(self) }
}

extension UUID: ArgumentValue {
    public static var valueType: ValueType { .uuid }
    public init?(argumentText: String) { self.init(uuidString: argumentText) }
    public var argumentText: String { uuidString }
}

extension URL: ArgumentValue {
    public static var valueType: ValueType { .url }
    public init?(argumentText: String) {
        guard let url = URL(string: argumentText), url.scheme != nil else { return nil }
        self = url
    }

    public var argumentText: String { absoluteString }
}

extension UploadedFile: ArgumentValue {
    public static var valueType: ValueType { .file }
    public init?(argumentText: String) { nil }
    /// A file has no text; its name stands for it in the documentation.
    public var argumentText: String { filename ?? "" }

    public static func convert(_ inputs: [ArgumentInput]) throws(ArgumentConversionError) -> UploadedFile {
        guard inputs.count == 1, case .file(let file) = inputs[0] else {
            let received = inputs.count == 1 ? inputs[0].received : "\(inputs.count) values"
            throw ArgumentConversionError(expected: .file, received: received)
        }
        return file
    }
}
