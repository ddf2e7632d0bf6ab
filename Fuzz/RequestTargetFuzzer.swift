// libFuzzer target for the request-target decoding (`RequestTarget`,
// `PercentDecoding`): built with HTTPServer's value-type files by
// `scripts/fuzz query SECONDS` (not a package target).

/// Decodes the input as a request target and traps when an invariant
/// breaks: a decoded target has valid, NUL-free strings; a rejection is a
/// 400; decoding the same bytes twice gives the same result; and a target
/// of plain characters decodes to itself.
@_cdecl("LLVMFuzzerTestOneInput")
public func requestTargetFuzzer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let raw = Array(UnsafeBufferPointer(start: data, count: size))
    let first: RequestTarget
    do {
        first = try RequestTarget(parsing: raw)
    } catch {
        precondition(error.status.code == 400, "rejected with \(error.status)")
        precondition(!error.problemJSON.isEmpty)
        return 0
    }
    let strings = first.pathSegments + first.queryItems.flatMap { [$0.name, $0.value] }
    for string in strings {
        precondition(!string.utf8.contains(0), "NUL in a decoded string")
    }
    precondition(first.pathSegments.allSatisfy { !$0.isEmpty }, "empty path segment")
    let second = try! RequestTarget(parsing: raw)
    precondition(second.pathSegments == first.pathSegments && second.queryItems == first.queryItems, "not deterministic")

    let plain = raw.allSatisfy { byte in
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || byte == UInt8(ascii: "/")
    }
    if plain, raw.first == UInt8(ascii: "/") {
        let expected = raw.split(separator: UInt8(ascii: "/")).map { String(decoding: $0, as: UTF8.self) }
        precondition(first.pathSegments == expected, "plain path changed")
    }
    // Form bodies use the same decoding, with `+` for a space.
    if let decoded = try? PercentDecoding.decode(raw[...], plusIsSpace: true) {
        precondition(!decoded.utf8.contains(0), "NUL in a decoded form value")
    }
    return 0
}
