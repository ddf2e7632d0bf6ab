import Foundation
import HTTPTestClient
import Testing
@testable import PostgreSQL
@testable import PostgreSQLWebService

/// Renders PostgreSQL's own text output of many values of every type and
/// compares the JSON with `to_json(v)`, or, where this project differs on
/// purpose, with a SQL expression giving the documented result. The text
/// comes from `psql` (this test does not depend on the connection layer).
@Suite("PostgresJSON against PostgreSQL")
struct PostgresJSONDatabaseTests {
    struct Case {
        /// A SQL expression for the value `v`.
        var value: String
        /// A SQL expression over `v` giving the expected JSON.
        var expected = "to_json(v)"
        /// Whether to check epoch milliseconds too (`date`, `timestamp`, `timestamptz`).
        var hasEpoch = false
    }

    static let nullForNonFinite = "CASE WHEN v::text IN ('NaN', 'Infinity', '-Infinity') THEN 'null'::json ELSE to_json(v) END"
    static let base64 = "to_json(translate(encode(v, 'base64'), E'\\n', ''))"

    static let cases: [Case] = [
        // Numbers
        Case(value: "0::int2"), Case(value: "(-32768)::int2"), Case(value: "32767::int2"),
        Case(value: "10004::int4"), Case(value: "(-2147483648)::int4"),
        Case(value: "9223372036854775807::int8"), Case(value: "(-9223372036854775808)::int8"),
        Case(value: "4294967295::oid", expected: "to_json(v::text::numeric)"),
        Case(value: "0::numeric"), Case(value: "123.4500::numeric"), Case(value: "(-0.000001)::numeric"),
        Case(value: "1e30::numeric"), Case(value: "12345678901234567890.123456789::numeric"),
        Case(value: "'NaN'::numeric", expected: nullForNonFinite),
        Case(value: "'Infinity'::numeric", expected: nullForNonFinite),
        Case(value: "'-Infinity'::numeric", expected: nullForNonFinite),
        Case(value: "1.5::float4"), Case(value: "(-0.1)::float4"), Case(value: "3.4e38::float4"), Case(value: "1e-45::float4"),
        Case(value: "'NaN'::float4", expected: nullForNonFinite),
        Case(value: "'Infinity'::float4", expected: nullForNonFinite),
        Case(value: "0.1::float8"), Case(value: "1e300::float8"), Case(value: "(-1e-300)::float8"), Case(value: "'-0'::float8"),
        Case(value: "(1/3.0)::float8"), Case(value: "123456789012345678::float8"),
        Case(value: "'NaN'::float8", expected: nullForNonFinite),
        Case(value: "'Infinity'::float8", expected: nullForNonFinite),
        Case(value: "'-Infinity'::float8", expected: nullForNonFinite),
        // Booleans and JSON
        Case(value: "true"), Case(value: "false"),
        Case(value: #"'{"a": [1, 2.5, null], "b": "x\u00e9"}'::json"#), Case(value: "'  [1,\n 2]  '::json"),
        Case(value: #"'"s"'::json"#), Case(value: "'null'::json"), Case(value: "'1e5'::json"),
        Case(value: #"'{"b": 1, "a": [true, {"c": "\u0001"}]}'::jsonb"#), Case(value: "'-0.50'::jsonb"),
        // Dates and times
        Case(value: "'2024-05-01'::date", hasEpoch: true), Case(value: "'1900-02-28'::date", hasEpoch: true),
        Case(value: "'1969-12-31'::date", hasEpoch: true), Case(value: "'9999-12-31'::date", hasEpoch: true),
        Case(value: "'10000-01-01'::date", hasEpoch: true), Case(value: "'0044-03-15 BC'::date", hasEpoch: true),
        Case(value: "'infinity'::date", hasEpoch: true), Case(value: "'-infinity'::date", hasEpoch: true),
        Case(value: "'2024-05-01 10:00:00'::timestamp", hasEpoch: true),
        Case(value: "'2024-05-01 10:00:00.123456'::timestamp", hasEpoch: true),
        Case(value: "'2000-01-01 00:00:00.5'::timestamp", hasEpoch: true),
        Case(value: "'1969-12-31 23:59:59.999999'::timestamp", hasEpoch: true),
        Case(value: "'0044-03-15 10:00:00 BC'::timestamp", hasEpoch: true),
        Case(value: "'infinity'::timestamp", hasEpoch: true), Case(value: "'-infinity'::timestamp", hasEpoch: true),
        Case(value: "'2024-05-01 10:00:00+00'::timestamptz", hasEpoch: true),
        Case(value: "'2024-01-15 10:00:00.25+02'::timestamptz", hasEpoch: true),
        Case(value: "'1850-01-01 00:00:00+00'::timestamptz", hasEpoch: true),
        Case(value: "'1900-01-01 00:00:00+00'::timestamptz", hasEpoch: true),
        Case(value: "'0044-03-15 10:00:00+00 BC'::timestamptz", hasEpoch: true),
        Case(value: "'infinity'::timestamptz", hasEpoch: true), Case(value: "'-infinity'::timestamptz", hasEpoch: true),
        Case(value: "'5874897-12-31'::date", hasEpoch: true), Case(value: "'4713-01-01 BC'::date", hasEpoch: true),
        Case(value: "'294276-12-31 23:59:59'::timestamp", hasEpoch: true),
        Case(value: "'4713-01-01 00:00:00 BC'::timestamp", hasEpoch: true),
        Case(value: "'294276-12-31 23:59:59+00'::timestamptz", hasEpoch: true),
        Case(value: "'10:00:00'::time"), Case(value: "'23:59:59.999999'::time"),
        Case(value: "'10:00:00+02'::timetz"), Case(value: "'10:00:00-05:30'::timetz"),
        Case(value: "'1 year 2 mons 3 days 04:05:06.5'::interval"), Case(value: "'-1 day'::interval"), Case(value: "'0'::interval"),
        // Strings
        Case(value: "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid"),
        Case(value: "'plain'::text"), Case(value: "''::text"),
        Case(value: #"E'quote " backslash \\ newline \n tab \t cr \r'::text"#),
        Case(value: "chr(1) || chr(8) || chr(12) || chr(31) || chr(127)"),
        Case(value: "'é✓😀 Ünïcødé'::text"), Case(value: "'</script>'::varchar"),
        Case(value: "'ab'::char(5)"), Case(value: "'pg_class'::name"), Case(value: "'x'::\"char\""),
        Case(value: "'192.168.0.1/24'::inet"), Case(value: "'10.0.0.0/8'::cidr"), Case(value: "'08:00:2b:01:02:03'::macaddr"),
        Case(value: "1.5::money"), Case(value: "'<a>x</a>'::xml"), Case(value: "point(1.5, 2)"), Case(value: "box '(1,2),(3,4)'"),
        Case(value: "B'1011'::bit(4)"), Case(value: "B'10'::varbit"), Case(value: "int4range(1, 5)"),
        Case(value: "'a fat cat'::tsvector"), Case(value: "'pg_class'::regclass"),
        // bytea
        Case(value: #"'\x'::bytea"#, expected: base64), Case(value: #"'\x0102ff'::bytea"#, expected: base64),
        Case(value: "'abc'::bytea", expected: base64), Case(value: "decode(repeat('00ff7f80', 40), 'hex')", expected: base64),
        // Arrays
        Case(value: "'{1,2,NULL}'::int4[]"), Case(value: "'{{1,2},{3,4}}'::int4[]"), Case(value: "'[0:1]={7,8}'::int4[]"),
        Case(value: "'{}'::int4[]"), Case(value: "'{{{1,2}},{{3,NULL}}}'::int2[]"), Case(value: "'{1,-9223372036854775808}'::int8[]"),
        Case(value: #"ARRAY['a b', 'c"d', E'e\\f', NULL, 'NULL', '', '{}', ',', ' x ', E'\n']::text[]"#),
        Case(value: "ARRAY[['a', 'b'], ['c', NULL]]::text[]"),
        Case(value: "ARRAY['x', 'y,z']::varchar[]"), Case(value: "ARRAY['ab']::char(3)[]"), Case(value: "ARRAY['pg_class']::name[]"),
        Case(value: "ARRAY['2024-05-01'::date, 'infinity', NULL, '0044-03-15 BC']"),
        Case(value: "ARRAY['2024-05-01 10:00:00.5'::timestamp, NULL, '-infinity']"),
        Case(value: "ARRAY['2024-05-01 10:00:00+00'::timestamptz, '1850-01-01 00:00:00+00']"),
        Case(value: "ARRAY['10:00'::time]"), Case(value: "ARRAY['10:00+02'::timetz]"),
        Case(value: "ARRAY['1 day'::interval, NULL]"),
        Case(value: "ARRAY[true, false, NULL]"),
        Case(
            value: "ARRAY[0.1, 'NaN', 'Infinity', NULL]::float8[]",
            expected: "to_json(ARRAY(SELECT CASE WHEN x = 'NaN' OR x = 'Infinity' THEN NULL ELSE x END FROM unnest(v) AS x))"),
        Case(value: "ARRAY[1.5, 2]::float4[]"),
        Case(
            value: "ARRAY[1.50, NULL, 'NaN']::numeric[]",
            expected: "to_json(ARRAY(SELECT CASE WHEN x = 'NaN' THEN NULL ELSE x END FROM unnest(v) AS x))"),
        Case(value: #"ARRAY['{"a": 1}'::jsonb, '[2]', NULL, '"s"']"#),
        Case(value: #"ARRAY['{"a" : "x\"y"}'::json]"#),
        Case(value: "ARRAY['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, NULL]"),
        Case(
            value: #"ARRAY['\x0102'::bytea, NULL, '\x']"#,
            expected: "to_json(ARRAY(SELECT translate(encode(x, 'base64'), E'\\n', '') FROM unnest(v) AS x))"),
        Case(value: "ARRAY[box '(1,2),(3,4)', box '(0,0),(1,1)']"),
        Case(value: "ARRAY[point(1, 2)]"), Case(value: "ARRAY['192.168.0.1'::inet]"),
        Case(value: "ARRAY[1, 4294967295]::oid[]", expected: "to_json(v::text::numeric[])"),
    ]

    static let timeZones = ["UTC", "Asia/Kolkata", "America/St_Johns", "Europe/Amsterdam"]

    @Test(arguments: timeZones)
    func renderingMatchesPostgreSQL(timeZone: String) throws {
        let environment = ProcessInfo.processInfo.environment
        guard ["PGHOST", "PGPORT", "PGDATABASE", "DATABASE_URL"].contains(where: { environment[$0] != nil }) else {
            Issue.record(
                """
                PostgreSQL is not configured: set the PG* variables, e.g. \
                PGCLUSTER_PORT=54329 scripts/pg-cluster start && eval "$(PGCLUSTER_PORT=54329 scripts/pg-cluster env)"
                """)
            return
        }
        let rows = try Self.query(timeZone: timeZone)
        #expect(rows.count == Self.cases.count)
        for row in rows {
            let testCase = Self.cases[row.index]
            let text = row.text
            for (options, expectedJSON) in [
                (JSONRenderingOptions(), row.expected), (JSONRenderingOptions(dateFormat: .epochMilliseconds), row.epochExpected),
            ] {
                guard let expectedJSON else { continue }
                var output: [UInt8] = []
                text.withUnsafeBytes { PostgresJSON.append($0, typeOID: row.typeOID, to: &output, options: options) }
                let rendered = String(decoding: output, as: UTF8.self)
                let canonical = Self.canonical(rendered)
                #expect(canonical != nil, "invalid JSON \(rendered) for \(testCase.value)")
                #expect(
                    canonical == Self.canonical(expectedJSON),
                    "\(testCase.value) in \(timeZone) (\(options.dateFormat)): text \(String(decoding: text, as: UTF8.self)) rendered \(rendered), expected \(expectedJSON)"
                )
            }
        }
    }

    // MARK: - psql

    struct Row {
        var index: Int
        var typeOID: UInt32
        var text: [UInt8]
        var expected: String
        var epochExpected: String?
    }

    /// One query for all cases: the type OID, the output function's text
    /// (`format('%s', v)`) and the expected JSON, hex-encoded so that any
    /// byte survives psql's output.
    static func query(timeZone: String) throws -> [Row] {
        func hex(_ expression: String) -> String { "encode(convert_to((\(expression))::text, 'UTF8'), 'hex')" }
        let selects = cases.enumerated().map { index, testCase in
            let epoch =
                testCase.hasEpoch
                ? "CASE WHEN isfinite(v) THEN (floor(extract(epoch FROM v) * 1000)::int8)::text ELSE to_json(v::text)::text END"
                : "NULL"
            return
                "SELECT \(index), pg_typeof(v)::oid, \(hex("format('%s', v)")), \(hex(testCase.expected)), \(hex(epoch)) FROM (SELECT \(testCase.value) AS v) AS s"
        }
        let sql = selects.joined(separator: "\nUNION ALL ") + "\nORDER BY 1;\n"

        let psql = try ToolProcess.outcome(
            "/usr/bin/env", ["psql", "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-F", "|", "-f", "-"], input: Data(sql.utf8),
            environment: ["PGOPTIONS": "-c TimeZone=\(timeZone) -c DateStyle=ISO -c IntervalStyle=postgres -c extra_float_digits=1"])
        guard psql.status == 0 else {
            throw PSQLFailure(message: psql.errors)
        }
        return psql.text.split(separator: "\n").map { line in
            let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            return Row(
                index: Int(fields[0])!,
                typeOID: UInt32(fields[1])!,
                text: bytes(hex: fields[2]),
                expected: String(decoding: bytes(hex: fields[3]), as: UTF8.self),
                epochExpected: fields[4].isEmpty ? nil : String(decoding: bytes(hex: fields[4]), as: UTF8.self))
        }
    }

    struct PSQLFailure: Error, CustomStringConvertible {
        var message: String
        var description: String { "psql failed: \(message)" }
    }

    static func bytes(hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map {
            UInt8(String(decoding: digits[$0..<($0 + 2)], as: UTF8.self), radix: 16)!
        }
    }

    /// The JSON re-serialised with sorted keys, or `nil` if it is not JSON.
    static func canonical(_ json: String) -> String? {
        guard let value = try? JSONReader.value(json.utf8),
            let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])
        else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
