import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a call uses the client's ``ResponseCache``. Only GET answers are
/// kept, and only with status 200 and without `Cache-Control: no-store`.
/// Freshness follows RFC 9111: an answer is fresh while its age (its
/// `Age`, or the time since its `Date`, plus the time it has been stored)
/// is below its lifetime (`max-age`, else `Expires` minus `Date`; none
/// otherwise). A stored answer comes back with ``WebServiceResponse/age``
/// set, and ``WebServiceResponse/isStale`` when past its lifetime.
///
/// ```swift
/// try await client.send(WebServiceRequest(.get, "/departments", cachePolicy: .cacheFirst(maxAge: 3600)))
/// ```
public enum CachePolicy: Sendable, Hashable {
    /// Asks the server unless the stored answer is still fresh; a stored
    /// answer is revalidated with `If-None-Match` (its `ETag`) and
    /// `If-Modified-Since` (its `Last-Modified`): a 304 costs no body and
    /// renews the stored answer. Within its `stale-while-revalidate`
    /// window, a stale answer is returned at once and revalidated in the
    /// background. When the server cannot be reached (or answers 502, 503,
    /// 504), or answers another 5xx within the answer's `stale-if-error`
    /// window, the stored answer is returned stale; never one with
    /// `must-revalidate` or `no-cache`, for which the error is thrown. The
    /// default with a cache.
    case networkFirst
    /// A stored answer younger than `maxAge` seconds is returned without
    /// asking the server (`isStale` when past its own lifetime; never a
    /// stale one with `must-revalidate` or `no-cache`); an older one is
    /// handled as `.networkFirst` handles it.
    case cacheFirst(maxAge: TimeInterval)
    /// The server alone: nothing is read from the cache or stored in it.
    case networkOnly
}

/// Answers kept on disk, in a folder the app chooses, so that an app keeps
/// working offline with the answers it last had (after the seeds'
/// "Caching Web Service Response Data").
///
/// - One file per answer, named by the SHA-256 of its method, URL and a
///   digest of the request's credentials (`CredentialFields`): callers
///   with different credentials never share an entry, even in one folder.
///   The file also records digests of the request's values of the header
///   fields the answer varies on (`Vary`), never the values, and is used only
///   for a request with the same values (a new answer replaces it).
/// - `Cache-Control: private` answers are kept only for a request with
///   credentials, under their digest: without any, the cache cannot tell
///   whose answer it is (URLSession may have added cookies of its own).
/// - The folder, and each folder the cache creates for it, is readable by
///   its owner alone (0700); so is each file (0600).
/// - Each file is written whole to a temporary name, then renamed: a crash
///   leaves the previous entry or the new one, never half of one.
/// - Past `sizeLimit` bytes, the least recently used entries are removed.
/// - Safe to share between clients and tasks; several processes may share
///   the folder (each keeps its own usage order).
///
/// ```swift
/// let cache = try ResponseCache(directory: URL(filePath: "/var/cache/myapp"), sizeLimit: 20 << 20)
/// let client = WebServiceClient(baseURL: url, configuration: .init(cache: cache))
/// ```
public final class ResponseCache: @unchecked Sendable {
    // `@unchecked Sendable`: `index`, `totalSize` and `revalidations` are
    // touched only with `lock` held; files are replaced by rename, never
    // written in place.
    private let lock = NSLock()
    private var index: [String: (size: Int, lastUsed: Date)] = [:]
    private var totalSize = 0
    /// The background revalidations running, by entry key.
    private var revalidations: [String: Task<Void, Never>] = [:]

    public let directory: URL
    /// The most bytes the entries may take together.
    public let sizeLimit: Int

    static let entryExtension = "entry"

    /// Opens (creating it if need be) the cache in `directory`, and makes
    /// the folder its owner's alone (0700).
    public init(directory: URL, sizeLimit: Int = 50 << 20) throws {
        self.directory = directory
        self.sizeLimit = sizeLimit
        try Self.createPrivateDirectory(directory)
        let keys: [URLResourceKey] = [.fileSizeKey, .contentModificationDateKey]
        for file in try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: keys) {
            let name = file.lastPathComponent
            if name.hasPrefix(".tmp-") {
                try? FileManager.default.removeItem(at: file)  // a write that never finished
                continue
            }
            if file.pathExtension == Self.entryExtension, !Self.isEntryName(name) {
                // Not named by a SHA-256: an earlier format, which kept `Vary` values in clear.
                try? FileManager.default.removeItem(at: file)
                continue
            }
            guard file.pathExtension == Self.entryExtension, let values = try? file.resourceValues(forKeys: Set(keys)) else { continue }
            let size = values.fileSize ?? 0
            index[file.lastPathComponent] = (size, values.contentModificationDate ?? .distantPast)
            totalSize += size
        }
    }

    /// The bytes the entries take together.
    public var size: Int {
        lock.withLock { totalSize }
    }

    /// The number of entries.
    public var count: Int {
        lock.withLock { index.count }
    }

    /// Removes every entry.
    public func removeAll() {
        let names = lock.withLock {
            defer { index = [:]; totalSize = 0 }
            return Array(index.keys)
        }
        for name in names { try? FileManager.default.removeItem(at: directory.appending(path: name)) }
    }

    // MARK: - Answering

    /// Fetches the server's answer to a request, any status; throws for a
    /// failed transfer. May be called again later to revalidate in the background.
    typealias Fetch = @Sendable (URLRequest) async throws -> WebServiceResponse

    /// The answer to `request` under `policy` (RFC 9111 and RFC 5861):
    ///
    /// - a fresh stored answer (its age below its freshness lifetime) is
    ///   returned without asking the server;
    /// - a stale one that may be used stale is returned under
    ///   `.cacheFirst` while younger than its `maxAge`, or within its
    ///   `stale-while-revalidate` window, then revalidated in the background;
    /// - otherwise the server is asked, conditionally when the stored
    ///   answer has validators (`If-None-Match`, `If-Modified-Since`); a
    ///   304 refreshes the entry and returns it;
    /// - when the server cannot be reached or answers 502, 503 or 504
    ///   (the app is offline), or answers another 5xx within the entry's
    ///   `stale-if-error` window, the stale answer is returned;
    /// - an answer with `must-revalidate` or `no-cache` is never returned
    ///   stale: the error is thrown instead.
    func answer(_ request: URLRequest, policy: CachePolicy, fetch: @escaping Fetch) async throws -> WebServiceResponse {
        if policy == .networkOnly {
            return try Self.checked(try await fetch(request))
        }
        let key = Self.key(of: request)
        let stored = read(key, matching: request)
        let now = Date()
        if let stored {
            let age = stored.age(at: now)
            let lifetime = stored.freshnessLifetime
            if age < lifetime {
                return stored.response(isStale: false, at: now)
            }
            if !stored.forbidsStale {
                if case .cacheFirst(let maxAge) = policy, age <= maxAge {
                    return stored.response(isStale: true, at: now)
                }
                if let window = stored.staleWhileRevalidate, age - lifetime <= window {
                    revalidateInBackground(request, stored: stored, key: key, fetch: fetch)
                    return stored.response(isStale: true, at: now)
                }
            }
        }
        return try await revalidate(request, stored: stored, key: key, fetch: fetch)
    }

    /// Asks the server (conditionally when `stored` has validators), keeps
    /// what it answers, and falls back on `stored` as ``answer(_:policy:fetch:)`` says.
    private func revalidate(
        _ request: URLRequest, stored: Entry?, key: String, fetch: Fetch
    ) async throws -> WebServiceResponse {
        var conditional = request
        if let etag = stored?.header("ETag") {
            conditional.setValue(etag, forHTTPHeaderField: "If-None-Match")
        }
        if let lastModified = stored?.header("Last-Modified") {
            conditional.setValue(lastModified, forHTTPHeaderField: "If-Modified-Since")
        }
        let requestedAt = Date()
        let response: WebServiceResponse
        do {
            response = try await fetch(conditional)
        } catch let error as WebServiceError where error.isUnreachable {
            guard let stored, !stored.forbidsStale else { throw error }
            return stored.response(isStale: true, at: Date())
        }
        let receivedAt = Date()
        if response.status == 304, var stored {
            stored.refresh(with: response, requestedAt: requestedAt, receivedAt: receivedAt)
            write(stored, key: key)
            return stored.response(isStale: false, at: receivedAt)
        }
        if let stored, !stored.forbidsStale, (500..<600).contains(response.status) {
            let staleness = stored.age(at: receivedAt) - stored.freshnessLifetime
            let withinStaleIfError = stored.staleIfError.map { staleness <= $0 } ?? false
            if WebServiceError.unavailableStatuses.contains(response.status) || withinStaleIfError {
                return stored.response(isStale: true, at: receivedAt)
            }
        }
        let checked = try Self.checked(response)
        if checked.status == 200,
            let entry = Entry(request: request, response: checked, requestedAt: requestedAt, receivedAt: receivedAt)
        {
            write(entry, key: key)
        }
        return checked
    }

    /// Revalidates `stored` in a task of its own, unless one is already
    /// revalidating the same entry; its outcome only updates the cache.
    private func revalidateInBackground(_ request: URLRequest, stored: Entry, key: String, fetch: @escaping Fetch) {
        lock.withLock {
            guard revalidations[key] == nil else { return }
            revalidations[key] = Task.detached { [self] in
                _ = try? await revalidate(request, stored: stored, key: key, fetch: fetch)
                lock.withLock { revalidations[key] = nil }
            }
        }
    }

    /// Waits until the revalidations that `stale-while-revalidate` started
    /// in the background have finished (those started meanwhile too), so
    /// that the entries they renew are on disk.
    ///
    /// ```swift
    /// let answer = try await client.send(WebServiceRequest(.get, "/rates"))   // stale, renewed in the background
    /// await cache.waitForBackgroundRevalidations()
    /// ```
    public func waitForBackgroundRevalidations() async {
        while let running = lock.withLock({ revalidations.values.first }) {
            await running.value
        }
    }

    private static func checked(_ response: WebServiceResponse) throws -> WebServiceResponse {
        guard (200..<300).contains(response.status) else {
            throw WebServiceError(status: response.status, headers: response.headers, body: response.data)
        }
        return response
    }

    /// What an entry is stored under: the method, the URL without its user
    /// and password, and the digest of the credentials (``CredentialFields``).
    static func key(of request: URLRequest) -> String {
        let url = request.url.map { CredentialFields.removed(from: $0).absoluteString } ?? ""
        var key = (request.httpMethod ?? "GET") + " " + url
        if let credentials = CredentialFields.digest(of: request) { key += " credentials:" + credentials }
        return key
    }

    /// The file name of an entry: the SHA-256 of its key (the entry repeats
    /// the key, so a collision is a miss).
    private func fileName(_ key: String) -> String {
        SHA256.hexDigest(key) + "." + Self.entryExtension
    }

    private static func isEntryName(_ name: String) -> Bool {
        let stem = name.dropLast(entryExtension.count + 1)
        return stem.count == 64 && stem.allSatisfy { $0.isHexDigit && !$0.isUppercase }
    }

    // MARK: - Files

    /// Creates `directory` and the folders missing above it with mode 0700,
    /// and sets `directory` itself to 0700 if it was there.
    private static func createPrivateDirectory(_ directory: URL) throws {
        var missing: [URL] = []
        var folder = directory.standardizedFileURL
        while !FileManager.default.fileExists(atPath: folder.path), folder.path != "/" {
            missing.append(folder)
            folder = folder.deletingLastPathComponent()
        }
        for folder in missing.reversed() {
            do {
                try FileManager.default.createDirectory(
                    at: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            } catch  where FileManager.default.fileExists(atPath: folder.path) {
                // Created meanwhile by another cache or process.
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: folder.path)
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
    }

    /// Writes `data` to the new file `url`, created with mode 0600.
    private static func writePrivateFile(_ data: Data, to url: URL) -> Bool {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let count = pwrite(descriptor, bytes.baseAddress! + offset, bytes.count - offset, off_t(offset))
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
    }

    private func read(_ key: String, matching request: URLRequest) -> Entry? {
        let name = fileName(key)
        let file = directory.appending(path: name)
        guard let data = try? Data(contentsOf: file), let entry = Entry(file: data), entry.key == key,
            entry.matches(request)
        else { return nil }
        let now = Date()
        lock.withLock { if index[name] != nil { index[name]!.lastUsed = now } }
        try? FileManager.default.setAttributes([.modificationDate: now], ofItemAtPath: file.path)
        return entry
    }

    private func write(_ entry: Entry, key: String) {
        let name = fileName(key)
        let data = entry.fileData
        guard data.count <= sizeLimit else { return }
        let temporary = directory.appending(path: ".tmp-" + UUID().uuidString)
        guard Self.writePrivateFile(data, to: temporary) else {
            try? FileManager.default.removeItem(at: temporary)
            return
        }
        guard rename(temporary.path, directory.appending(path: name).path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            return
        }
        let evicted: [String] = lock.withLock {
            totalSize -= index[name]?.size ?? 0
            index[name] = (data.count, Date())
            totalSize += data.count
            var evicted: [String] = []
            if totalSize > sizeLimit {
                for (candidate, usage) in index.sorted(by: { $0.value.lastUsed < $1.value.lastUsed }) where candidate != name {
                    guard totalSize > sizeLimit else { break }
                    index[candidate] = nil
                    totalSize -= usage.size
                    evicted.append(candidate)
                }
            }
            return evicted
        }
        for candidate in evicted { try? FileManager.default.removeItem(at: directory.appending(path: candidate)) }
    }
}
