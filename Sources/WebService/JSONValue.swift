import JSONStreaming

/// A JSON value: a member of a request body, or a document built to be
/// written (the OpenAPI document, `rpc.discover`), in one tree with one way
/// of writing it (``append(to:)``, through `JSONWriter`).
///
/// An object's members keep their order (``Members``): a parsed document's
/// as it wrote them, a built one's as they were added, and are written in
/// it, so that a built document reads as its code does.
///
/// ```swift
/// // POST /math/sum  {"values": [1, 2, 3]}
/// // the argument "values" is .json(.array([.integer(1), .integer(2), .integer(3)]))
/// let schema: JSONValue = ["type": "integer", "format": "int64"]
/// schema.jsonText   // {"type":"integer","format":"int64"}
/// ```
///
/// Equality is structural: two objects are equal with the same members in
/// the same order.
public enum JSONValue: Sendable, Hashable, Decodable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    /// An object: members in order, looked up by name.
    case object(Members)

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
            var members = Members()
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

    /// The value written as compact JSON.
    ///
    /// ```swift
    /// JSONValue.array([.integer(1), .string("a")]).jsonText   // [1,"a"]
    /// ```
    public var jsonText: String {
        String(decoding: jsonBytes, as: UTF8.self)
    }

    /// The value written as compact JSON, as UTF-8 bytes.
    ///
    /// ```swift
    /// JSONValue.object(["b": 1, "a": 2]).jsonBytes   // the bytes of {"b":1,"a":2}
    /// ```
    public var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        append(to: &out)
        return out
    }

    /// Appends the value as compact JSON, an object's members in their order.
    ///
    /// ```swift
    /// var out: [UInt8] = []
    /// JSONValue.string("tab\t").append(to: &out)   // "tab\t"
    /// ```
    public func append<Output: JSONOutput>(to out: inout Output) {
        switch self {
        case .null: JSONWriter.appendNull(to: &out)
        case .bool(let value): JSONWriter.appendBool(value, to: &out)
        case .integer(let value): JSONWriter.appendInteger(value, to: &out)
        case .number(let value): JSONWriter.appendDouble(value, to: &out)
        case .string(let value): JSONWriter.appendString(value, to: &out)
        case .array(let elements):
            JSONWriter.appendArray(elements, to: &out) { $0.append(to: &$1) }
        case .object(let members):
            JSONWriter.appendObject(members.members, to: &out) { $0.append(to: &$1) }
        }
    }
}
