@testable import Authentication
import Testing

/// The key the password backoff counts a client by: the address, an IPv6
/// one by its /64.
@Suite("Failure backoff")
struct FailureBackoffTests {
    @Test("the backoff counts IPv4 addresses whole, IPv6 ones by their /64, IPv4-mapped ones as IPv4")
    func clients() {
        let cases: [(String?, String)] = [
            ("203.0.113.7:40000", "203.0.113.7"), ("[2001:db8:1:2:a:b:c:d]:53211", "2001:db8:1:2::/64"),
            ("[2001:db8:1:2::ffff]:1", "2001:db8:1:2::/64"), ("[2001:db8:1:3::1]:1", "2001:db8:1:3::/64"),
            ("[::ffff:203.0.113.7]:80", "203.0.113.7"), ("[::1]:8080", "::/64"), ("2001:db8::1", "2001:db8::/64"),
            (nil, ""), ("not an address", "not an address"),
        ]
        for (address, client) in cases {
            #expect(FailureBackoff.client(of: address) == client, "\(address ?? "nil")")
        }
        let backoff = FailureBackoff()
        for host in 1...4 { backoff.failed(FailureBackoff.client(of: "[2001:db8:1:2::\(host)]:443")) }
        #expect(backoff.wait(for: FailureBackoff.client(of: "[2001:db8:1:2::99]:443")) != nil)
        #expect(backoff.wait(for: FailureBackoff.client(of: "[2001:db8:1:3::1]:443")) == nil)
    }
}
