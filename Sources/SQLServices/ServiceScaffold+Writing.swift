import FoundationEssentials

extension ServiceScaffold {
    /// What became of one file: written, or left as it was (it existed).
    public struct Outcome: Sendable {
        public var path: String
        public var isWritten: Bool
    }

    /// Writes the files into `folder` (made if missing), never over a file
    /// that exists: that one is left, and said so.
    ///
    /// ```swift
    /// for outcome in try scaffold.write(into: "api") { print(outcome.isWritten ? "wrote" : "left", outcome.path) }
    /// ```
    public func write(into folder: String) throws -> [Outcome] {
        var outcomes: [Outcome] = []
        for file in files {
            let path = (folder.hasSuffix("/") ? folder : folder + "/") + file.path
            if FileManager.default.fileExists(atPath: path) {
                outcomes.append(Outcome(path: path, isWritten: false))
                continue
            }
            let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            guard FileManager.default.createFile(atPath: path, contents: Data(file.text.utf8)) else {
                throw ServiceFolder.ReadError(description: "\(path): cannot be written")
            }
            outcomes.append(Outcome(path: path, isWritten: true))
        }
        return outcomes
    }

    /// Writes ``liveMigration`` to `path`, over the file there: it is
    /// written from the catalog, not edited.
    ///
    /// ```swift
    /// try scaffold.writeLiveMigration(to: "live.sql")
    /// ```
    public func writeLiveMigration(to path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: Data(liveMigration.utf8)) else {
            throw ServiceFolder.ReadError(description: "\(path): cannot be written")
        }
    }
}
