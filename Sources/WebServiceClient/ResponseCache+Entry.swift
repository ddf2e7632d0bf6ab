import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension ResponseCache {
    /// One stored answer. On disk: a line of JSON (``Metadata``), then the body.
    struct Entry {
        struct Metadata: Codable {
            var key: String
            var status: Int
            var headers: [String: String]
            /// When the answer was received, or last confirmed by a 304.
            var storedAt: Date
            /// Its age then (RFC 9111 §4.2.3's `corrected_initial_age`);
            /// `nil` in entries written before it was kept, whose age is
            /// worked out from their `Date` and `Age`.
            var initialAge: TimeInterval?
            /// Digests of the request's values of the fields named by `Vary`
            /// (absent: `nil`); never the values, which may be credentials.
            var varied: [String: String?]
        }

        var metadata: Metadata
        var body: Data

        var key: String { metadata.key }
        var storedAt: Date { metadata.storedAt }

        /// A new entry for `response` to `request` (sent at `requestedAt`,
        /// answered at `receivedAt`), or `nil` when it must not be kept
        /// (`Cache-Control: no-store`, `Vary: *`, `private` without credentials).
        /// `Set-Cookie` is left out of the stored header fields.
        init?(request: URLRequest, response: WebServiceResponse, requestedAt: Date, receivedAt: Date) {
            let directives = Self.directives(response.header("Cache-Control"))
            guard directives["no-store"] == nil else { return nil }
            guard directives["private"] == nil || CredentialFields.digest(of: request) != nil else { return nil }
            let varyNames = Self.varyNames(response.header("Vary"))
            guard !varyNames.contains("*") else { return nil }
            var varied: [String: String?] = [:]
            for name in varyNames { varied[name] = .some(Self.variedDigest(name, request)) }
            let headers = response.headers.filter { $0.key.lowercased() != "set-cookie" }
            metadata = Metadata(
                key: ResponseCache.key(of: request), status: response.status, headers: headers, storedAt: receivedAt,
                initialAge: Self.initialAge(headers: response.headers, requestedAt: requestedAt, receivedAt: receivedAt),
                varied: varied)
            body = response.data
        }

        /// An entry as read from its file; `nil` for a damaged one.
        init?(file: Data) {
            guard let newline = file.firstIndex(of: UInt8(ascii: "\n")),
                let metadata = try? JSONDecoder().decode(Metadata.self, from: file[..<newline])
            else { return nil }
            self.metadata = metadata
            body = Data(file[file.index(after: newline)...])
        }

        var fileData: Data {
            var data = (try? JSONEncoder().encode(metadata)) ?? Data()
            data.append(UInt8(ascii: "\n"))
            data.append(body)
            return data
        }

        /// Whether `request` has the values this answer varies on.
        func matches(_ request: URLRequest) -> Bool {
            metadata.varied.allSatisfy { name, digest in Self.variedDigest(name, request) == digest }
        }

        /// The SHA-256 of `request`'s value of the field `name`; `nil` when it has none.
        private static func variedDigest(_ name: String, _ request: URLRequest) -> String? {
            request.value(forHTTPHeaderField: name).map { SHA256.hexDigest("vary\n" + name.lowercased() + ": " + $0) }
        }

        func header(_ name: String) -> String? {
            let lowercased = name.lowercased()
            return metadata.headers.first { $0.key.lowercased() == lowercased }?.value
        }

        mutating func setHeader(_ name: String, _ value: String) {
            let lowercased = name.lowercased()
            for key in metadata.headers.keys where key.lowercased() == lowercased { metadata.headers[key] = nil }
            metadata.headers[name] = value
        }

        /// Replaces the stored header fields with those of `notModified`, a
        /// 304 that confirmed the entry (RFC 9111 §4.3.4), but for those
        /// that describe its body or the connection, which stay the stored
        /// body's; the entry is then as old as the 304.
        mutating func refresh(with notModified: WebServiceResponse, requestedAt: Date, receivedAt: Date) {
            let kept: Set<String> = [
                "content-length", "content-type", "content-encoding", "content-range", "transfer-encoding", "connection",
                "keep-alive", "set-cookie", "vary",
            ]
            // The old `Date` and `Age` describe the old answer, not this confirmation.
            for name in metadata.headers.keys where ["date", "age"].contains(name.lowercased()) { metadata.headers[name] = nil }
            for (name, value) in notModified.headers where !kept.contains(name.lowercased()) { setHeader(name, value) }
            metadata.storedAt = receivedAt
            metadata.initialAge = Self.initialAge(headers: notModified.headers, requestedAt: requestedAt, receivedAt: receivedAt)
        }

        /// The stored answer as returned at `now`: its current age in
        /// ``WebServiceResponse/age`` and in the `Age` field (whole seconds,
        /// as RFC 9111 §5.1 has a cache send it).
        func response(isStale: Bool, at now: Date) -> WebServiceResponse {
            let age = age(at: now)
            var headers = metadata.headers
            for name in headers.keys where name.lowercased() == "age" { headers[name] = nil }
            headers["Age"] = String(Int(age.rounded(.down)))
            return WebServiceResponse(
                status: metadata.status, headers: headers, data: body, isStale: isStale, storedAt: metadata.storedAt, age: age)
        }

        /// `Cache-Control`'s directives, names lower-cased, values unquoted.
        static func directives(_ value: String?) -> [String: String?] {
            var directives: [String: String?] = [:]
            for part in (value ?? "").split(separator: ",") {
                let pieces = part.split(separator: "=", maxSplits: 1)
                let name = pieces[0].trimmingCharacters(in: .whitespaces).lowercased()
                guard !name.isEmpty else { continue }
                let argument =
                    pieces.count > 1
                    ? pieces[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) : nil
                directives[name] = .some(argument)
            }
            return directives
        }

        static func varyNames(_ value: String?) -> [String] {
            (value ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
    }
}
