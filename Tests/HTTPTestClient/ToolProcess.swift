import Foundation

/// A command-line tool run by a test (openssl, curl, a program's
/// `hash-password`): its standard input given, its standard output
/// returned, its standard error dropped.
///
/// ```swift
/// let key = try ToolProcess.run("/usr/bin/openssl", ["genpkey", "-algorithm", "ed25519"])
/// ```
public enum ToolProcess {
    /// The tool exited with another status than 0.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs `command` with `arguments` and `input`; its standard output.
    public static func run(_ command: String, _ arguments: [String], input: Data = Data()) throws -> Data {
        let process = Process()
        process.executableURL = URL(filePath: command)
        process.arguments = arguments
        let standardInput = Pipe()
        let standardOutput = Pipe()
        process.standardInput = standardInput
        process.standardOutput = standardOutput
        process.standardError = FileHandle.nullDevice
        try process.run()
        standardInput.fileHandleForWriting.write(input)
        try standardInput.fileHandleForWriting.close()
        let output = standardOutput.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "\(command) \(arguments) exited \(process.terminationStatus)")
        }
        return output
    }
}
