import Foundation

// MARK: - Freshness and age (RFC 9111 §4.2)

extension ResponseCache.Entry {
    /// The age the answer had when received, RFC 9111 §4.2.3's
    /// `corrected_initial_age`: the larger of the time since its `Date`
    /// (the apparent age, never negative) and its `Age` plus the time the
    /// exchange took (the corrected age value). Without `Date`, or with an
    /// invalid `Age`, that part counts as 0.
    static func initialAge(headers: [String: String], requestedAt: Date, receivedAt: Date) -> TimeInterval {
        let date = field("Date", in: headers).flatMap(HTTPDate.parse)
        let apparentAge = max(0, date.map { receivedAt.timeIntervalSince($0) } ?? 0)
        let ageValue = field("Age", in: headers).flatMap(deltaSeconds) ?? 0
        let responseDelay = max(0, receivedAt.timeIntervalSince(requestedAt))
        return max(apparentAge, ageValue + responseDelay)
    }

    /// The answer's current age at `now` (RFC 9111 §4.2.3): its age when
    /// received plus the time it has been stored since.
    func age(at now: Date) -> TimeInterval {
        let initial =
            metadata.initialAge
            ?? Self.initialAge(headers: metadata.headers, requestedAt: storedAt, receivedAt: storedAt)
        return initial + max(0, now.timeIntervalSince(storedAt))
    }

    /// How long the answer is fresh, counted from its age 0 (RFC 9111
    /// §4.2.1): 0 with `no-cache`; else its `max-age`; else its `Expires`
    /// minus its `Date` (or minus when it was received, without `Date`),
    /// where an `Expires` that is not a date (such as `0`) is in the past;
    /// else 0. No heuristic lifetime is given to an answer that states
    /// none (RFC 9111 §4.2.2 allows but does not require one): such an
    /// answer is revalidated (`If-None-Match`, `If-Modified-Since`) at
    /// each call, so an app never shows a stored answer the server has
    /// not vouched for as current.
    var freshnessLifetime: TimeInterval {
        let directives = Self.directives(header("Cache-Control"))
        if directives["no-cache"] != nil { return 0 }
        if let maxAge = directives["max-age"] {
            return maxAge.flatMap(Self.deltaSeconds) ?? 0
        }
        if let expires = header("Expires") {
            guard let expiry = HTTPDate.parse(expires) else { return 0 }
            let date = header("Date").flatMap(HTTPDate.parse) ?? storedAt
            return max(0, expiry.timeIntervalSince(date))
        }
        return 0
    }

    /// Whether the answer may never be used stale, not even offline
    /// (`must-revalidate`, or `no-cache`, which RFC 9111 §4.2.4 and
    /// §5.2.2.4 forbid to use without the server's confirmation).
    var forbidsStale: Bool {
        let directives = Self.directives(header("Cache-Control"))
        return directives["must-revalidate"] != nil || directives["no-cache"] != nil
    }

    /// `stale-while-revalidate`'s seconds (RFC 5861 §3), if the answer has it.
    var staleWhileRevalidate: TimeInterval? {
        Self.directives(header("Cache-Control"))["stale-while-revalidate"]?.flatMap(Self.deltaSeconds)
    }

    /// `stale-if-error`'s seconds (RFC 5861 §4), if the answer has it.
    var staleIfError: TimeInterval? {
        Self.directives(header("Cache-Control"))["stale-if-error"]?.flatMap(Self.deltaSeconds)
    }

    /// A non-negative whole number of seconds (RFC 9111 §1.2.2); a value
    /// too large to represent is 2^31, as the RFC asks.
    static func deltaSeconds(_ text: String) -> TimeInterval? {
        let text = text.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return min(TimeInterval(text) ?? 2_147_483_648, 2_147_483_648)
    }

    private static func field(_ name: String, in headers: [String: String]) -> String? {
        let lowercased = name.lowercased()
        return headers.first { $0.key.lowercased() == lowercased }?.value
    }
}

// MARK: - HTTP dates

/// The dates of HTTP header fields (RFC 9110 §5.6.7): the preferred
/// `Sun, 06 Nov 1994 08:49:37 GMT`, and the obsolete
/// `Sunday, 06-Nov-94 08:49:37 GMT` and `Sun Nov  6 08:49:37 1994`, which
/// a recipient must accept too. The day's name is not checked.
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The instant `text` names, or `nil` when it is none of the three forms.
    static func parse(_ text: String) -> Date? {
        let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let day: Int?
        let month: Int?
        let year: Int?
        let time: String
        switch words.count {
        case 6 where words[5] == "GMT":  // Sun, 06 Nov 1994 08:49:37 GMT
            (day, month, year, time) = (Int(words[1]), monthNumber(words[2]), Int(words[3]), words[4])
        case 4 where words[3] == "GMT":  // Sunday, 06-Nov-94 08:49:37 GMT
            let parts = words[1].split(separator: "-").map(String.init)
            guard parts.count == 3, let shortYear = Int(parts[2]), parts[2].count == 2 else { return nil }
            // RFC 9110 §5.6.7: a two-digit year more than 50 years ahead is in the past century.
            let thisYear = Calendar(identifier: .gregorian).component(.year, from: Date())
            var fullYear = thisYear / 100 * 100 + shortYear
            if fullYear > thisYear + 50 { fullYear -= 100 }
            (day, month, year, time) = (Int(parts[0]), monthNumber(parts[1]), fullYear, words[2])
        case 5:  // Sun Nov  6 08:49:37 1994
            (day, month, year, time) = (Int(words[2]), monthNumber(words[1]), Int(words[4]), words[3])
        default:
            return nil
        }
        let clock = time.split(separator: ":").map { Int($0) }
        guard let day, let month, let year, (1...31).contains(day), clock.count == 3,
            let hour = clock[0], let minute = clock[1], let second = clock[2],
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        let days = WebServiceDecoding.daysSince1970(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3600 + minute * 60 + second))
    }

    private static func monthNumber(_ name: String) -> Int? {
        months.firstIndex(of: name.lowercased()).map { $0 + 1 }
    }
}
