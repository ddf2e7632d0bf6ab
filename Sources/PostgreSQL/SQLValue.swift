/// A value sent to PostgreSQL as a libpq text-format parameter: SQL `NULL`
/// or the value's text, which the server converts to the parameter's type
/// as it would a quoted literal. Values never become part of the SQL text.
///
/// ```swift
/// let values: [SQLValue] = [.text("10004"), .null]
/// 10004.sqlValue          // .text("10004")
/// [1, 2, 3].sqlValue      // .text("{\"1\",\"2\",\"3\"}")
/// ```
///
/// No type is sent with the value: PostgreSQL infers each parameter's type
/// from its use (`emp_no = $1` makes `$1` an integer, `= ANY($1)` an integer
/// array), so a Swift `Int` can be compared with an `int4` column or stored
/// in a `text` one. Add a cast in SQL (`:day::date`) where the context does
/// not say.
public enum SQLValue: Sendable, Hashable {
    /// SQL `NULL`.
    case null
    /// The value in PostgreSQL's text input format (`"42"`, `"true"`,
    /// `"2024-05-01 10:00:00+00"`, `"{1,2}"`).
    case text(String)

    /// The text to send for the value, `nil` for `NULL`.
    package var text: String? {
        switch self {
        case .null: nil
        case .text(let text): text
        }
    }
}

/// A Swift value that can be bound to a SQL parameter.
///
/// ```swift
/// struct EmployeeNumber: SQLValueConvertible {
///     var rawValue: Int
///     var sqlValue: SQLValue { rawValue.sqlValue }
/// }
/// ```
public protocol SQLValueConvertible {
    /// The value as sent to PostgreSQL.
    var sqlValue: SQLValue { get }
}

// MARK: - Standard library values

extension SQLValue: SQLValueConvertible {
    /// The value itself.
    public var sqlValue: SQLValue { self }
}

extension Optional: SQLValueConvertible where Wrapped: SQLValueConvertible {
    /// `nil` is SQL `NULL`.
    ///
    /// ```swift
    /// (nil as Int?).sqlValue   // .null
    /// ```
    public var sqlValue: SQLValue {
        switch self {
        case .none: .null
        case .some(let wrapped): wrapped.sqlValue
        }
    }
}

extension String: SQLValueConvertible {
    /// The string itself: `"bal%"` → `.text("bal%")`.
    public var sqlValue: SQLValue { .text(self) }
}

extension Substring: SQLValueConvertible {
    /// The substring's text.
    public var sqlValue: SQLValue { .text(String(self)) }
}

extension Bool: SQLValueConvertible {
    /// `true` or `false`, as `bool` input accepts them.
    public var sqlValue: SQLValue { .text(self ? "true" : "false") }
}

extension Double: SQLValueConvertible {
    /// The shortest text that reads back as the same `Double`
    /// (`0.1`, `1e-05`); `NaN`, `Infinity` and `-Infinity` as `float8` spells them.
    public var sqlValue: SQLValue { .text(Self.postgresText(self)) }

    static func postgresText<F: BinaryFloatingPoint & LosslessStringConvertible>(_ value: F) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        return value.description
    }
}

extension Float: SQLValueConvertible {
    /// As for `Double`.
    public var sqlValue: SQLValue { .text(Double.postgresText(self)) }
}

extension Int: SQLValueConvertible {
    /// The number in decimal: `10004` → `.text("10004")`.
    public var sqlValue: SQLValue { .text(String(self)) }
}

extension Int8: SQLValueConvertible {
    /// The number in decimal.
    public var sqlValue: SQLValue { .text(String(self)) }
}

extension Int16: SQLValueConvertible {
    /// The number in decimal.
    public var sqlValue: SQLValue { .text(String(self)) }
}

extension Int32: SQLValueConvertible {
    /// The number in decimal.
    public var sqlValue: SQLValue { .text(String(self)) }
}

extension Int64: SQLValueConvertible {
    /// The number in decimal.
    public var sqlValue: SQLValue { .text(String(self)) }
}

extension UInt: SQLValueConvertible {
    /// The number in decimal (`numeric` holds values past `int8`).
    public var sqlValue: SQLValue { .text(String(self)) }
}

extension UInt8: SQLValueConvertible {
    /// The number in decimal.
    public var sqlValue: SQLValue { .text(String(self)) }
}

extension UInt16: SQLValueConvertible {
    /// The number in decimal.
    public var sqlValue: SQLValue { .text(String(self)) }
}

extension UInt32: SQLValueConvertible {
    /// The number in decimal.
    public var sqlValue: SQLValue { .text(String(self)) }
}

extension UInt64: SQLValueConvertible {
    /// The number in decimal (`numeric` holds values past `int8`).
    public var sqlValue: SQLValue { .text(String(self)) }
}
