import Foundation

/// The repository's CHANGELOG.md, as the tests of `--version` read it: the
/// version a program prints must be the latest release the changelog names.
///
/// ```swift
/// #expect(printed == ReleaseNotes.latestVersion + "\n")
/// ```
public enum ReleaseNotes {
    /// The first `## [MAJOR.MINOR.PATCH]` heading of CHANGELOG.md (the
    /// `Unreleased` heading above it is not a release); empty when there is none.
    public static let latestVersion: String = {
        let file = URL(filePath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "CHANGELOG.md")
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return "" }
        return text.firstMatch(of: /\n## \[(\d+\.\d+\.\d+)\]/).map { String($0.1) } ?? ""
    }()
}
