import JSONStreaming

extension OpenAPIDocument {
    /// A JSON value whose object members keep the order they were written
    /// in, so that the document reads as it is built (`openapi`, `info`,
    /// `paths`, ...).
    ///
    /// ```swift
    /// let schema: OpenAPIDocument.JSON = ["type": "integer", "format": "int64"]
    /// schema.bytes   // {"type":"integer","format":"int64"}
    /// ```
    indirect enum JSON: Sendable, ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
        ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
    {
        case null
        case bool(Bool)
        case integer(Int64)
        case number(Double)
        case string(String)
        case array([JSON])
        case object([(key: String, value: JSON)])

        init(stringLiteral value: String) { self = .string(value) }
        init(booleanLiteral value: Bool) { self = .bool(value) }
        init(integerLiteral value: Int64) { self = .integer(value) }
        init(arrayLiteral elements: JSON...) { self = .array(elements) }
        init(dictionaryLiteral elements: (String, JSON)...) { self = .object(elements.map { (key: $0.0, value: $0.1) }) }

        /// The member `key` of an object: set replaces it in place or adds
        /// it at the end.
        subscript(key: String) -> JSON? {
            get {
                guard case .object(let members) = self else { return nil }
                return members.first { $0.key == key }?.value
            }
            set {
                guard case .object(var members) = self else { preconditionFailure("\(key) set on a JSON value that is not an object") }
                if let index = members.firstIndex(where: { $0.key == key }) {
                    if let newValue { members[index].value = newValue } else { members.remove(at: index) }
                } else if let newValue {
                    members.append((key, newValue))
                }
                self = .object(members)
            }
        }

        /// Whether this is an object with no members.
        var isEmptyObject: Bool {
            if case .object(let members) = self { return members.isEmpty }
            return false
        }

        /// The value as compact JSON text.
        var bytes: [UInt8] {
            var out: [UInt8] = []
            write(to: &out)
            return out
        }

        func write(to out: inout [UInt8]) {
            switch self {
            case .null: JSONWriter.appendNull(to: &out)
            case .bool(let value): JSONWriter.appendBool(value, to: &out)
            case .integer(let value): JSONWriter.appendInteger(value, to: &out)
            case .number(let value): JSONWriter.appendDouble(value, to: &out)
            case .string(let value): JSONWriter.appendString(value, to: &out)
            case .array(let elements):
                out.append(UInt8(ascii: "["))
                for (index, element) in elements.enumerated() {
                    if index > 0 { out.append(UInt8(ascii: ",")) }
                    element.write(to: &out)
                }
                out.append(UInt8(ascii: "]"))
            case .object(let members):
                out.append(UInt8(ascii: "{"))
                for (index, member) in members.enumerated() {
                    if index > 0 { out.append(UInt8(ascii: ",")) }
                    JSONWriter.appendString(member.key, to: &out)
                    out.append(UInt8(ascii: ":"))
                    member.value.write(to: &out)
                }
                out.append(UInt8(ascii: "}"))
            }
        }
    }
}
