import Foundation

// libFuzzer target for the PostgreSQL array text parser
// (`PostgresJSON.appendArray`): built with the PostgresJSON files by
// `scripts/fuzz array SECONDS` (not a package target).

/// The first byte picks the element kind (any but `json`), the delimiter and the date
/// format; the rest is the array text. Traps when the output is not one
/// valid JSON document (an array, or a string for malformed text), or when
/// a well-formed one-dimensional array of plain words loses an element.
@_cdecl("LLVMFuzzerTestOneInput")
public func postgresArrayFuzzer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    // `json` elements are left out: they are copied as they are, PostgreSQL
    // having validated them, so only PostgreSQL's output makes sense there.
    let kinds: [PostgresJSON.Format.Kind] = [.number, .bool, .date, .timestamp, .timestamptz, .bytea, .string]
    let selector = Int(data[0])
    let kind = kinds[selector % kinds.count]
    let delimiter = selector & 0x40 == 0 ? UInt8(ascii: ",") : UInt8(ascii: ";")
    var options = JSONRenderingOptions()
    if selector & 0x80 != 0 { options.dateFormat = .epochMilliseconds }
    let text = UnsafeRawBufferPointer(start: data + 1, count: size - 1)

    var output: [UInt8] = []
    PostgresJSON.appendArray(text, elementKind: kind, delimiter: delimiter, to: &output, options: options)
    let parsed: Any
    do {
        parsed = try JSONSerialization.jsonObject(with: Data(output), options: [.fragmentsAllowed])
    } catch {
        // Numbers are copied as PostgreSQL printed them, exactly: one
        // beyond a Double's range (`5e5955`, or numeric's 131,072 digits)
        // is valid JSON (RFC 8259 leaves the range to each parser), which
        // Foundation declines. Anything else it rejects is a defect.
        let reason = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? ""
        precondition(kind == .number && reason.contains("is not representable"),
                     "not JSON: \(String(decoding: output, as: UTF8.self)) from \(String(decoding: text, as: UTF8.self)): \(reason)")
        return 0
    }
    precondition(parsed is NSArray || parsed is NSString, "neither an array nor a string")

    let bytes = Array(text)
    if kind == .string, bytes.count >= 2, bytes.first == UInt8(ascii: "{"), bytes.last == UInt8(ascii: "}") {
        let inner = bytes.dropFirst().dropLast()
        let words = inner.split(separator: delimiter, omittingEmptySubsequences: false)
        let plain = !inner.isEmpty && words.allSatisfy { word in
            !word.isEmpty && word.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }
        }
        if plain {
            let elements = (parsed as? [Any]) ?? []
            precondition(elements.count == words.count, "\(String(decoding: bytes, as: UTF8.self)) → \(String(decoding: output, as: UTF8.self))")
            for (word, element) in zip(words, elements) {
                let text = String(decoding: word, as: UTF8.self)
                precondition(text == "null" ? element is NSNull : element as? String == text, "element \(text) changed")
            }
        }
    }
    return 0
}
