/// A PostgreSQL data type, by its OID, with the built-in types as constants.
///
/// ```swift
/// PostgresType(oid: 23) == .int4          // true
/// PostgresType.int4Array.elementType      // .int4
/// ```
///
/// Other types (enums, domains, composites, extensions) have OIDs assigned
/// per database; their values render as JSON strings.
public struct PostgresType: Sendable, Hashable, CustomStringConvertible {
    /// The type's OID, as in `pg_type.oid` and libpq's `PQftype`.
    public var oid: UInt32

    /// The type with the given OID.
    public init(oid: UInt32) {
        self.oid = oid
    }

    /// The OID in decimal.
    public var description: String { String(oid) }

    // MARK: - Scalars

    /// `bool`, OID 16.
    public static let bool = PostgresType(oid: 16)
    /// `bytea`, OID 17.
    public static let bytea = PostgresType(oid: 17)
    /// `"char"`, OID 18.
    public static let char = PostgresType(oid: 18)
    /// `name`, OID 19.
    public static let name = PostgresType(oid: 19)
    /// `int8`, OID 20.
    public static let int8 = PostgresType(oid: 20)
    /// `int2`, OID 21.
    public static let int2 = PostgresType(oid: 21)
    /// `int4`, OID 23.
    public static let int4 = PostgresType(oid: 23)
    /// `regproc`, OID 24.
    public static let regproc = PostgresType(oid: 24)
    /// `text`, OID 25.
    public static let text = PostgresType(oid: 25)
    /// `oid`, OID 26.
    public static let oid = PostgresType(oid: 26)
    /// `tid`, OID 27.
    public static let tid = PostgresType(oid: 27)
    /// `xid`, OID 28.
    public static let xid = PostgresType(oid: 28)
    /// `cid`, OID 29.
    public static let cid = PostgresType(oid: 29)
    /// `json`, OID 114.
    public static let json = PostgresType(oid: 114)
    /// `xml`, OID 142.
    public static let xml = PostgresType(oid: 142)
    /// `point`, OID 600.
    public static let point = PostgresType(oid: 600)
    /// `box`, OID 603.
    public static let box = PostgresType(oid: 603)
    /// `cidr`, OID 650.
    public static let cidr = PostgresType(oid: 650)
    /// `float4`, OID 700.
    public static let float4 = PostgresType(oid: 700)
    /// `float8`, OID 701.
    public static let float8 = PostgresType(oid: 701)
    /// `money`, OID 790.
    public static let money = PostgresType(oid: 790)
    /// `macaddr`, OID 829.
    public static let macaddr = PostgresType(oid: 829)
    /// `inet`, OID 869.
    public static let inet = PostgresType(oid: 869)
    /// `char(n)`, OID 1042.
    public static let bpchar = PostgresType(oid: 1042)
    /// `varchar`, OID 1043.
    public static let varchar = PostgresType(oid: 1043)
    /// `date`, OID 1082.
    public static let date = PostgresType(oid: 1082)
    /// `time`, OID 1083.
    public static let time = PostgresType(oid: 1083)
    /// `timestamp`, OID 1114.
    public static let timestamp = PostgresType(oid: 1114)
    /// `timestamptz`, OID 1184.
    public static let timestamptz = PostgresType(oid: 1184)
    /// `interval`, OID 1186.
    public static let interval = PostgresType(oid: 1186)
    /// `timetz`, OID 1266.
    public static let timetz = PostgresType(oid: 1266)
    /// `bit`, OID 1560.
    public static let bit = PostgresType(oid: 1560)
    /// `varbit`, OID 1562.
    public static let varbit = PostgresType(oid: 1562)
    /// `numeric`, OID 1700.
    public static let numeric = PostgresType(oid: 1700)
    /// `regclass`, OID 2205.
    public static let regclass = PostgresType(oid: 2205)
    /// `uuid`, OID 2950.
    public static let uuid = PostgresType(oid: 2950)
    /// `jsonb`, OID 3802.
    public static let jsonb = PostgresType(oid: 3802)
    /// `unknown`, OID 705.
    public static let unknown = PostgresType(oid: 705)

    // MARK: - Arrays

    /// `bool[]`, OID 1000.
    public static let boolArray = PostgresType(oid: 1000)
    /// `bytea[]`, OID 1001.
    public static let byteaArray = PostgresType(oid: 1001)
    /// `"char"[]`, OID 1002.
    public static let charArray = PostgresType(oid: 1002)
    /// `name[]`, OID 1003.
    public static let nameArray = PostgresType(oid: 1003)
    /// `int8[]`, OID 1016.
    public static let int8Array = PostgresType(oid: 1016)
    /// `int2[]`, OID 1005.
    public static let int2Array = PostgresType(oid: 1005)
    /// `int4[]`, OID 1007.
    public static let int4Array = PostgresType(oid: 1007)
    /// `regproc[]`, OID 1008.
    public static let regprocArray = PostgresType(oid: 1008)
    /// `text[]`, OID 1009.
    public static let textArray = PostgresType(oid: 1009)
    /// `oid[]`, OID 1028.
    public static let oidArray = PostgresType(oid: 1028)
    /// `tid[]`, OID 1010.
    public static let tidArray = PostgresType(oid: 1010)
    /// `xid[]`, OID 1011.
    public static let xidArray = PostgresType(oid: 1011)
    /// `cid[]`, OID 1012.
    public static let cidArray = PostgresType(oid: 1012)
    /// `json[]`, OID 199.
    public static let jsonArray = PostgresType(oid: 199)
    /// `xml[]`, OID 143.
    public static let xmlArray = PostgresType(oid: 143)
    /// `point[]`, OID 1017.
    public static let pointArray = PostgresType(oid: 1017)
    /// `box[]`, OID 1020.
    public static let boxArray = PostgresType(oid: 1020)
    /// `cidr[]`, OID 651.
    public static let cidrArray = PostgresType(oid: 651)
    /// `float4[]`, OID 1021.
    public static let float4Array = PostgresType(oid: 1021)
    /// `float8[]`, OID 1022.
    public static let float8Array = PostgresType(oid: 1022)
    /// `money[]`, OID 791.
    public static let moneyArray = PostgresType(oid: 791)
    /// `macaddr[]`, OID 1040.
    public static let macaddrArray = PostgresType(oid: 1040)
    /// `inet[]`, OID 1041.
    public static let inetArray = PostgresType(oid: 1041)
    /// `char(n)[]`, OID 1014.
    public static let bpcharArray = PostgresType(oid: 1014)
    /// `varchar[]`, OID 1015.
    public static let varcharArray = PostgresType(oid: 1015)
    /// `date[]`, OID 1182.
    public static let dateArray = PostgresType(oid: 1182)
    /// `time[]`, OID 1183.
    public static let timeArray = PostgresType(oid: 1183)
    /// `timestamp[]`, OID 1115.
    public static let timestampArray = PostgresType(oid: 1115)
    /// `timestamptz[]`, OID 1185.
    public static let timestamptzArray = PostgresType(oid: 1185)
    /// `interval[]`, OID 1187.
    public static let intervalArray = PostgresType(oid: 1187)
    /// `timetz[]`, OID 1270.
    public static let timetzArray = PostgresType(oid: 1270)
    /// `bit[]`, OID 1561.
    public static let bitArray = PostgresType(oid: 1561)
    /// `varbit[]`, OID 1563.
    public static let varbitArray = PostgresType(oid: 1563)
    /// `numeric[]`, OID 1231.
    public static let numericArray = PostgresType(oid: 1231)
    /// `regclass[]`, OID 2210.
    public static let regclassArray = PostgresType(oid: 2210)
    /// `uuid[]`, OID 2951.
    public static let uuidArray = PostgresType(oid: 2951)
    /// `jsonb[]`, OID 3807.
    public static let jsonbArray = PostgresType(oid: 3807)

    /// The element type of a built-in array type, `nil` for other types.
    ///
    /// ```swift
    /// PostgresType.textArray.elementType   // .text
    /// PostgresType.text.elementType        // nil
    /// ```
    public var elementType: PostgresType? {
        Self.elementTypes[self]
    }

    private static let elementTypes: [PostgresType: PostgresType] = [
        boolArray: bool, byteaArray: bytea, charArray: char, nameArray: name,
        int8Array: int8, int2Array: int2, int4Array: int4, regprocArray: regproc,
        textArray: text, oidArray: oid, tidArray: tid, xidArray: xid, cidArray: cid,
        jsonArray: json, xmlArray: xml, pointArray: point, boxArray: box,
        cidrArray: cidr, float4Array: float4, float8Array: float8, moneyArray: money,
        macaddrArray: macaddr, inetArray: inet, bpcharArray: bpchar, varcharArray: varchar,
        dateArray: date, timeArray: time, timestampArray: timestamp,
        timestamptzArray: timestamptz, intervalArray: interval, timetzArray: timetz,
        bitArray: bit, varbitArray: varbit, numericArray: numeric, regclassArray: regclass,
        uuidArray: uuid, jsonbArray: jsonb,
    ]

    /// The character between elements in the type's array text: `;` for
    /// `box` (whose values contain commas), `,` for every other built-in type.
    public var arrayDelimiter: UInt8 {
        self == .box ? UInt8(ascii: ";") : UInt8(ascii: ",")
    }
}
