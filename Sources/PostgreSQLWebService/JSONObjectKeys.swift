import WebService

/// The member names of a JSON body that is an object or an array of
/// objects, read without building its values: a bulk insert's body is
/// held once, as the bytes PostgreSQL reads, rather than once more as a
/// tree many times its size. The structure is checked here (brackets,
/// strings, separators); each value's own syntax is PostgreSQL's to check
/// when it reads the body as `json`.
///
/// ```swift
/// try JSONObjectKeys.scan(Array(#"[{"a": 1}, {"a": 2, "b": [3]}]"#.utf8)) { keys in print(keys) }   // ["a"], then ["a", "b"]
/// ```
enum JSONObjectKeys {
    /// What the body's top level is.
    enum Shape { case object, array }

    /// Calls `body` with the member names of each object, in order; `nil`
    /// when the body is not JSON of that form (an array holding something
    /// other than objects included).
    static func scan(_ bytes: [UInt8], _ body: ([String]) throws -> Void) rethrows -> Shape? {
        var reader = Reader(bytes: bytes)
        reader.skipSpace()
        let shape: Shape
        switch reader.peek {
        case UInt8(ascii: "{"):
            shape = .object
            guard let keys = reader.object() else { return nil }
            try body(keys)
        case UInt8(ascii: "["):
            shape = .array
            reader.index += 1
            reader.skipSpace()
            if reader.peek == UInt8(ascii: "]") {
                reader.index += 1
            } else {
                while true {
                    reader.skipSpace()
                    guard reader.peek == UInt8(ascii: "{"), let keys = reader.object() else { return nil }
                    try body(keys)
                    reader.skipSpace()
                    guard let separator = reader.next() else { return nil }
                    if separator == UInt8(ascii: "]") { break }
                    guard separator == UInt8(ascii: ",") else { return nil }
                }
            }
        default:
            return nil
        }
        reader.skipSpace()
        return reader.index == bytes.count ? shape : nil
    }

    /// The members of one object, each name with where its value's text
    /// lies in `bytes` (a repeated name once, at its last value, as
    /// PostgreSQL reads it); `nil` when `bytes` is not one object.
    static func members(_ bytes: [UInt8]) -> [(name: String, value: Range<Int>)]? {
        var reader = Reader(bytes: bytes)
        reader.skipSpace()
        guard reader.next() == UInt8(ascii: "{") else { return nil }
        var members: [(name: String, value: Range<Int>)] = []
        reader.skipSpace()
        if reader.peek == UInt8(ascii: "}") {
            reader.index += 1
        } else {
            while true {
                reader.skipSpace()
                guard let name = reader.string() else { return nil }
                reader.skipSpace()
                guard reader.next() == UInt8(ascii: ":") else { return nil }
                reader.skipSpace()
                let start = reader.index
                guard reader.skipValue() else { return nil }
                if let repeated = members.firstIndex(where: { $0.name == name }) { members.remove(at: repeated) }
                members.append((name, start..<reader.index))
                reader.skipSpace()
                guard let separator = reader.next() else { return nil }
                if separator == UInt8(ascii: "}") { break }
                guard separator == UInt8(ascii: ",") else { return nil }
            }
        }
        reader.skipSpace()
        return reader.index == bytes.count ? members : nil
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func next() -> UInt8? {
            guard index < bytes.count else { return nil }
            defer { index += 1 }
            return bytes[index]
        }

        mutating func skipSpace() {
            while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        /// An object at `index`: its member names, its values skipped.
        mutating func object() -> [String]? {
            guard next() == UInt8(ascii: "{") else { return nil }
            var keys: [String] = []
            skipSpace()
            if peek == UInt8(ascii: "}") {
                index += 1
                return keys
            }
            while true {
                skipSpace()
                guard let key = string() else { return nil }
                // A repeated name is one member, as PostgreSQL reads it (the last value wins).
                if !keys.contains(key) { keys.append(key) }
                skipSpace()
                guard next() == UInt8(ascii: ":"), skipValue() else { return nil }
                skipSpace()
                switch next() {
                case UInt8(ascii: ","): continue
                case UInt8(ascii: "}"): return keys
                default: return nil
                }
            }
        }

        /// A string at `index`, its escapes read.
        mutating func string() -> String? {
            guard next() == UInt8(ascii: "\"") else { return nil }
            let start = index
            var escaped = false
            while let byte = next() {
                if byte == UInt8(ascii: "\\") {
                    escaped = true
                    guard next() != nil else { return nil }
                } else if byte == UInt8(ascii: "\"") {
                    let raw = Array(bytes[start..<(index - 1)])
                    guard escaped else { return String(decoding: raw, as: UTF8.self) }
                    // Rare in a member name: read by the JSON parser the rest of the server uses.
                    guard case .string(let text)? = try? JSONValue.parse([UInt8(ascii: "\"")] + raw + [UInt8(ascii: "\"")]) else {
                        return nil
                    }
                    return text
                } else if byte < 0x20 {
                    return nil
                }
            }
            return nil
        }

        /// Skips a string at `index`, not reading its escapes.
        mutating func skipString() -> Bool {
            guard next() == UInt8(ascii: "\"") else { return false }
            while let byte = next() {
                if byte == UInt8(ascii: "\\") {
                    guard next() != nil else { return false }
                } else if byte == UInt8(ascii: "\"") {
                    return true
                } else if byte < 0x20 {
                    return false
                }
            }
            return false
        }

        /// Skips one value: a string, or brackets matched to their depth
        /// (strings inside skipped whole), or a literal up to its end.
        mutating func skipValue() -> Bool {
            skipSpace()
            guard let first = peek else { return false }
            switch first {
            case UInt8(ascii: "\""):
                return skipString()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var closers: [UInt8] = []
                while let byte = peek {
                    switch byte {
                    case UInt8(ascii: "\""):
                        guard skipString() else { return false }
                        continue
                    case UInt8(ascii: "{"): closers.append(UInt8(ascii: "}"))
                    case UInt8(ascii: "["): closers.append(UInt8(ascii: "]"))
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        guard closers.popLast() == byte else { return false }
                        if closers.isEmpty {
                            index += 1
                            return true
                        }
                    default: break
                    }
                    index += 1
                }
                return false
            default:
                let start = index
                while let byte = peek, byte != UInt8(ascii: ","), byte != UInt8(ascii: "}"), byte != UInt8(ascii: "]"),
                    byte != 0x20, byte != 0x09, byte != 0x0A, byte != 0x0D
                {
                    index += 1
                }
                return index > start
            }
        }
    }
}
