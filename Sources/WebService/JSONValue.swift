import JSONStreaming

/// A JSON value received in a request body, one member of which becomes an
/// argument when the body is a JSON object.
///
/// ```swift
/// // POST /math/sum  {"values": [1, 2, 3]}
/// // the argument "values" is .json(.array([.integer(1), .integer(2), .integer(3)]))
/// ```
public enum JSONValue: Sendable, Hashable, Decodable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Decodes any JSON value. Arrays and objects are recognised by their
    /// container before their members are decoded, so that a member no case
    /// can hold fails once, not once per way of reading each level.
    public init(from decoder: any Decoder) throws {
        if var container = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !container.isAtEnd {
                elements.append(try container.decode(JSONValue.self))
            }
            self = .array(elements)
            return
        }
        if let container = try? decoder.container(keyedBy: MemberName.self) {
            var members: [String: JSONValue] = [:]
            for key in container.allKeys {
                members[key.stringValue] = try container.decode(JSONValue.self, forKey: key)
            }
            self = .object(members)
            return
        }
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    private struct MemberName: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// The value's text when it is a string, number or boolean.
    var scalarText: String? {
        switch self {
        case .string(let text): text
        case .integer(let value): String(value)
        case .number(let value): String(value)
        case .bool(let value): String(value)
        case .null, .array, .object: nil
        }
    }

    /// The value written as JSON (object members in key order).
    ///
    /// ```swift
    /// JSONValue.array([.integer(1), .string("a")]).jsonText   // [1,"a"]
    /// ```
    public var jsonText: String {
        var out: [UInt8] = []
        append(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    func append(to out: inout [UInt8]) {
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
                element.append(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONWriter.appendString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                members[key]!.append(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}
