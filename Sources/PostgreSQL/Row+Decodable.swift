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
        ObjectIdentifier(Date.self): { PostgresTimestampText.date(from: $0) },
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

/// Parses PostgreSQL's ISO output of `date`, `timestamp` and `timestamptz`
/// (`2024-05-01`, `2024-05-01 10:00:00.25`, `2024-05-01 10:00:00+02`).
/// Values without an offset are taken as UTC.
enum PostgresTimestampText {
    static func date(from text: String) -> Date? {
        let bytes = Array(text.utf8)
        var position = 0
        func number(_ digits: Int) -> Int? {
            guard position + digits <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[position..<position + digits] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            position += digits
            return value
        }
        func expect(_ character: Character) -> Bool {
            guard position < bytes.count, bytes[position] == character.asciiValue else { return false }
            position += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2) else {
            return nil
        }
        var seconds = CivilCalendar.days(year: Int64(year), month: Int64(month), day: Int64(day)) * 86_400
        var fraction = 0.0
        if expect(" ") || expect("T") {
            guard let hour = number(2), expect(":"), let minute = number(2), expect(":"), let second = number(2) else {
                return nil
            }
            seconds += Int64(hour * 3600 + minute * 60 + second)
            if expect(".") {
                var scale = 0.1
                while position < bytes.count, (48...57).contains(bytes[position]) {
                    fraction += Double(bytes[position] - 48) * scale
                    scale /= 10
                    position += 1
                }
            }
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                let sign: Int64 = bytes[position] == UInt8(ascii: "+") ? 1 : -1
                position += 1
                guard let hours = number(2) else { return nil }
                var offset = hours * 3600
                if expect(":") { offset += (number(2) ?? 0) * 60 }
                if expect(":") { offset += number(2) ?? 0 }
                seconds -= sign * Int64(offset)
            }
        }
        guard position == bytes.count, (1...12).contains(month), (1...31).contains(day) else { return nil }
        return Date(timeIntervalSince1970: Double(seconds)).addingTimeInterval(fraction)
    }
}
