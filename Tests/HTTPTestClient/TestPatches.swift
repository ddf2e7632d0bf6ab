#if canImport(Glibc)
import Glibc
#endif
import HTTPServer

/// The libmicrohttpd patches the tests' servers run with, from the
/// environment variable `MHD_PATCHES`: `on` (the default: on the tested
/// versions), `off` or `force` (``LibraryPatches/Policy``). `make test` runs
/// the HTTP suites a second time with `MHD_PATCHES=off`, so that the stock
/// path is tested too; scripts/mhd-versions runs them with `force` and `off`.
///
/// ```swift
/// HTTPServer.Configuration(port: 0, libraryPatches: TestPatches.policy)
/// if TestPatches.resolved.replacesErrorPages { /* a problem document */ } else { /* libmicrohttpd's HTML page */ }
/// ```
public enum TestPatches {
    /// The policy every test server (in process or not) is given.
    public static let policy: LibraryPatches.Policy = {
        guard let value = getenv("MHD_PATCHES").map({ String(cString: $0) }), !value.isEmpty else { return .onTested }
        guard let policy = LibraryPatches.Policy(rawValue: value) else {
            fatalError("MHD_PATCHES=\(value): expected \(LibraryPatches.Policy.syntax)")
        }
        return policy
    }()

    /// What the policy comes to in this process: which patches are in effect.
    public static let resolved = LibraryPatches.resolve(policy)

    /// The server option for a server process, as its environment variable
    /// with `prefix` (`EMPLOYEES_`, `SQL_REST_`).
    public static func environment(prefix: String) -> (name: String, value: String) {
        (prefix + "MHD_PATCHES", policy.rawValue)
    }
}
