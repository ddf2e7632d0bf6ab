#if canImport(Glibc)
import Glibc
#endif

/// A text file of `name:value` lines, the format of the password file
/// (`alice:$pbkdf2-sha256$…`) and of the role map (`alice:payroll`). Blank
/// lines and lines that begin with `#` are skipped; a name appears once.
///
/// ```swift
/// let passwords = try CredentialFile(path: "/etc/employees/passwords")
/// passwords.entries["alice"]   // "$pbkdf2-sha256$600000$…"
/// ```
public struct CredentialFile: Sendable {
    /// Why a file cannot be used; names the file and the line.
    public struct InvalidFile: Error, CustomStringConvertible {
        public let description: String
    }

    /// The values by name.
    public let entries: [String: String]

    /// Reads the file at `path`.
    ///
    /// ```swift
    /// let roles = try CredentialFile(path: "roles.txt").entries
    /// ```
    public init(path: String) throws(InvalidFile) {
        guard let text = readWholeFile(path) else { throw InvalidFile(description: "cannot read \(path)") }
        try self.init(text: text, name: path)
    }

    /// The whole text of the file at `path` (a key, a certificate).
    ///
    /// ```swift
    /// let secret = try CredentialFile.text(at: "/run/secrets/jwt")
    /// ```
    public static func text(at path: String) throws(InvalidFile) -> String {
        guard let text = readWholeFile(path) else { throw InvalidFile(description: "cannot read \(path)") }
        return text
    }

    /// Reads `text`; `name` names it in errors.
    ///
    /// ```swift
    /// let roles = try CredentialFile(text: "alice:payroll\n", name: "roles")
    /// ```
    public init(text: String, name: String) throws(InvalidFile) {
        var entries: [String: String] = [:]
        for (number, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) || line.hasPrefix("#") { continue }
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex, line.index(after: colon) != line.endIndex else {
                throw InvalidFile(description: "\(name):\(number + 1): expected name:value")
            }
            let entryName = String(line[..<colon])
            guard entries.updateValue(String(line[line.index(after: colon)...]), forKey: entryName) == nil else {
                throw InvalidFile(description: "\(name):\(number + 1): \(entryName) appears twice")
            }
        }
        self.entries = entries
    }
}

/// The whole content of the file at `path`, as UTF-8; `nil` when it cannot be read.
func readWholeFile(_ path: String) -> String? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 16_384)
    while true {
        let count = fread(&buffer, 1, buffer.count, file)
        bytes += buffer[..<count]
        if count < buffer.count { break }
    }
    guard ferror(file) == 0 else { return nil }
    return String(decoding: bytes, as: UTF8.self)
}
