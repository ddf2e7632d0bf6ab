/// The decoded request target (`/employees/10004?fields=name`): path and
/// query, parsed from the raw bytes of the request line.
///
/// Decoding is strict: a `%` not followed by two hex digits, bytes that are
/// not UTF-8 or a decoded NUL byte make the whole request a 400, so handlers
/// only ever see valid strings.
///
/// ```swift
/// let target = try RequestTarget(parsing: Array("/a/b%20c?x=1+2".utf8))
/// target.pathSegments   // ["a", "b c"]
/// target.queryItems     // [QueryItem(name: "x", value: "1 2")]
/// ```
struct RequestTarget: Sendable {
    var rawPath: String
    var pathSegments: [String]
    var rawQuery: String?
    var queryItems: [QueryItem]

    init(parsing raw: [UInt8]) throws(HTTPError) {
        var path = raw[...]
        var query: ArraySlice<UInt8>?
        if let mark = raw.firstIndex(of: UInt8(ascii: "?")) {
            path = raw[..<mark]
            query = raw[(mark + 1)...]
        }
        if let fragment = query?.firstIndex(of: UInt8(ascii: "#")) {
            query = query?[..<fragment]
        }
        path = Self.droppingSchemeAndAuthority(path)

        guard let rawPath = PercentDecoding.utf8String(path),
            let rawQuery = query.map(PercentDecoding.utf8String) ?? .some(nil)
        else {
            throw HTTPError(.badRequest, detail: "The request target is not valid UTF-8.")
        }
        self.rawPath = rawPath
        self.rawQuery = rawQuery
        self.pathSegments = try Self.decodePath(path)
        self.queryItems = try query.map { query throws(HTTPError) in try Self.decodeQuery(query) } ?? []
    }

    // MARK: - Path

    private static func decodePath(_ path: ArraySlice<UInt8>) throws(HTTPError) -> [String] {
        var segments: [String] = []
        // Room for the usual few segments at once: growing from empty took
        // two allocations for `/employees/10001`.
        segments.reserveCapacity(4)
        var start = path.startIndex
        while start < path.endIndex {
            let end = path[start...].firstIndex(of: UInt8(ascii: "/")) ?? path.endIndex
            if end > start {
                do {
                    segments.append(try PercentDecoding.decode(path[start..<end], plusIsSpace: false))
                } catch {
                    throw HTTPError(.badRequest, detail: "The request path \(error.explanation).")
                }
            }
            start = end + 1
        }
        return segments
    }

    /// An absolute-form target (`http://host:8080/path`, from proxies) is
    /// reduced to its path.
    private static func droppingSchemeAndAuthority(_ path: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard path.first != UInt8(ascii: "/"),
            let colon = path.firstIndex(of: UInt8(ascii: ":")),
            path[colon...].starts(with: "://".utf8)
        else { return path }
        let authority = path[(colon + 3)...]
        guard let slash = authority.firstIndex(of: UInt8(ascii: "/")) else { return [] }
        return path[slash...]
    }

    // MARK: - Query

    private static func decodeQuery(_ query: ArraySlice<UInt8>) throws(HTTPError) -> [QueryItem] {
        var items: [QueryItem] = []
        // Pairs are found in place, not through `split`, which allocated
        // an array of them per request.
        var start = query.startIndex
        while start < query.endIndex {
            let end = query[start...].firstIndex(of: UInt8(ascii: "&")) ?? query.endIndex
            let pair = query[start..<end]
            start = end + 1
            if pair.isEmpty { continue }
            let equals = pair.firstIndex(of: UInt8(ascii: "="))
            let rawName = equals.map { pair[..<$0] } ?? pair
            let rawValue = equals.map { pair[($0 + 1)...] } ?? []
            let name: String
            do {
                name = try PercentDecoding.decode(rawName, plusIsSpace: true)
            } catch {
                let shown = String(decoding: rawName, as: UTF8.self)
                throw HTTPError(
                    .badRequest,
                    detail: "The name of query parameter \"\(shown)\" \(error.explanation).",
                    parameter: shown
                )
            }
            do {
                items.append(QueryItem(name: name, value: try PercentDecoding.decode(rawValue, plusIsSpace: true)))
            } catch {
                throw HTTPError(
                    .badRequest,
                    detail: "The value of query parameter \"\(name)\" \(error.explanation).",
                    parameter: name
                )
            }
        }
        return items
    }
}

// MARK: - Percent decoding

/// Strict `%HH` decoding into a UTF-8 string.
enum PercentDecoding {
    enum Failure: Error {
        case malformedEscape
        case invalidUTF8
        case nulByte

        var explanation: String {
            switch self {
            case .malformedEscape: "has a malformed percent-escape (\"%\" must be followed by two hex digits)"
            case .invalidUTF8: "is not valid UTF-8 once percent-decoded"
            case .nulByte: "contains a NUL byte"
            }
        }
    }

    /// Decodes `bytes`; with `plusIsSpace`, `+` stands for a space (query
    /// strings and form bodies).
    static func decode(_ bytes: ArraySlice<UInt8>, plusIsSpace: Bool) throws(Failure) -> String {
        if let plain = bytes.withUnsafeBufferPointer({ plainASCII($0, plusIsSpace: plusIsSpace) }) {
            return plain
        }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "%"):
                guard index + 2 < bytes.endIndex,
                    let high = hexValue(bytes[index + 1]),
                    let low = hexValue(bytes[index + 2])
                else { throw .malformedEscape }
                decoded.append(high << 4 | low)
                index += 3
            case UInt8(ascii: "+") where plusIsSpace:
                decoded.append(UInt8(ascii: " "))
                index += 1
            default:
                decoded.append(byte)
                index += 1
            }
        }
        if decoded.contains(0) { throw .nulByte }
        guard let string = String(validating: decoded, as: UTF8.self) else { throw .invalidUTF8 }
        return string
    }

    /// The text of `bytes` if they need no decoding (ASCII without NUL,
    /// `%`, or `+` when it stands for a space), the common case; `nil`
    /// otherwise.
    private static func plainASCII(_ bytes: UnsafeBufferPointer<UInt8>, plusIsSpace: Bool) -> String? {
        for byte in bytes {
            if byte == 0 || byte >= 0x80 || byte == UInt8(ascii: "%") || (plusIsSpace && byte == UInt8(ascii: "+")) {
                return nil
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `bytes` as a string if they are valid UTF-8 (ASCII is checked
    /// first, without the general validation).
    static func utf8String(_ bytes: ArraySlice<UInt8>) -> String? {
        bytes.withUnsafeBufferPointer { buffer in
            buffer.allSatisfy { $0 < 0x80 }
                ? String(decoding: buffer, as: UTF8.self)
                : String(validating: buffer, as: UTF8.self)
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
