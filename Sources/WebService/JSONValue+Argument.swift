/// A JSON value as an argument: a member of a JSON body as it is, or the
/// text of a query or form field parsed as a JSON document (`?filter={"a":1}`).
///
/// ```swift
/// Parameter<JSONValue>("filter")
/// ```
extension JSONValue: ArgumentValue {
    public static var valueType: ValueType { .any }

    public init?(argumentText: String) {
        guard let value = try? JSONValue.parse(Array(argumentText.utf8)) else { return nil }
        self = value
    }

    public static func convert(_ inputs: [ArgumentInput]) throws(ArgumentConversionError) -> JSONValue {
        if inputs.count == 1, case .json(let value) = inputs[0] { return value }
        guard inputs.count == 1, case .text(let text) = inputs[0], let value = JSONValue(argumentText: text) else {
            throw ArgumentConversionError(expected: .any, received: inputs.count == 1 ? inputs[0].received : "\(inputs.count) values")
        }
        return value
    }
}
