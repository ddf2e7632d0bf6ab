import Foundation

// libFuzzer target for the strict JSON parser of request bodies
// (`JSONValue.parse`): built with JSONValue.swift and JSONValue+Parsing.swift
// by `scripts/fuzz json SECONDS` (not a package target).

/// Parses the input and traps when an invariant breaks: what the strict
/// parser accepts Foundation accepts too, and writing the value back out
/// and parsing that gives the same value; what it rejects is a `ParseError`
/// at an offset within the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func jsonBodyFuzzer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let value: JSONValue
    do {
        value = try JSONValue.parse(bytes)
    } catch {
        precondition(error.offset >= 0 && error.offset <= bytes.count, "offset \(error.offset) outside the input")
        return 0
    }
    precondition((try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) != nil,
                 "accepted what Foundation rejects: \(String(decoding: bytes, as: UTF8.self))")
    let written = Array(value.jsonText.utf8)
    guard let again = try? JSONValue.parse(written) else {
        preconditionFailure("its own output does not parse: \(value.jsonText)")
    }
    precondition(again == value || value.containsNonRoundTrippingNumber, "round trip changed \(value.jsonText)")
    return 0
}

extension JSONValue {
    /// A double written with 17 significant digits can come back as an
    /// integer (`1e2` is written `100.0`... or `100`): compare loosely there.
    var containsNonRoundTrippingNumber: Bool {
        switch self {
        case .number: true
        case .array(let elements): elements.contains { $0.containsNonRoundTrippingNumber }
        case .object(let members): members.contains { $0.value.containsNonRoundTrippingNumber }
        default: false
        }
    }
}
