import Foundation

/// The sample database the integration suites share.
///
/// `make test` exports `PGHOST`, `PGPORT` (the private cluster) and
/// `EMPLOYEES_DATABASE` (the loaded sample database); services connect as
/// the read-only role `employees_reader`, as the executables do.
///
/// ```swift
/// let pool = ConnectionPool(.init(conninfo: try SampleDatabase.conninfo()))
/// ```
public enum SampleDatabase {
    /// A test's setup could not be done: a variable is missing, a query gave nothing.
    public struct SetupError: Error, CustomStringConvertible {
        public var description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// The value of an environment variable that `make test` sets.
    public static func variable(_ name: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else {
            throw SetupError(
                description: """
                    \(name) is not set: run the tests with `make test`, or export PGHOST, PGPORT and EMPLOYEES_DATABASE \
                    (`eval "$(scripts/pg-cluster env)"; export EMPLOYEES_DATABASE=employees`) after scripts/load-sample-db
                    """)
        }
        return value
    }

    /// libpq conninfo for the sample database as `user`, on `port` (the
    /// cluster's by default), with `searchPath` if given.
    public static func conninfo(user: String = "employees_reader", port: String? = nil, searchPath: String? = nil) throws -> String {
        let host = try variable("PGHOST")
        let port = try port ?? variable("PGPORT")
        let database = try variable("EMPLOYEES_DATABASE")
        var conninfo = "host=\(quoted(host)) port=\(quoted(port)) dbname=\(quoted(database)) user=\(quoted(user))"
        if let searchPath { conninfo += " options=\(quoted("-c search_path=\(searchPath)"))" }
        return conninfo
    }

    private static func quoted(_ value: String) -> String {
        "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}
