import CalendarDates
import FoundationEssentials

extension Row {
    /// Decodes the row as `T`: each property from the column with the same
    /// label; a nested `Decodable` property from the dotted labels under its
    /// name (`"name.first"`, `"name.last"` → `name: Name`).
    ///
    /// Supported values: `String`, `Bool`, integers, `Double`, `Float`,
    /// `Decimal`, `UUID`, `Date` (date, timestamp, timestamptz), and
    /// optionals of these for columns that may be NULL.
    ///
    /// ```swift
    /// struct Employee: Decodable { var employeeNumber: Int; var hireDate: Date }
    /// let employee = try row.decode(Employee.self)
    /// ```
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try T(from: RowDecoder(row: self, prefix: "", codingPath: []))
    }
}

// MARK: - Decoder

private struct RowDecoder: Decoder {
    let row: Row
    let prefix: String
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(KeyedRowContainer<Key>(row: row, prefix: prefix, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch(
            [Any].self, .init(codingPath: codingPath, debugDescription: "a row decodes as a keyed value"))
    }

    /// A scalar (`Int`, `String`, ...) decodes from the row's first column.
    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        guard prefix.isEmpty, !row.columns.isEmpty else {
            throw DecodingError.typeMismatch(
                Any.self, .init(codingPath: codingPath, debugDescription: "a scalar decodes from a row's first column"))
        }
        return FirstColumnContainer(text: row[0], codingPath: codingPath)
    }
}

private struct KeyedRowContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let row: Row
    let prefix: String
    let codingPath: [any CodingKey]

    var allKeys: [Key] {
        row.columns.compactMap { column in
            guard column.label.hasPrefix(prefix) else { return nil }
            let rest = column.label.dropFirst(prefix.count)
            return Key(stringValue: String(rest.prefix { $0 != "." }))
        }
    }

    func contains(_ key: Key) -> Bool {
        row.layout.index(of: prefix + key.stringValue) != nil
            || row.columns.contains { $0.label.hasPrefix(prefix + key.stringValue + ".") }
    }

    private func text(_ key: Key) throws -> String? {
        guard let index = row.layout.index(of: prefix + key.stringValue) else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "no column labelled \(prefix + key.stringValue)"))
        }
        return row[index]
    }

    private func required(_ key: Key) throws -> String {
        guard let text = try text(key) else {
            throw DecodingError.valueNotFound(
                String.self, .init(codingPath: codingPath + [key], debugDescription: "the column is NULL"))
        }
        return text
    }

    private func mismatch<T>(_ type: T.Type, _ key: Key) -> DecodingError {
        .typeMismatch(type, .init(codingPath: codingPath + [key], debugDescription: "the column's value is not a \(type)"))
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        if row.layout.index(of: prefix + key.stringValue) == nil {
            return !contains(key)
        }
        return try text(key) == nil
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        switch try required(key) {
        case "t", "true": true
        case "f", "false": false
        default: throw mismatch(type, key)
        }
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String { try required(key) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        if ScalarText.isScalar(type) {
            guard let value = ScalarText.parse(type, try required(key)) else { throw mismatch(type, key) }
            return value
        }
        return try T(from: RowDecoder(row: row, prefix: prefix + key.stringValue + ".", codingPath: codingPath + [key]))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        KeyedDecodingContainer(
            KeyedRowContainer<NestedKey>(row: row, prefix: prefix + key.stringValue + ".", codingPath: codingPath + [key]))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw mismatch([Any].self, key)
    }

    func superDecoder() throws -> any Decoder {
        RowDecoder(row: row, prefix: prefix, codingPath: codingPath)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        RowDecoder(row: row, prefix: prefix + key.stringValue + ".", codingPath: codingPath + [key])
    }

}

/// The first column of a row, for decoding a scalar (`fetchAll(Int.self, ...)`).
private struct FirstColumnContainer: SingleValueDecodingContainer {
    let text: String?
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { text == nil }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        guard let text else {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath, debugDescription: "the column is NULL"))
        }
        guard ScalarText.isScalar(type), let value = ScalarText.parse(type, text) else {
            throw DecodingError.typeMismatch(
                type, .init(codingPath: codingPath, debugDescription: "the column's value is not a \(type)"))
        }
        return value
    }
}

/// PostgreSQL text → Swift scalar values.
private enum ScalarText {
    static func isScalar<T>(_ type: T.Type) -> Bool {
        parsers[ObjectIdentifier(type)] != nil || type is any FixedWidthInteger.Type
    }

    static func parse<T>(_ type: T.Type, _ text: String) -> T? {
        if let parse = parsers[ObjectIdentifier(type)] { return parse(text) as? T }
        if let integerType = type as? any FixedWidthInteger.Type { return integerType.init(text, radix: 10) as? T }
        return nil
    }

    /// Text → value for the non-integer scalar types, by type.
    private static let parsers: [ObjectIdentifier: @Sendable (String) -> Any?] = [
        ObjectIdentifier(String.self): { $0 },
        ObjectIdentifier(Bool.self): { $0 == "t" || $0 == "true" ? true : $0 == "f" || $0 == "false" ? false : nil },
        ObjectIdentifier(Double.self): { Double(postgres: $0) },
        ObjectIdentifier(Float.self): { Double(postgres: $0).map { Float($0) } },
        ObjectIdentifier(Decimal.self): { Decimal(string: $0) },
        ObjectIdentifier(UUID.self): { UUID(uuidString: $0) },
        ObjectIdentifier(Date.self): { PostgresDateTime.date($0) },
    ]
}

extension Double {
    /// Parses PostgreSQL's float text, including `NaN`, `Infinity`, `-Infinity`.
    init?(postgres text: String) {
        switch text {
        case "NaN": self = .nan
        case "Infinity": self = .infinity
        case "-Infinity": self = -.infinity
        default:
            guard let value = Double(text) else { return nil }
            self = value
        }
    }
}
