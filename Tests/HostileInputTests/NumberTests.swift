import Testing

/// Numbers a client should not send: too large for any integer, negative
/// where a count is expected, beyond 32 bits, not numbers at all.
@Suite("Numbers out of range")
struct NumberTests {
    let server = HostileServer.shared

    @Test(
        "each is a 400 problem",
        arguments: [
            "/employees/99999999999999999999", "/employees/-99999999999999999999", "/employees/9223372036854775808",
            "/employees/1e3", "/employees/0x10", "/employees/%2B%2B1", "/employees/1.5", "/employees/NaN",
            "/employees?limit=-1", "/employees?offset=-1", "/employees?limit=99999999999999999999",
            "/employees?limit=1e9", "/employees?offset=abc", "/employees?limit=",
            "/math/sum?a=1e999999&b=1x", "/math/round?value=1&places=2147483648", "/math/round?value=1&places=-1",
            "/math/average?values=", "/math/sum?a=&b=",
        ])
    func outOfRange(target: String) throws {
        expectProblem(try server.send(target), 400...400, target)
    }

    /// Valid integers the database column cannot hold (`emp_no` is an
    /// `integer`): 2^31 and beyond are not found, or refused, never a 500.
    @Test(
        "beyond 32 bits",
        arguments: [
            "/employees/2147483648", "/employees/-2147483649", "/employees/9223372036854775807",
            "/employees?limit=2147483648&offset=300024", "/employees?limit=9223372036854775807&offset=9223372036854775807",
            "/employees?offset=2147483648&limit=1",
        ])
    func beyond32Bits(target: String) throws {
        let response = try server.send(target)
        if response.status == 200 {
            #expect(response.text == "[]", "\(target): \(response)")
        } else {
            expectProblem(response, 400...404, target)
        }
    }
}
