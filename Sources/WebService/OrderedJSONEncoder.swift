import FoundationEssentials
import JSONStreaming

/// Encodes an `Encodable` value as JSON with object keys in the order the
/// type encodes them (declaration order for synthesized conformances),
/// which Foundation's `JSONEncoder` does not keep on Linux.
///
/// Dates are written as ISO 8601 strings (`2024-05-01T00:00:00Z`), URLs as
/// their absolute string, non-finite doubles as `null`; `nil` optionals are
/// left out, as synthesized `encode(to:)` does.
///
/// ```swift
/// struct Sum: Encodable { var total = 6.0; var count = 3 }
/// try OrderedJSONEncoder.encode(Sum())   // {"total":6,"count":3}
/// ```
public enum OrderedJSONEncoder {
    /// The JSON bytes for `value`.
    public static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        var out: [UInt8] = []
        try encodeNode(value, codingPath: []).write(to: &out)
        return out
    }

    static func encodeNode<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws -> Node {
        switch value {
        case let date as Date:
            return .scalar(.string(ISO8601.format(date)))
        case let url as URL:
            return .scalar(.string(url.absoluteString))
        case let decimal as Decimal:
            return .raw(Array(decimal.description.utf8))
        default:
            let encoder = NodeEncoder(codingPath: codingPath)
            try value.encode(to: encoder)
            return encoder.root ?? .object(ObjectNode())
        }
    }

    // MARK: - Tree

    /// The tree the encoder builds: scalars as JSON values, containers
    /// still being filled, and numbers kept as their text.
    enum Node {
        case scalar(JSONValue)
        case raw([UInt8])
        case object(ObjectNode)
        case array(ArrayNode)

        /// An unsigned integer as a JSON number, whatever its size.
        static func unsigned(_ value: UInt64) -> Node {
            if let small = Int64(exactly: value) { return .scalar(.integer(small)) }
            return .raw(Array(String(value).utf8))
        }

        func write(to out: inout [UInt8]) {
            switch self {
            case .scalar(let value): value.append(to: &out)
            case .raw(let bytes): out.append(contentsOf: bytes)
            case .object(let object):
                JSONWriter.appendObject(object.members, to: &out) { $0.write(to: &$1) }
            case .array(let array):
                JSONWriter.appendArray(array.elements, to: &out) { $0.write(to: &$1) }
            }
        }
    }

    /// Containers are classes so that nested containers handed out by the
    /// encoder keep writing into the tree after they are returned.
    final class ObjectNode {
        var members: [(key: String, value: Node)] = []

        func set(_ key: String, _ value: Node) {
            if let index = members.firstIndex(where: { $0.key == key }) {
                members[index].value = value
            } else {
                members.append((key, value))
            }
        }
    }

    final class ArrayNode {
        var elements: [Node] = []
    }
}

// MARK: - Encoder

extension OrderedJSONEncoder {
    final class NodeEncoder: Encoder {
        let codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }
        var root: Node?

        init(codingPath: [any CodingKey]) {
            self.codingPath = codingPath
        }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            let object: ObjectNode
            if case .object(let existing) = root {
                object = existing
            } else {
                object = ObjectNode()
                root = .object(object)
            }
            return KeyedEncodingContainer(KeyedContainer<Key>(object: object, codingPath: codingPath))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            let array: ArrayNode
            if case .array(let existing) = root {
                array = existing
            } else {
                array = ArrayNode()
                root = .array(array)
            }
            return UnkeyedContainer(array: array, codingPath: codingPath)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer {
            SingleValueContainer(encoder: self)
        }
    }

    struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let object: ObjectNode
        let codingPath: [any CodingKey]

        mutating func encodeNil(forKey key: Key) throws { object.set(key.stringValue, .scalar(.null)) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { object.set(key.stringValue, .scalar(.bool(value))) }
        mutating func encode(_ value: String, forKey key: Key) throws { object.set(key.stringValue, .scalar(.string(value))) }
        mutating func encode(_ value: Double, forKey key: Key) throws { object.set(key.stringValue, .scalar(.number(value))) }
        mutating func encode(_ value: Float, forKey key: Key) throws { object.set(key.stringValue, .scalar(.number(Double(value)))) }
        mutating func encode(_ value: Int, forKey key: Key) throws { object.set(key.stringValue, .scalar(.integer(Int64(value)))) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { object.set(key.stringValue, .scalar(.integer(value))) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { object.set(key.stringValue, .unsigned(value)) }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            object.set(key.stringValue, try OrderedJSONEncoder.encodeNode(value, codingPath: codingPath + [key]))
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<
            NestedKey
        > {
            let nested = ObjectNode()
            object.set(key.stringValue, .object(nested))
            return KeyedEncodingContainer(KeyedContainer<NestedKey>(object: nested, codingPath: codingPath + [key]))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            let nested = ArrayNode()
            object.set(key.stringValue, .array(nested))
            return UnkeyedContainer(array: nested, codingPath: codingPath + [key])
        }

        mutating func superEncoder() -> any Encoder {
            SuperEncoder(object: object, key: "super", codingPath: codingPath)
        }

        mutating func superEncoder(forKey key: Key) -> any Encoder {
            SuperEncoder(object: object, key: key.stringValue, codingPath: codingPath + [key])
        }
    }

    struct UnkeyedContainer: UnkeyedEncodingContainer {
        let array: ArrayNode
        let codingPath: [any CodingKey]
        var count: Int { array.elements.count }

        mutating func encodeNil() throws { array.elements.append(.scalar(.null)) }
        mutating func encode(_ value: Bool) throws { array.elements.append(.scalar(.bool(value))) }
        mutating func encode(_ value: String) throws { array.elements.append(.scalar(.string(value))) }
        mutating func encode(_ value: Double) throws { array.elements.append(.scalar(.number(value))) }
        mutating func encode(_ value: Int) throws { array.elements.append(.scalar(.integer(Int64(value)))) }
        mutating func encode(_ value: Int64) throws { array.elements.append(.scalar(.integer(value))) }

        mutating func encode<T: Encodable>(_ value: T) throws {
            array.elements.append(try OrderedJSONEncoder.encodeNode(value, codingPath: codingPath + [IndexKey(count)]))
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            let nested = ObjectNode()
            array.elements.append(.object(nested))
            return KeyedEncodingContainer(KeyedContainer<NestedKey>(object: nested, codingPath: codingPath + [IndexKey(count - 1)]))
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let nested = ArrayNode()
            array.elements.append(.array(nested))
            return UnkeyedContainer(array: nested, codingPath: codingPath + [IndexKey(count - 1)])
        }

        mutating func superEncoder() -> any Encoder {
            let encoder = NodeEncoder(codingPath: codingPath)
            let nested = ObjectNode()
            encoder.root = .object(nested)
            array.elements.append(.object(nested))
            return encoder
        }
    }

    struct SingleValueContainer: SingleValueEncodingContainer {
        let encoder: NodeEncoder
        var codingPath: [any CodingKey] { encoder.codingPath }

        mutating func encodeNil() throws { encoder.root = .scalar(.null) }
        mutating func encode(_ value: Bool) throws { encoder.root = .scalar(.bool(value)) }
        mutating func encode(_ value: String) throws { encoder.root = .scalar(.string(value)) }
        mutating func encode(_ value: Double) throws { encoder.root = .scalar(.number(value)) }
        mutating func encode(_ value: Float) throws { encoder.root = .scalar(.number(Double(value))) }
        mutating func encode(_ value: Int) throws { encoder.root = .scalar(.integer(Int64(value))) }
        mutating func encode(_ value: Int64) throws { encoder.root = .scalar(.integer(value)) }
        mutating func encode(_ value: UInt64) throws { encoder.root = .unsigned(value) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            encoder.root = try OrderedJSONEncoder.encodeNode(value, codingPath: codingPath)
        }
    }

    /// The encoder `superEncoder(forKey:)` returns: whatever it encodes is
    /// stored under its key when it is first written.
    final class SuperEncoder: Encoder {
        let object: ObjectNode
        let key: String
        let codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }
        private let inner: NodeEncoder

        init(object: ObjectNode, key: String, codingPath: [any CodingKey]) {
            self.object = object
            self.key = key
            self.codingPath = codingPath
            self.inner = NodeEncoder(codingPath: codingPath)
        }

        // `inner` has its root once a container is asked of it, as here.
        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            defer { object.set(key, inner.root!) }
            return inner.container(keyedBy: type)
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            defer { object.set(key, inner.root!) }
            return inner.unkeyedContainer()
        }

        func singleValueContainer() -> any SingleValueEncodingContainer {
            object.set(key, .scalar(.null))
            return SuperSingleValueContainer(encoder: self)
        }

        func store(_ node: Node) { object.set(key, node) }
    }

    struct SuperSingleValueContainer: SingleValueEncodingContainer {
        let encoder: SuperEncoder
        var codingPath: [any CodingKey] { encoder.codingPath }

        mutating func encodeNil() throws { encoder.store(.scalar(.null)) }
        mutating func encode(_ value: Bool) throws { encoder.store(.scalar(.bool(value))) }
        mutating func encode(_ value: String) throws { encoder.store(.scalar(.string(value))) }
        mutating func encode(_ value: Double) throws { encoder.store(.scalar(.number(value))) }
        mutating func encode(_ value: Int) throws { encoder.store(.scalar(.integer(Int64(value)))) }
        mutating func encode(_ value: Int64) throws { encoder.store(.scalar(.integer(value))) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            encoder.store(try OrderedJSONEncoder.encodeNode(value, codingPath: codingPath))
        }
    }

    struct IndexKey: CodingKey {
        let intValue: Int?
        var stringValue: String { String(intValue ?? 0) }
        init(_ index: Int) { intValue = index }
        init?(stringValue: String) { return nil }
        init?(intValue: Int) { self.intValue = intValue }
    }
}
