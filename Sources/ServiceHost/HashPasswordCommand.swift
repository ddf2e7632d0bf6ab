import ArgumentParser
import Authentication

/// `hash-password [<user>] [--iterations <n>]`: reads a password from
/// standard input (its first line) and prints its entry for
/// `--auth-basic-file`, `user:hash`, or the hash alone without a user.
/// Every ``ServerProgram`` has it.
///
/// ```
/// employees-server hash-password alice < password    # alice:$pbkdf2-sha256$600000$…$…
/// ```
struct HashPasswordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hash-password",
        abstract: "Reads a password (a line of standard input) and prints its entry for --auth-basic-file.",
        discussion: "The entry reads <user>:$pbkdf2-sha256$<iterations>$<salt>$<hash>; without a user, the hash alone.")

    @Argument(help: "The user the entry names (no ':').")
    var user: String?

    @Option(help: "PBKDF2 iterations, 1 to \(PasswordHash.maximumIterations).")
    var iterations = PasswordHash.defaultIterations

    func validate() throws {
        guard (1...PasswordHash.maximumIterations).contains(iterations) else {
            throw ValidationError("--iterations must be 1 to \(PasswordHash.maximumIterations).")
        }
        guard user.map({ !$0.contains(":") && !$0.hasPrefix("-") }) ?? true else {
            throw ValidationError("A user name has no ':' and does not begin with '-'.")
        }
    }

    func run() throws {
        guard let password = readLine(strippingNewline: true), !password.isEmpty else {
            throw ValidationError("No password on standard input.")
        }
        guard let hash = PasswordHash.make(password: password, iterations: iterations) else {
            throw ValidationError("--iterations must be 1 to \(PasswordHash.maximumIterations).")
        }
        print(user.map { "\($0):\(hash)" } ?? "\(hash)")
    }
}
