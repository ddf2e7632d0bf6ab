import Foundation

/// A successful answer: its status, header fields and bytes, and where it
/// came from when a cache is in use.
///
/// ```swift
/// let response = try await client.send(WebServiceRequest(.get, "/departments"))
/// let departments = try response.decode([Department].self)
/// if response.isStale { print("stale by the server's rules; \(Int(response.age!)) s old") }
/// ```
public struct WebServiceResponse: Sendable {
    public var status: Int
    /// Header fields, names as the server wrote them; see ``header(_:)``.
    public var headers: [String: String]
    /// The body as received (decompressed).
    public var data: Data
    /// Whether this is a stored answer past its freshness lifetime that
    /// the server did not confirm: the server could not be reached or
    /// failed (``CachePolicy``), `stale-while-revalidate` allowed it while
    /// the cache asks the server in the background, or
    /// ``CachePolicy/cacheFirst(maxAge:)`` took it past its lifetime.
    public var isStale: Bool
    /// When the stored answer was received or last confirmed; `nil` for an
    /// answer straight from the server.
    public var storedAt: Date?
    /// How old a stored answer is, in seconds (RFC 9111 §4.2.3): the age
    /// the server gave it (its `Age`, or the time since its `Date`) plus
    /// the time since it was received or confirmed. The `Age` field says
    /// the same in whole seconds. `nil` for an answer straight from the server.
    public var age: TimeInterval?

    public init(
        status: Int, headers: [String: String], data: Data, isStale: Bool = false, storedAt: Date? = nil,
        age: TimeInterval? = nil
    ) {
        self.status = status
        self.headers = headers
        self.data = data
        self.isStale = isStale
        self.storedAt = storedAt
        self.age = age
    }

    /// A header field's value, its name in any case.
    public func header(_ name: String) -> String? {
        let lowercased = name.lowercased()
        return headers.first { $0.key.lowercased() == lowercased }?.value
    }

    /// Whether the body is JSON (`application/json` or a `+json` type).
    public var isJSON: Bool {
        guard let type = header("Content-Type")?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() else {
            return false
        }
        return type == "application/json" || type.hasSuffix("+json")
    }

    /// Whether the answer came from the cache (fresh, revalidated or stale).
    public var isFromCache: Bool { storedAt != nil }

    /// The body decoded as `type`, dates in the server's formats
    /// (``WebServiceDecoding``); `Data` is the body itself, and so is a
    /// `String` when the body is not JSON (`text/plain`).
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        if let data = data as? T { return data }
        if T.self == String.self, !isJSON, let text = String(decoding: data, as: UTF8.self) as? T { return text }
        if data.isEmpty, let none = (T.self as? any ExpressibleByNilLiteral.Type)?.init(nilLiteral: ()) as? T {
            return none
        }
        do {
            return try WebServiceDecoding.decoder().decode(T.self, from: data)
        } catch {
            throw WebServiceError(
                .decoding, status: status, detail: "The answer is not a \(T.self): \(error)", headers: headers, body: data,
                underlying: error)
        }
    }
}

/// The JSON decoding the client applies: dates in either of the server's
/// formats (`--date-format`), so the same types read both.
///
/// - `"1957-02-20"`: that day, at midnight UTC;
/// - `"2024-05-01T12:00:00Z"` or with fractions of a second: that instant;
/// - a number: milliseconds since 1970 (HTTP-RPC's epoch milliseconds).
///
/// ```swift
/// let employee = try WebServiceDecoding.decoder().decode(Employee.self, from: data)
/// ```
public enum WebServiceDecoding {
    /// A new decoder with the server's date formats.
    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            if let milliseconds = try? container.decode(Double.self) {
                return Date(timeIntervalSince1970: milliseconds / 1000)
            }
            let text = try container.decode(String.self)
            guard let date = date(from: text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "\"\(text)\" is neither a date (YYYY-MM-DD) nor an ISO 8601 instant.")
            }
            return date
        }
        return decoder
    }

    /// `text` as a day (`1957-02-20`, midnight UTC) or an ISO 8601 instant.
    public static func date(from text: String) -> Date? {
        let utf8 = Array(text.utf8)
        if utf8.count == 10, utf8[4] == UInt8(ascii: "-"), utf8[7] == UInt8(ascii: "-"),
            let year = Int(text.prefix(4)), let month = Int(text.dropFirst(5).prefix(2)), let day = Int(text.suffix(2)),
            (1...12).contains(month), (1...31).contains(day)
        {
            return Date(timeIntervalSince1970: TimeInterval(daysSince1970(year: year, month: month, day: day)) * 86_400)
        }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle())
    }

    /// Days from 1970-01-01 to a day of the proleptic Gregorian calendar
    /// (Howard Hinnant's `days_from_civil`).
    static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
