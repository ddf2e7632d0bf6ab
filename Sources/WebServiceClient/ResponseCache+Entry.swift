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
            var storedAt: Date
            /// Digests of the request's values of the fields named by `Vary`
            /// (absent: `nil`); never the values, which may be credentials.
            var varied: [String: String?]
        }

        var metadata: Metadata
        var body: Data

        var key: String { metadata.key }
        var storedAt: Date {
            get { metadata.storedAt }
            set { metadata.storedAt = newValue }
        }

        /// A new entry for `response`, or `nil` when it must not be kept
        /// (`Cache-Control: no-store`, `Vary: *`, `private` without credentials).
        /// `Set-Cookie` is left out of the stored header fields.
        init?(request: URLRequest, response: WebServiceResponse, storedAt: Date) {
            let directives = Self.directives(response.header("Cache-Control"))
            guard directives["no-store"] == nil else { return nil }
            guard directives["private"] == nil || CredentialFields.digest(of: request) != nil else { return nil }
            let varyNames = Self.varyNames(response.header("Vary"))
            guard !varyNames.contains("*") else { return nil }
            var varied: [String: String?] = [:]
            for name in varyNames { varied[name] = .some(Self.variedDigest(name, request)) }
            let headers = response.headers.filter { $0.key.lowercased() != "set-cookie" }
            metadata = Metadata(
                key: ResponseCache.key(of: request), status: response.status, headers: headers, storedAt: storedAt,
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

        /// Seconds the answer stays fresh after `storedAt`: its `max-age`,
        /// none with `no-cache` or without one.
        var freshness: TimeInterval {
            let directives = Self.directives(header("Cache-Control"))
            if directives["no-cache"] != nil { return 0 }
            if let maxAge = directives["max-age"].flatMap({ $0.flatMap(TimeInterval.init) }) { return maxAge }
            return 0
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

        func response(isStale: Bool) -> WebServiceResponse {
            WebServiceResponse(
                status: metadata.status, headers: metadata.headers, data: body, isStale: isStale, storedAt: metadata.storedAt)
        }

        /// `Cache-Control`'s directives, names lower-cased, values unquoted.
        static func directives(_ value: String?) -> [String: String?] {
            var directives: [String: String?] = [:]
            for part in (value ?? "").split(separator: ",") {
                let pieces = part.split(separator: "=", maxSplits: 1)
                let name = pieces[0].trimmingCharacters(in: .whitespaces).lowercased()
                guard !name.isEmpty else { continue }
                let argument = pieces.count > 1
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
