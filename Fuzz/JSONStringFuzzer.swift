import Foundation

// libFuzzer target for `JSONWriter.appendString(utf8:to:)`: built with
// JSONWriter.swift by `scripts/fuzz jsonstring SECONDS` (not a package target).

/// Writes the input bytes as a JSON string and traps when an invariant
/// breaks: the output is one valid JSON string (Foundation parses it)
/// with no raw control character; valid UTF-8 round-trips exactly;
/// invalid UTF-8 comes back with U+FFFD in place of the bad bytes and
/// every valid character kept; and
/// `appendString(_:)` of a Swift string writes the same bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func jsonStringFuzzer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    var output: [UInt8] = []
    JSONWriter.appendString(utf8: input, to: &output)

    precondition(output.first == UInt8(ascii: "\"") && output.last == UInt8(ascii: "\"") && output.count >= 2)
    precondition(!output.contains { $0 < 0x20 }, "raw control character")
    precondition(String(validating: output, as: UTF8.self) != nil, "output is not UTF-8")
    guard let parsed = try? JSONSerialization.jsonObject(with: Data(output), options: [.fragmentsAllowed]) as? String else {
        preconditionFailure("not a JSON string: \(String(decoding: output, as: UTF8.self))")
    }
    if let text = String(validating: input, as: UTF8.self) {
        precondition(parsed == text, "valid UTF-8 did not round-trip")
        var viaString: [UInt8] = []
        JSONWriter.appendString(text, to: &viaString)
        precondition(viaString == output, "appendString(_:) and appendString(utf8:) differ")
    } else {
        precondition(parsed.unicodeScalars.contains("\u{FFFD}"), "invalid UTF-8 without U+FFFD")
        // One U+FFFD per bad byte or per maximal bad subsequence (Swift's
        // choice) are both allowed; the valid characters must all be kept.
        let kept = parsed.unicodeScalars.filter { $0 != "\u{FFFD}" }
        let expected = String(decoding: input, as: UTF8.self).unicodeScalars.filter { $0 != "\u{FFFD}" }
        precondition(kept.elementsEqual(expected), "valid characters around invalid UTF-8 changed")
    }
    return 0
}
