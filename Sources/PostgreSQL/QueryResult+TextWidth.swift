internal import CLibPQ
#if canImport(Glibc)
import Glibc
#endif

extension QueryResult {
    /// The most bytes a value of column `column` takes written as JSON
    /// (its text, quoted and escaped), from the column's type and type
    /// modifier as the result describes them; `nil` when the type sets no
    /// bound (`text`, `json`, `bytea`, arrays, `numeric` without a
    /// precision, ...). A bound is generous: each byte of a string may be
    /// escaped as six (`\u001f`).
    package func maximumJSONBytes(column: Int32) -> Int? {
        TextWidth.maximumJSONBytes(
            type: PQftype(handle, column), size: Int(PQfsize(handle, column)), modifier: Int(PQfmod(handle, column)))
    }

    /// The most bytes a row of this result takes written as a JSON object
    /// keyed by its column labels (each label escaped, with its quotes,
    /// colon, comma and room for the object's nesting by label); `nil`
    /// when a column has no bound.
    package func maximumJSONRowBytes() -> Int? {
        var total = 2
        for column in 0..<columnCount {
            guard let value = maximumJSONBytes(column: column) else { return nil }
            let label = strlen(PQfname(handle, column))
            total += value + TextWidth.escaped * label + 16
        }
        return total
    }
}

/// Bounds on how long a value's text is, by type (see
/// ``QueryResult/maximumJSONBytes(column:)``).
package enum TextWidth {
    /// Six bytes a byte: what a control character escaped in JSON takes.
    static let escaped = 6

    /// The bound for a value of type `type` (a `pg_type` OID) whose
    /// internal length is `size` (`typlen`: -1 for a variable length) and
    /// whose type modifier is `modifier` (-1: none).
    package static func maximumJSONBytes(type: UInt32, size: Int, modifier: Int) -> Int? {
        switch type {
        case 16: return 8  // bool
        case 21, 23, 26, 28, 29: return 12  // int2, int4, oid, xid, cid
        case 20: return 21  // int8
        case 700, 701: return 32  // float4, float8: digits, sign, exponent, or "Infinity" quoted
        case 1082, 1083, 1266, 1114, 1184: return 48  // date and time types, quoted, ISO or epoch milliseconds
        case 2950: return 40  // uuid, quoted
        case 1186, 790: return 160  // interval, money
        case 24, 2202, 2203, 2204, 2205, 2206, 3734, 3769, 4089, 4096, 4191:
            // reg* types: a schema-qualified, quoted name, or a signature of up to 100 such names.
            return escaped * 16_384
        case 1042, 1043:
            // character(n), character varying(n): n characters of up to 4 bytes, each escaped at most to 6.
            guard modifier >= 4 else { return nil }
            return escaped * (modifier - 4) + 2
        case 1560, 1562:
            // bit(n), bit varying(n): a quoted string of n digits.
            guard modifier >= 0 else { return nil }
            return modifier + 2
        case 1700:
            // numeric(p, s): p digits, a sign, a point, a leading zero; a scale past
            // the precision adds zeros after the point, a negative one before it
            // (the scale is a signed 11-bit number since PostgreSQL 15).
            guard modifier >= 4 else { return nil }
            let precision = (modifier - 4) >> 16 & 0xffff
            let scale = (((modifier - 4) & 0x7ff) ^ 0x400) - 0x400
            return max(precision, scale) + max(0, -scale) + 4
        default:
            // Another type of fixed length (an enum's label, `name`, `char`,
            // geometric types): its text is short, but may be escaped.
            guard size > 0 else { return nil }
            return escaped * (64 + 4 * size)
        }
    }
}
