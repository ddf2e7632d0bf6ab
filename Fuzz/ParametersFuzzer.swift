// libFuzzer target for `Parameters.parse`; built with the parser's source
// file by `scripts/fuzz parameters SECONDS` (not a package target).

/// Parses the input as SQL and traps when an invariant breaks: names are
/// distinct identifiers, no more than the input's colons, each placeholder
/// `$1 ... $n` appears in the output, and SQL without a colon is unchanged.
@_cdecl("LLVMFuzzerTestOneInput")
public func parametersFuzzer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let sql = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let parameters = Parameters.parse(sql)
    let colons = sql.utf8.count(where: { $0 == UInt8(ascii: ":") })
    precondition(parameters.names.count <= colons, "more names than colons")
    precondition(Set(parameters.names).count == parameters.names.count, "repeated name")
    for name in parameters.names {
        precondition(isValidName(name), "invalid name \(name)")
    }
    let output = Array(parameters.sql.utf8)
    for number in 1...max(1, parameters.names.count) where number <= parameters.names.count {
        precondition(containsPlaceholder(number, in: output), "placeholder $\(number) missing")
    }
    if colons == 0 {
        precondition(parameters.sql == sql, "SQL without parameters changed")
    }
    precondition(Parameters.parse(sql) == parameters, "not deterministic")
    return 0
}

func isValidName(_ name: String) -> Bool {
    guard let first = name.utf8.first, !(first >= 0x30 && first <= 0x39) else { return false }
    return name.utf8.allSatisfy { byte in
        byte >= 0x80 || byte == UInt8(ascii: "_") || (byte >= 0x30 && byte <= 0x39)
            || ((byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z"))
    }
}

/// Whether `$number` occurs, not followed by another digit.
func containsPlaceholder(_ number: Int, in output: [UInt8]) -> Bool {
    let placeholder = Array("$\(number)".utf8)
    guard output.count >= placeholder.count else { return false }
    for start in 0...(output.count - placeholder.count) where output[start] == UInt8(ascii: "$") {
        let end = start + placeholder.count
        if Array(output[start..<end]) == placeholder, end == output.count || !(output[end] >= 0x30 && output[end] <= 0x39) {
            return true
        }
    }
    return false
}
