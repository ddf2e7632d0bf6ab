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
    /// client's cached copy stays valid across restarts and instances. The
    /// response is consumed: adding `ETag` to a copy would copy its header
    /// fields first.
    ///
    /// ```swift
    /// let response = HTTPResponse(json: bytes).validated(for: request.method, headers: request.headers, cacheControl: "max-age=60")
    /// ```
    public consuming func validated(for method: HTTPMethod, headers: HTTPHeaders, cacheControl: String? = nil) -> HTTPResponse {
        guard method == .get || method == .head, !isDeferred, status == .ok else { return self }
        var response = consume self
        if let cacheControl { response.headers["Cache-Control"] = cacheControl }
        guard case .bytes(let bytes) = response.body else { return response }
        // A handler's own tag is kept.
        let tag: String
        if let own = response.headers.first("ETag") {
            tag = own
        } else {
            tag = Self.entityTag(of: bytes)
            response.headers.add("ETag", tag)
        }
        guard headers.first("If-None-Match") != nil, Self.matches(tag, headers.values(for: "If-None-Match")) else { return response }
        var notModified = HTTPResponse(status: HTTPStatus(304))
        notModified.headers["ETag"] = tag
        if let cacheControl { notModified.headers["Cache-Control"] = cacheControl }
        return notModified
    }

    /// `"` + a 64-bit hash of `bytes` in 11 base-64 digits (`A`–`Z`, `a`–`z`,
    /// `0`–`9`, `-`, `_`) + `"`: cheap, and fixed across processes and
    /// machines (unlike `Hasher`, which is seeded per process). Every
    /// response body known whole passes here, so the body is read eight
    /// bytes at a time (little-endian words, FNV-1a's step on each, with a
    /// shift that folds the high bits of the product back into the low
    /// ones, which a multiplication alone never reaches), then the last few
    /// bytes one by one as FNV-1a does; and the tag's 13 characters fit in
    /// a small string, which needs no allocation.
    static func entityTag(of bytes: [UInt8]) -> String {
        let prime: UInt64 = 0x0000_0100_0000_01b3
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset + 8 <= raw.count {
                hash = (hash ^ UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))) &* prime
                hash ^= hash >> 29
                offset += 8
            }
            while offset < raw.count {
                hash = (hash ^ UInt64(raw[offset])) &* prime
                offset += 1
            }
        }
        let digits: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        return String(unsafeUninitializedCapacity: 13) { buffer in
            buffer[0] = UInt8(ascii: "\"")
            for index in 0..<11 {
                buffer[1 + index] = digits.utf8Start[Int(truncatingIfNeeded: hash >> UInt64(6 * index)) & 0x3F]
            }
            buffer[12] = UInt8(ascii: "\"")
            return 13
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
