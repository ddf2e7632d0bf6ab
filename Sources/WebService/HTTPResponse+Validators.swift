import HTTPServer

// MARK: - Conditional GET

extension HTTPResponse {
    /// The response as sent to a `GET` or `HEAD`: a `200` whose body is
    /// known whole carries a strong `ETag` (a hash of the body) and
    /// `cacheControl` when given, and becomes `304 Not Modified`, without
    /// its body, when `If-None-Match` names that tag (or is `*`). Streamed
    /// bodies (lists) carry no validator: their tag would be known only
    /// after the last byte. Other methods and statuses, and responses
    /// still to come (their work validates what it produces), pass unchanged.
    ///
    /// The tag is the same for the same bytes in every process, so that a
    /// client's cached copy stays valid across restarts and instances.
    ///
    /// ```swift
    /// let response = HTTPResponse(json: bytes).validated(for: request.method, headers: request.headers, cacheControl: "max-age=60")
    /// ```
    public func validated(for method: HTTPMethod, headers: HTTPHeaders, cacheControl: String? = nil) -> HTTPResponse {
        guard method == .get || method == .head, !isDeferred, status == .ok else { return self }
        var response = self
        if let cacheControl { response.headers["Cache-Control"] = cacheControl }
        guard case .bytes(let bytes) = body else { return response }
        // A handler's own tag is kept.
        let tag: String
        if let own = response.headers["ETag"] {
            tag = own
        } else {
            tag = Self.entityTag(of: bytes)
            response.headers.add("ETag", tag)
        }
        guard headers["If-None-Match"] != nil, Self.matches(tag, headers.values(for: "If-None-Match")) else { return response }
        var notModified = HTTPResponse(status: HTTPStatus(304))
        notModified.headers["ETag"] = tag
        if let cacheControl { notModified.headers["Cache-Control"] = cacheControl }
        return notModified
    }

    /// `"` + the 64-bit FNV-1a hash of `bytes` in hex + `"`: cheap, and
    /// fixed across processes (unlike `Hasher`, which is seeded per process).
    static func entityTag(of bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: 18) { buffer in
            buffer[0] = UInt8(ascii: "\"")
            for index in 0..<16 {
                buffer[1 + index] = digits.utf8Start[Int(truncatingIfNeeded: hash >> UInt64(60 - 4 * index)) & 0xF]
            }
            buffer[17] = UInt8(ascii: "\"")
            return 18
        }
    }

    /// Whether an `If-None-Match` list names `tag`, by the weak comparison
    /// RFC 9110 prescribes for it (a `W/` prefix does not matter), or is `*`.
    static func matches(_ tag: String, _ fields: [String]) -> Bool {
        for field in fields {
            for candidate in field.split(separator: ",") {
                var candidate = candidate.drop { $0 == " " || $0 == "\t" }
                while let last = candidate.last, last == " " || last == "\t" { candidate.removeLast() }
                if candidate == "*" { return true }
                if candidate.hasPrefix("W/") { candidate = candidate.dropFirst(2) }
                if candidate == tag { return true }
            }
        }
        return false
    }
}
