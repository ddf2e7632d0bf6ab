/// A decoder that answers every request with a sample value and, when it
/// has an introspector, records the fields a `Decodable` type asks for.
final class RecordingDecoder: Decoder {
    enum Shape {
        case keyed
        case unkeyed
        case single(ValueType)
    }

    let introspector: TypeIntrospector?
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    private(set) var shape: Shape?
    private(set) var fields: [StructureDocumentation.Field] = []

    init(introspector: TypeIntrospector?) {
        self.introspector = introspector
    }

    func record(_ key: any CodingKey, _ type: Any.Type, required: Bool) {
        guard let introspector, !fields.contains(where: { $0.name == key.stringValue }) else { return }
        fields.append(.init(name: key.stringValue, type: introspector.describe(type), required: required))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        if shape == nil { shape = .keyed }
        return KeyedDecodingContainer(KeyedContainer<Key>(decoder: self))
    }

    func unkeyedContainer() -> any UnkeyedDecodingContainer {
        if shape == nil { shape = .unkeyed }
        return EmptyUnkeyedContainer()
    }

    func singleValueContainer() -> any SingleValueDecodingContainer {
        SingleValueContainer(decoder: self)
    }

    struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: RecordingDecoder
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { [] }

        func contains(_ key: Key) -> Bool { true }
        func decodeNil(forKey key: Key) -> Bool { false }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            decoder.record(key, type, required: true)
            return try TypeIntrospector.sample(type)
        }

        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            decoder.record(key, type, required: false)
            return nil
        }

        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { absent(type, key) }
        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { absent(type, key) }
        func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { absent(type, key) }
        func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { absent(type, key) }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { absent(type, key) }
        func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { absent(type, key) }
        func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { absent(type, key) }
        func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { absent(type, key) }
        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { absent(type, key) }
        func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { absent(type, key) }
        func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { absent(type, key) }
        func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { absent(type, key) }
        func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { absent(type, key) }
        func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { absent(type, key) }

        private func absent<T>(_ type: T.Type, _ key: Key) -> T? {
            decoder.record(key, type, required: false)
            return nil
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) -> KeyedDecodingContainer<NestedKey> {
            decoder.record(key, [String: String].self, required: true)
            return KeyedDecodingContainer(KeyedContainer<NestedKey>(decoder: RecordingDecoder(introspector: nil)))
        }

        func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedDecodingContainer {
            decoder.record(key, [String].self, required: true)
            return EmptyUnkeyedContainer()
        }

        func superDecoder() -> any Decoder { decoder }
        func superDecoder(forKey key: Key) -> any Decoder { RecordingDecoder(introspector: nil) }
    }

    /// Every array decodes as empty: the element type is known statically.
    struct EmptyUnkeyedContainer: UnkeyedDecodingContainer {
        var codingPath: [any CodingKey] { [] }
        var count: Int? { 0 }
        var isAtEnd: Bool { true }
        var currentIndex: Int { 0 }

        mutating func decodeNil() -> Bool { true }

        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            throw DecodingError.valueNotFound(type, .init(codingPath: [], debugDescription: "Sample arrays are empty."))
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) -> KeyedDecodingContainer<NestedKey> {
            KeyedDecodingContainer(KeyedContainer<NestedKey>(decoder: RecordingDecoder(introspector: nil)))
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedDecodingContainer { self }
        mutating func superDecoder() -> any Decoder { RecordingDecoder(introspector: nil) }
    }

    struct SingleValueContainer: SingleValueDecodingContainer {
        let decoder: RecordingDecoder
        var codingPath: [any CodingKey] { [] }

        func decodeNil() -> Bool { false }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            if decoder.shape == nil, let introspector = decoder.introspector {
                decoder.shape = .single(introspector.describe(type))
            }
            return try TypeIntrospector.sample(type)
        }
    }
}
