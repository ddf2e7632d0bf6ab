/// An HTTP request method.
///
/// ```swift
/// if request.method == .get { ... }
/// ```
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let get = HTTPMethod(rawValue: "GET")
    public static let head = HTTPMethod(rawValue: "HEAD")
    public static let post = HTTPMethod(rawValue: "POST")
    public static let put = HTTPMethod(rawValue: "PUT")
    public static let patch = HTTPMethod(rawValue: "PATCH")
    public static let delete = HTTPMethod(rawValue: "DELETE")
    public static let options = HTTPMethod(rawValue: "OPTIONS")

    public var description: String { rawValue }
}

/// An HTTP status code with its reason phrase.
///
/// ```swift
/// HTTPStatus.notFound.code   // 404
/// ```
public struct HTTPStatus: Hashable, Sendable, CustomStringConvertible {
    public let code: Int
    public let reasonPhrase: String

    public init(_ code: Int, _ reasonPhrase: String? = nil) {
        self.code = code
        self.reasonPhrase = reasonPhrase ?? HTTPStatus.standardReasonPhrase(code)
    }

    public var description: String { "\(code) \(reasonPhrase)" }

    public static let ok = HTTPStatus(200)
    public static let created = HTTPStatus(201)
    public static let noContent = HTTPStatus(204)
    public static let partialContent = HTTPStatus(206)
    public static let multipleChoices = HTTPStatus(300)
    public static let badRequest = HTTPStatus(400)
    public static let unauthorized = HTTPStatus(401)
    public static let forbidden = HTTPStatus(403)
    public static let notFound = HTTPStatus(404)
    public static let methodNotAllowed = HTTPStatus(405)
    public static let notAcceptable = HTTPStatus(406)
    public static let requestTimeout = HTTPStatus(408)
    public static let conflict = HTTPStatus(409)
    public static let contentTooLarge = HTTPStatus(413)
    public static let uriTooLong = HTTPStatus(414)
    public static let unsupportedMediaType = HTTPStatus(415)
    public static let rangeNotSatisfiable = HTTPStatus(416)
    public static let unprocessableContent = HTTPStatus(422)
    public static let tooManyRequests = HTTPStatus(429)
    public static let misdirectedRequest = HTTPStatus(421)
    public static let requestHeaderFieldsTooLarge = HTTPStatus(431)
    public static let internalServerError = HTTPStatus(500)
    public static let notImplemented = HTTPStatus(501)
    public static let serviceUnavailable = HTTPStatus(503)
    public static let gatewayTimeout = HTTPStatus(504)
    public static let httpVersionNotSupported = HTTPStatus(505)

    static func standardReasonPhrase(_ code: Int) -> String {
        switch code {
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 206: "Partial Content"
        case 300: "Multiple Choices"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 421: "Misdirected Request"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: "Status \(code)"
        }
    }
}

/// HTTP header fields: ordered, names compared case-insensitively.
///
/// ```swift
/// var headers = HTTPHeaders()
/// headers.add("Content-Type", "application/json")
/// headers["content-type"]   // "application/json"
/// ```
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var fields: [(name: String, value: String)] = []
    /// Whether every name added was ASCII, as names on the wire always are
    /// (kept by `add` and the subscript's setter, the only ways in). Several
    /// lookups run for every request and response; with ASCII names on both
    /// sides a name of another length cannot match, so most fields are
    /// passed over without reading their bytes.
    private var namesAreASCII = true

    public init() {}

    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { add(name, value) }
    }

    /// The first value of the named field, or `nil`. Setting replaces every
    /// field of that name (or removes them, with `nil`).
    public subscript(name: String) -> String? {
        get {
            var found: String?
            forEachValue(for: name) { value in
                found = value
                return false
            }
            return found
        }
        set {
            fields.removeAll { Self.namesMatch($0.name, name) }
            if let newValue { add(name, newValue) }
        }
    }

    /// Every value of the named field, in order.
    public func values(for name: String) -> [String] {
        var values: [String] = []
        forEachValue(for: name) { value in
            values.append(value)
            return true
        }
        return values
    }

    /// The first value of the field `name`, a literal: what the framework
    /// itself looks up for every request and response (`ETag`,
    /// `Content-Type`...), without scanning the name for non-ASCII bytes.
    package func first(_ name: StaticString) -> String? {
        var found: String?
        forEachValue(ofLiteral: name) { value in
            found = value
            return false
        }
        return found
    }

    /// Calls `body` with each value of the field `name`, a literal, in
    /// order, until it returns `false`.
    package func forEachValue(ofLiteral name: StaticString, _ body: (String) -> Bool) {
        guard name.hasPointerRepresentation, name.isASCII else {
            return forEachValue(for: name.description, body)
        }
        let key = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        for field in fields where !namesAreASCII || field.name.utf8.count == key.count {
            let matches = field.name.utf8.withContiguousStorageIfAvailable { Self.asciiNamesMatch($0, key) } ?? nil
            if matches ?? Self.namesMatch(field.name, name.description), !body(field.value) { return }
        }
    }

    /// Calls `body` with each value of the named field, in order, until it
    /// returns `false`.
    func forEachValue(for name: String, _ body: (String) -> Bool) {
        if namesAreASCII, Self.isASCII(name) {
            let count = name.utf8.count
            for field in fields where field.name.utf8.count == count && Self.namesMatch(field.name, name) {
                if !body(field.value) { return }
            }
            return
        }
        for field in fields where Self.namesMatch(field.name, name) {
            if !body(field.value) { return }
        }
    }

    /// `first.lowercased() == second.lowercased()`, without building the
    /// lower-cased strings when both names are ASCII (always, on the wire).
    static func namesMatch(_ first: String, _ second: String) -> Bool {
        let decided =
            first.utf8.withContiguousStorageIfAvailable { first in
                second.utf8.withContiguousStorageIfAvailable { second in asciiNamesMatch(first, second) } ?? nil
            } ?? nil
        return decided ?? (first.lowercased() == second.lowercased())
    }

    /// Whether two ASCII names match ignoring case; `nil` when a byte
    /// outside ASCII leaves it to Unicode lower-casing.
    private static func asciiNamesMatch(_ first: UnsafeBufferPointer<UInt8>, _ second: UnsafeBufferPointer<UInt8>) -> Bool? {
        if first.count != second.count {
            // Lower-casing keeps the length of ASCII text only.
            return isASCII(first) && isASCII(second) ? false : nil
        }
        var matches = true
        for index in 0..<first.count {
            let one = first[index]
            let other = second[index]
            if (one | other) >= 0x80 { return nil }
            if one != other {
                let folded = one | 0x20
                if folded != other | 0x20 || folded < UInt8(ascii: "a") || folded > UInt8(ascii: "z") { matches = false }
            }
        }
        return matches
    }

    /// Makes room for `count` fields at once.
    mutating func reserveCapacity(_ count: Int) {
        fields.reserveCapacity(count)
    }

    /// Whether every byte is ASCII. All bytes are or-ed together, without
    /// a test per byte, a loop the compiler vectorizes: the header lookups
    /// of each request call this for most fields, and `contains` with a
    /// closure costs a call per byte.
    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var union: UInt8 = 0
        for byte in bytes { union |= byte }
        return union < 0x80
    }

    private static func isASCII(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { isASCII($0) } ?? !text.utf8.contains { $0 >= 0x80 }
    }

    /// Adds a field, keeping any existing ones of the same name.
    public mutating func add(_ name: String, _ value: String) {
        if namesAreASCII, !Self.isASCII(name) { namesAreASCII = false }
        fields.append((name, value))
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }
}
