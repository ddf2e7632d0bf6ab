import Locking

/// How long each client address must wait before its next password check,
/// after checks that failed: the first `freeFailures` cost nothing, then
/// each failure doubles the wait, from `firstWait` up to `longestWait`. A
/// quiet `forgetAfter` since its last failure clears the address; a success
/// does not (a guesser with one valid account of its own could otherwise
/// reset its count at will). Guessing passwords from one address thus slows to a few a
/// minute, while a user who mistypes once or twice never notices.
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

    /// The host part of a `host:port` or `[v6]:port` address, which the
    /// backoff counts by; a client's ports change, its address does not.
    static func host(of remoteAddress: String?) -> String {
        guard let remoteAddress else { return "" }
        if remoteAddress.hasPrefix("["), let end = remoteAddress.firstIndex(of: "]") {
            return String(remoteAddress[remoteAddress.index(after: remoteAddress.startIndex)..<end])
        }
        guard let colon = remoteAddress.lastIndex(of: ":") else { return remoteAddress }
        return String(remoteAddress[..<colon])
    }
}
