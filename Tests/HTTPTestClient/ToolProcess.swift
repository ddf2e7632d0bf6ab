import Foundation

/// A command-line tool run by a test to its end (openssl, curl, gzip, psql,
/// a program's `hash-password`) as a `ChildProcess`: its standard input
/// given, its standard output and error kept apart.
///
/// ```swift
/// let key = try ToolProcess.run("/usr/bin/openssl", ["genpkey", "-algorithm", "ed25519"])
/// ```
public enum ToolProcess {
    /// The tool exited with another status than 0.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// How a tool ended: its exit status, what it wrote to its standard
    /// output and to its standard error.
    public struct Outcome: Sendable {
        public var status: Int32
        public var output: [UInt8]
        public var errors: String

        /// The standard output decoded as UTF-8.
        public var text: String { String(decoding: output, as: UTF8.self) }
    }

    /// Runs `command` (a path) with `arguments`, `input` and the tests'
    /// environment changed by `environment` (see `ChildProcess`), and waits
    /// for its end.
    public static func outcome(
        _ command: String, _ arguments: [String], input: Data = Data(), environment: [String: String?] = [:]
    ) throws -> Outcome {
        let child = try ChildProcess(command, arguments, environment: environment, separateErrors: true, input: Array(input))
        let status = child.wait() ?? -1
        return Outcome(status: status, output: child.outputBytes, errors: child.errors)
    }

    /// Runs `command` as `outcome` does; its standard output. Throws, with
    /// its standard error, if it exits with another status than 0.
    public static func run(
        _ command: String, _ arguments: [String], input: Data = Data(), environment: [String: String?] = [:]
    ) throws -> Data {
        let outcome = try outcome(command, arguments, input: input, environment: environment)
        guard outcome.status == 0 else {
            throw Failure(description: "\(command) \(arguments) exited \(outcome.status): \(outcome.errors)")
        }
        return Data(outcome.output)
    }
}
