/// The package itself: its release, the one place the version is written.
///
/// Every program prints it for `--version` (`employees-server`, `sql-rest`,
/// `employees-client`); `CHANGELOG.md`'s latest release heading names the
/// same version, and a release is tagged with it (CONTRIBUTING.md says how).
///
/// ```swift
/// print(SwiftSQLRest.version)   // 0.3.0
/// ```
///
/// A module of its own, with no dependency, so that the client programs
/// (Foundation only) and the servers (libpq, libmicrohttpd) read the same
/// constant without either linking the other's libraries.
public enum SwiftSQLRest {
    /// The release, as SemVer `MAJOR.MINOR.PATCH`.
    public static let version = "0.3.0"
}
