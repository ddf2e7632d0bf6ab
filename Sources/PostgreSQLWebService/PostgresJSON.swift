import JSONStreaming
import PostgreSQL

/// How PostgreSQL values are written as JSON.
///
/// ```swift
/// var options = JSONRenderingOptions()
/// options.dateFormat = .epochMilliseconds   // 2024-05-01 → 1714521600000
/// ```
public struct JSONRenderingOptions: Sendable, Hashable {
    /// How `date`, `timestamp` and `timestamptz` values are written.
    public enum DateFormat: Sendable, Hashable {
        /// ISO 8601 strings: `"2024-05-01"`, `"2024-05-01T10:00:00.5"`,
        /// `"2024-05-01T10:00:00+02:00"`.
        case iso8601
        /// Milliseconds since 1970-01-01T00:00:00Z, as HTTP-RPC wrote dates:
        /// a `date` is its UTC midnight, a `timestamp` is taken as UTC, a
        /// `timestamptz` is its instant. `infinity` and `-infinity` stay strings.
        case epochMilliseconds
    }

    /// How dates and timestamps are written; ISO 8601 strings by default.
    public var dateFormat: DateFormat

    /// Options with the given date format.
    ///
    /// ```swift
    /// let options = JSONRenderingOptions(dateFormat: .epochMilliseconds)
    /// ```
    public init(dateFormat: DateFormat = .iso8601) {
        self.dateFormat = dateFormat
    }
}

/// Writes PostgreSQL values, as libpq returns them in text format, as JSON
/// without intermediate strings or per-value allocations.
///
/// ```swift
/// let format = PostgresJSON.Format(type: PostgresType(oid: PQftype(result, column)))  // once per column
/// PostgresJSON.append(value, format: format, to: &output, options: options)          // per value
/// ```
///
/// Values are numbers (`int2`, `int4`, `int8`, `oid`, `numeric`, `float4`,
/// `float8`; NaN and infinities as `null`), booleans, embedded JSON (`json`,
/// `jsonb`), ISO 8601 dates and timestamps (`timestamptz` offsets always
/// `±HH:MM`), base64 strings (`bytea`), arrays (of any built-in element type,
/// any dimension, NULL elements as `null`), and strings for everything else.
/// SQL `NULL` is the caller's to write (`JSONWriter.appendNull`).
///
/// The session must use PostgreSQL's default output settings:
/// `DateStyle` ISO, `IntervalStyle` postgres, `bytea_output` hex (escape is
/// also read). A value that does not parse as its type's text is written as
/// a JSON string, so the output is valid JSON whatever the input.
enum PostgresJSON {
    /// How one column's values are written, decided once from its type.
    struct Format: Sendable, Hashable {
        enum Kind: Sendable, Hashable {
            case integer, number, bool, json, date, timestamp, timestamptz, bytea, string, array
        }

        /// The kind of the values themselves.
        let kind: Kind
        /// For arrays, the kind of the elements.
        let elementKind: Kind
        /// For arrays, the character between elements.
        let delimiter: UInt8

        init(type: PostgresType) {
            if let element = type.elementType {
                kind = .array
                elementKind = Self.scalarKind(of: element)
                delimiter = element.arrayDelimiter
            } else {
                kind = Self.scalarKind(of: type)
                elementKind = .string
                delimiter = UInt8(ascii: ",")
            }
        }

        static func scalarKind(of type: PostgresType) -> Kind {
            switch type {
            case .int2, .int4, .int8, .oid: .integer
            case .numeric, .float4, .float8: .number
            case .bool: .bool
            case .json, .jsonb: .json
            case .date: .date
            case .timestamp: .timestamp
            case .timestamptz: .timestamptz
            case .bytea: .bytea
            default: .string
            }
        }
    }

    /// Appends one value of the given type; for many values of one column,
    /// make its ``Format`` once and use `append(_:format:to:options:)`.
    static func append<Output: JSONOutput>(
        _ value: UnsafeRawBufferPointer, typeOID: UInt32, to output: inout Output, options: JSONRenderingOptions
    ) {
        append(value, format: Format(type: PostgresType(oid: typeOID)), to: &output, options: options)
    }

    /// Appends one (non-NULL) value in the column's format.
    ///
    /// Strings and integers, most values of most rows, are written here,
    /// inline in the row's loop; the other kinds in a call.
    @inline(__always)
    static func append<Output: JSONOutput>(
        _ value: UnsafeRawBufferPointer, format: Format, to output: inout Output, options: JSONRenderingOptions
    ) {
        switch format.kind {
        case .string:
            JSONWriter.appendString(utf8: value, to: &output)
        case .integer:
            appendInteger(value, to: &output)
        case .array:
            appendArray(value, elementKind: format.elementKind, delimiter: format.delimiter, to: &output, options: options)
        default:
            appendScalar(value, kind: format.kind, to: &output, options: options)
        }
    }

    static func appendScalar<Output: JSONOutput>(
        _ value: UnsafeRawBufferPointer, kind: Format.Kind, to output: inout Output, options: JSONRenderingOptions
    ) {
        switch kind {
        case .integer:
            appendInteger(value, to: &output)
        case .number:
            appendNumber(value, to: &output)
        case .bool:
            if value.count == 1 && value[0] == UInt8(ascii: "t") {
                JSONWriter.appendBool(true, to: &output)
            } else if value.count == 1 && value[0] == UInt8(ascii: "f") {
                JSONWriter.appendBool(false, to: &output)
            } else {
                JSONWriter.appendString(utf8: value, to: &output)
            }
        case .json:
            JSONWriter.appendRaw(value, to: &output)
        case .date, .timestamp, .timestamptz:
            appendDateTime(value, kind: kind, to: &output, options: options)
        case .bytea:
            appendBase64(bytea: value, to: &output)
        case .string, .array:
            JSONWriter.appendString(utf8: value, to: &output)
        }
    }

    // MARK: - Numbers

    /// Numeric text is copied as it is when it is a JSON number (PostgreSQL's
    /// output always is, except for `NaN`, `Infinity` and `-Infinity`,
    /// which become `null`).
    static func appendNumber<Output: JSONOutput>(_ value: UnsafeRawBufferPointer, to output: inout Output) {
        if isJSONNumber(value) {
            JSONWriter.appendRaw(value, to: &output)
        } else if equals(value, "NaN") || equals(value, "Infinity") || equals(value, "-Infinity") {
            JSONWriter.appendNull(to: &output)
        } else {
            JSONWriter.appendString(utf8: value, to: &output)
        }
    }

    /// Integer text is copied as it is when it is a JSON number (PostgreSQL's
    /// always is), else written as a string.
    @inline(__always)
    static func appendInteger<Output: JSONOutput>(_ value: UnsafeRawBufferPointer, to output: inout Output) {
        if isJSONInteger(value) {
            JSONWriter.appendRaw(value, to: &output)
        } else {
            JSONWriter.appendString(utf8: value, to: &output)
        }
    }

    /// `-?(0|[1-9][0-9]*)`: the text of every integer PostgreSQL writes.
    /// Apart from ``isJSONNumber(_:)``, and inline: a key column's value
    /// is checked on every row of a list.
    @inline(__always)
    static func isJSONInteger(_ text: UnsafeRawBufferPointer) -> Bool {
        let count = text.count
        var index = 0
        if count > 1 && text[0] == UInt8(ascii: "-") { index = 1 }
        guard index < count else { return false }
        let first = text[index] &- UInt8(ascii: "0")
        guard first < 10, first != 0 || index == count - 1 else { return false }
        index += 1
        while index < count {
            guard text[index] &- UInt8(ascii: "0") < 10 else { return false }
            index += 1
        }
        return true
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    static func isJSONNumber(_ text: UnsafeRawBufferPointer) -> Bool {
        let count = text.count
        var index = 0
        func isDigit(_ index: Int) -> Bool {
            index < count && text[index] &- UInt8(ascii: "0") < 10
        }
        /// Skips one or more digits; `false` if there are none.
        func skipDigits(_ index: inout Int) -> Bool {
            guard isDigit(index) else { return false }
            repeat { index += 1 } while isDigit(index)
            return true
        }
        if index < count && text[index] == UInt8(ascii: "-") { index += 1 }
        if index < count && text[index] == UInt8(ascii: "0") {
            index += 1
        } else if !skipDigits(&index) {
            return false
        }
        if index < count && text[index] == UInt8(ascii: ".") {
            index += 1
            guard skipDigits(&index) else { return false }
        }
        if index < count && text[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < count && (text[index] == UInt8(ascii: "+") || text[index] == UInt8(ascii: "-")) { index += 1 }
            guard skipDigits(&index) else { return false }
        }
        return index == count
    }

    static func equals(_ bytes: UnsafeRawBufferPointer, _ ascii: StaticString) -> Bool {
        bytes.elementsEqual(UnsafeRawBufferPointer(start: ascii.utf8Start, count: ascii.utf8CodeUnitCount))
    }
}
