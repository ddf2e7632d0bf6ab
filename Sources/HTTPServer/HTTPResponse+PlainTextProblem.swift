// MARK: - Problems as plain text for clients that ask for it

extension HTTPResponse {
    /// This problem document as its `detail` alone, `text/plain`, with the
    /// same status and header fields, when `requestHeaders` prefer plain
    /// text to JSON (``prefersPlainText(_:)``); the response as it is
    /// otherwise, or when it is no problem document held in full.
    ///
    /// Some clients show their users only a plain-text error body
    /// (HTTP-RPC's Java client, for one); every other client keeps the
    /// RFC 9457 document, the default.
    ///
    /// ```swift
    /// HTTPError(.notFound, detail: "No such employee.").response.problemAsPlainText(for: ["Accept": "text/plain"])
    /// // 404, Content-Type: text/plain; charset=utf-8, body "No such employee."
    /// ```
    public func problemAsPlainText(for requestHeaders: HTTPHeaders) -> HTTPResponse {
        guard status.code >= 400, case .bytes(let document) = body, headers["Content-Type"] == "application/problem+json",
            headers["Content-Encoding"] == nil, Self.prefersPlainText(requestHeaders), let detail = Self.detail(ofProblem: document)
        else { return self }
        var response = self
        response.headers["Content-Type"] = "text/plain; charset=utf-8"
        response.body = .bytes(Array(detail.utf8))
        return response
    }

    /// Whether `Accept` rates `text/plain` above every JSON type a problem
    /// could be (`application/problem+json`, `application/json`), each
    /// rated by its most specific media range (`text/plain`, then `text/*`,
    /// then `*/*`; `q` 1 unless given). Without `Accept`, or with `*/*`
    /// alone, JSON stays.
    ///
    /// ```swift
    /// HTTPResponse.prefersPlainText(["Accept": "text/plain"])                         // true
    /// HTTPResponse.prefersPlainText(["Accept": "text/plain;q=0.5, application/json"]) // false
    /// ```
    public static func prefersPlainText(_ requestHeaders: HTTPHeaders) -> Bool {
        let values = requestHeaders.values(for: "Accept")
        guard !values.isEmpty else { return false }
        var ranges: [(type: Substring, subtype: Substring, quality: Double)] = []
        for value in values {
            for item in value.split(separator: ",") {
                let parts = item.split(separator: ";")
                guard let range = parts.first else { continue }
                let names = range.split(separator: "/")
                guard names.count == 2 else { continue }
                var quality = 1.0
                for parameter in parts.dropFirst() {
                    let text = parameter.drop { $0 == " " || $0 == "\t" }
                    if text.lowercased().hasPrefix("q=") { quality = Double(text.dropFirst(2).filter { $0 != " " }) ?? 0 }
                }
                ranges.append((trimmed(names[0]), trimmed(names[1]), quality))
            }
        }
        func quality(_ type: String, _ subtype: String) -> Double {
            var best: (specificity: Int, quality: Double) = (-1, 0)
            for range in ranges {
                let specificity: Int
                if range.type.lowercased() == type, range.subtype.lowercased() == subtype {
                    specificity = 2
                } else if range.type.lowercased() == type, range.subtype == "*" {
                    specificity = 1
                } else if range.type == "*", range.subtype == "*" {
                    specificity = 0
                } else {
                    continue
                }
                if specificity > best.specificity { best = (specificity, range.quality) }
            }
            return best.quality
        }
        let plain = quality("text", "plain")
        return plain > 0 && plain > max(quality("application", "problem+json"), quality("application", "json"))
    }

    private static func trimmed(_ text: Substring) -> Substring {
        var text = text
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }

    /// The `detail` string of a problem document as ``HTTPError`` writes
    /// it (`{"type":…,"title":…,"status":…,"detail":"…"`): the first
    /// `"detail":"` in it is that member, since a quote inside a string is
    /// escaped. `nil` when there is none or it does not end.
    static func detail(ofProblem document: [UInt8]) -> String? {
        let key = Array(#""detail":""#.utf8)
        guard let start = document.indices.first(where: { document[$0...].starts(with: key) }) else { return nil }
        var bytes: [UInt8] = []
        var index = start + key.count
        var pendingHighSurrogate: UInt32?
        func appendScalar(_ value: UInt32) {
            if let scalar = Unicode.Scalar(value) { bytes += Array(String(Character(scalar)).utf8) }
        }
        while index < document.count {
            let byte = document[index]
            if byte == UInt8(ascii: "\"") { return String(decoding: bytes, as: UTF8.self) }
            guard byte == UInt8(ascii: "\\") else {
                bytes.append(byte)
                index += 1
                continue
            }
            guard index + 1 < document.count else { return nil }
            let escaped = document[index + 1]
            index += 2
            switch escaped {
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "u"):
                guard index + 4 <= document.count,
                    let value = UInt32(String(decoding: document[index..<index + 4], as: UTF8.self), radix: 16)
                else { return nil }
                index += 4
                if (0xD800...0xDBFF).contains(value) {
                    pendingHighSurrogate = value
                } else if (0xDC00...0xDFFF).contains(value), let high = pendingHighSurrogate {
                    appendScalar(0x10000 + ((high - 0xD800) << 10) + (value - 0xDC00))
                    pendingHighSurrogate = nil
                } else {
                    appendScalar(value)
                }
            default: bytes.append(escaped)  // `"`, `\`, `/`
            }
        }
        return nil
    }
}
