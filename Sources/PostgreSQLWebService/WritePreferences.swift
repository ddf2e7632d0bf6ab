import HTTPServer

/// What a write's `Prefer` header fields ask, as PostgREST reads them:
/// the answer (`return=minimal|headers-only|representation`, minimal by
/// default), an upsert (`resolution=merge-duplicates|ignore-duplicates`),
/// a count (`count=exact`), a rollback (`tx=rollback`) and a limit on the
/// rows written (`max-affected=N`). Preferences it does not know are left
/// out of `Preference-Applied`, as PostgREST's lenient handling does.
///
/// ```swift
/// let preferences = try WritePreferences(["Prefer": "return=representation, tx=rollback"])
/// preferences.applied   // "return=representation, tx=rollback"
/// ```
struct WritePreferences: Sendable {
    enum Returning: String, Sendable {
        case minimal
        case headersOnly = "headers-only"
        case representation
    }

    enum Resolution: String, Sendable {
        case mergeDuplicates = "merge-duplicates"
        case ignoreDuplicates = "ignore-duplicates"
    }

    var returning: Returning = .minimal
    var isReturningExplicit = false
    var resolution: Resolution?
    /// `missing=default`: a member an object leaves out takes the column's default.
    var missingDefault = false
    var countsExactly = false
    var rollsBack = false
    var isTransactionExplicit = false
    var maxAffected: Int?

    init(_ headers: HTTPHeaders) throws(HTTPError) {
        for value in headers.values(for: "Prefer") {
            for preference in value.split(separator: ",") {
                let item = preference.filter { $0 != " " && $0 != "\t" }.lowercased()
                guard let equals = item.firstIndex(of: "=") else { continue }
                let (name, text) = (item[..<equals], String(item[item.index(after: equals)...]))
                switch name {
                case "return":
                    if let returning = Returning(rawValue: text) { (self.returning, isReturningExplicit) = (returning, true) }
                case "resolution": resolution = Resolution(rawValue: text) ?? resolution
                case "missing": missingDefault = text == "default"
                case "count": countsExactly = text == "exact" || countsExactly
                case "tx":
                    if text == "rollback" || text == "commit" { (rollsBack, isTransactionExplicit) = (text == "rollback", true) }
                case "max-affected":
                    guard let number = Int(text), number >= 0 else {
                        throw HTTPError(
                            .badRequest, detail: "max-affected takes a number of rows, 0 or more; received \(text).", code: "PGRST122")
                    }
                    maxAffected = number
                default: continue
                }
            }
        }
    }

    /// `Preference-Applied`: what was honoured, in PostgREST's order; `nil` for none.
    var applied: String? {
        var items: [String] = []
        if let resolution { items.append("resolution=" + resolution.rawValue) }
        if missingDefault { items.append("missing=default") }
        if isReturningExplicit { items.append("return=" + returning.rawValue) }
        if countsExactly { items.append("count=exact") }
        if isTransactionExplicit { items.append("tx=" + (rollsBack ? "rollback" : "commit")) }
        if let maxAffected { items.append("max-affected=\(maxAffected)") }
        return items.isEmpty ? nil : items.joined(separator: ", ")
    }
}
