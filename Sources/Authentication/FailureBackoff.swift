#if canImport(Glibc)
import Glibc
#endif
import Locking

/// How long each client address must wait before its next password check,
/// after checks that failed: the first `freeFailures` cost nothing, then
/// each failure doubles the wait, from `firstWait` up to `longestWait`. A
/// quiet `forgetAfter` since its last failure clears the address; a success
/// does not (a guesser with one valid account of its own could otherwise
/// reset its count at will). Guessing passwords from one address thus slows to a few a
/// minute, while a user who mistypes once or twice never notices. Addresses
/// are counted as ``client(of:)`` says: IPv6 ones by their /64.
///
/// ```swift
/// let backoff = FailureBackoff()
/// if let wait = backoff.wait(for: "203.0.113.7") { /* 429, Retry-After: wait */ }
/// backoff.failed("203.0.113.7")
/// ```
final class FailureBackoff: Sendable {
    private struct Entry {
        var failures: Int
        var waitUntil: ContinuousClock.Instant
        var lastFailure: ContinuousClock.Instant
    }

    static let freeFailures = 3
    static let firstWait = Duration.seconds(1)
    static let longestWait = Duration.seconds(60)
    static let forgetAfter = Duration.seconds(15 * 60)
    /// Addresses remembered at most; past it the oldest quiet ones are forgotten.
    static let mostAddresses = 100_000

    private let entries = Locked<[String: Entry]>([:])

    init() {}

    /// The time `address` must still wait before a check, `nil` when none.
    func wait(for address: String, now: ContinuousClock.Instant = .now) -> Duration? {
        entries.withLock { entries in
            guard let entry = entries[address], entry.waitUntil > now else { return nil }
            return entry.waitUntil - now
        }
    }

    /// A check from `address` failed.
    func failed(_ address: String, now: ContinuousClock.Instant = .now) {
        entries.withLock { entries in
            if entries.count >= Self.mostAddresses, entries[address] == nil {
                entries = entries.filter { now - $0.value.lastFailure < Self.forgetAfter }
                if entries.count >= Self.mostAddresses { entries.removeAll() }
            }
            var entry =
                entries[address].flatMap { now - $0.lastFailure < Self.forgetAfter ? $0 : nil }
                ?? Entry(failures: 0, waitUntil: now, lastFailure: now)
            entry.failures += 1
            entry.lastFailure = now
            let doublings = entry.failures - Self.freeFailures
            if doublings > 0 {
                let wait = doublings > 6 ? Self.longestWait : min(Self.firstWait * (1 << (doublings - 1)), Self.longestWait)
                entry.waitUntil = now + wait
            }
            entries[address] = entry
        }
    }

    /// What the backoff counts a client by, from its `host:port` or
    /// `[v6]:port` address: an IPv4 address whole, an IPv6 address by its
    /// /64 prefix (`2001:db8:1:2::/64`), the block a single host or
    /// network is given (RFC 6177), so that rotating through the addresses
    /// of one's own /64 is still counted as one client; an IPv4-mapped IPv6
    /// address (`::ffff:203.0.113.7`) as the IPv4 address it maps. A port is
    /// left out: a client's ports change, its address does not.
    ///
    /// ```swift
    /// FailureBackoff.client(of: "[2001:db8:1:2:a:b:c:d]:53211")   // "2001:db8:1:2::/64"
    /// FailureBackoff.client(of: "[::ffff:203.0.113.7]:80")        // "203.0.113.7"
    /// FailureBackoff.client(of: "203.0.113.7:40000")              // "203.0.113.7"
    /// ```
    static func client(of remoteAddress: String?) -> String {
        guard let remoteAddress else { return "" }
        let host: String
        if remoteAddress.hasPrefix("["), let end = remoteAddress.firstIndex(of: "]") {
            host = String(remoteAddress[remoteAddress.index(after: remoteAddress.startIndex)..<end])
        } else if remoteAddress.firstIndex(of: ":") != remoteAddress.lastIndex(of: ":") {
            host = remoteAddress  // an IPv6 address without brackets or port
        } else if let colon = remoteAddress.lastIndex(of: ":") {
            host = String(remoteAddress[..<colon])
        } else {
            host = remoteAddress
        }
        var address = in6_addr()
        guard host.contains(":"), inet_pton(AF_INET6, host, &address) == 1 else { return host }
        var bytes = withUnsafeBytes(of: &address) { Array($0) }
        if bytes[..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return bytes[12...].map { String($0) }.joined(separator: ".")
        }
        for index in 8..<16 { bytes[index] = 0 }
        var prefix = in6_addr()
        withUnsafeMutableBytes(of: &prefix) { $0.copyBytes(from: bytes) }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &prefix, &text, socklen_t(text.count)) != nil else { return host }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/64"
    }
}
