import HTTPServer

/// What a read's header fields ask of its answer, as PostgREST reads them:
/// the representation (`Accept`), a range of rows (`Range`, with
/// `Range-Unit: items`) and a count of the rows (`Prefer: count=…`).
///
/// ```swift
/// let preferences = try ReadPreferences(["Accept": "text/csv", "Range": "0-9", "Prefer": "count=planned"])
/// preferences.representation   // .csv
/// preferences.range            // 0...9
/// preferences.count            // .planned
/// ```
struct ReadPreferences: Sendable {
    /// How the rows are written.
    enum Representation: Sendable, Equatable {
        /// A JSON array (or an object's object).
        case json
        /// RFC 4180 CSV.
        case csv
        /// The one row as an object; 406 unless there is exactly one
        /// (`application/vnd.pgrst.object+json`).
        case singular
        /// Server-Sent Events (`text/event-stream`): the rows, then their
        /// changes as they come (docs/LIVE.md).
        case events
    }

    /// How the rows of a list are counted, for `Content-Range`.
    enum Count: String, Sendable {
        /// `count(*)` of the rows the request selects.
        case exact
        /// The planner's estimate of that number (`EXPLAIN`).
        case planned
        /// Exact while the planner estimates few rows (up to a threshold), planned above it.
        case estimated
    }

    var representation: Representation = .json
    /// The rows asked for by `Range`: from the first, to the last if it says.
    var range: (first: Int, last: Int?)?
    var count: Count?

    /// An exact count of the rows, and nothing else.
    init(exactCount: Void) {
        count = .exact
    }

    /// The media types a read answers with, as `Accept` names them.
    static let singularType = "application/vnd.pgrst.object+json"

    /// Reads `headers` of a request of `method`; an `Accept` that names none of the types a read
    /// can be written as is a 406 (`PGRST107`), a malformed `Range` a 416 (`PGRST103`).
    init(_ headers: HTTPHeaders, method: HTTPMethod = .get) throws(HTTPError) {
        representation = try Self.representation(headers.values(for: "Accept"))
        // `Range` is a GET's (RFC 9110, section 14.2): another method's is ignored, as PostgREST ignores it.
        if method == .get, let range = headers["Range"] {
            self.range = try Self.range(range)
        }
        for value in headers.values(for: "Prefer") {
            for preference in value.split(separator: ",") {
                let item = preference.filter { $0 != " " && $0 != "\t" }.lowercased()
                guard item.hasPrefix("count=") else { continue }
                count = Count(rawValue: String(item.dropFirst(6))) ?? count
            }
        }
    }

    /// The representation `Accept` prefers, by its quality values: JSON for
    /// `application/json`, `*/*`, `application/*` or no `Accept` at all.
    static func representation(_ values: [String]) throws(HTTPError) -> Representation {
        var best: (quality: Double, representation: Representation)?
        var named: [String] = []
        for value in values {
            for range in value.split(separator: ",") {
                let parts = range.split(separator: ";").map { $0.filter { $0 != " " && $0 != "\t" }.lowercased() }
                guard let type = parts.first, !type.isEmpty else { continue }
                named.append(type)
                var quality = 1.0
                for parameter in parts.dropFirst() where parameter.hasPrefix("q=") {
                    quality = Double(parameter.dropFirst(2)) ?? 1
                }
                let representation: Representation? =
                    switch type {
                    case "application/json", "application/*", "*/*": .json
                    case "text/csv": .csv
                    case singularType: .singular
                    case "text/event-stream": .events
                    default: nil
                    }
                guard let representation, quality > 0 else { continue }
                if best == nil || quality > best!.quality { best = (quality, representation) }
            }
        }
        if let best { return best.representation }
        if named.isEmpty { return .json }
        throw HTTPError(
            .notAcceptable, detail: "None of these media types are available: \(named.joined(separator: ", ")).", code: "PGRST107",
            hint: "Ask for application/json, text/csv, text/event-stream or \(singularType).")
    }

    /// `first-last` or `first-` (items): the rows asked for.
    private static func range(_ value: String) throws(HTTPError) -> (first: Int, last: Int?) {
        var text = Substring(value.filter { $0 != " " })
        if text.hasPrefix("items=") { text = text.dropFirst(6) }
        let bounds = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int(bounds[0]), first >= 0 else {
            throw HTTPError(
                .rangeNotSatisfiable, detail: "The Range \"\(value)\" is not FIRST-LAST or FIRST- in items.", code: "PGRST103",
                headers: ["Content-Range": "*/*"])
        }
        guard !bounds[1].isEmpty else { return (first, nil) }
        guard let last = Int(bounds[1]), last >= first else {
            throw HTTPError(
                .rangeNotSatisfiable, detail: "The Range \"\(value)\" ends before it begins.", code: "PGRST103",
                headers: ["Content-Range": "*/*"])
        }
        return (first, last)
    }
}
