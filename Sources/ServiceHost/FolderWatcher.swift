#if canImport(Glibc)
import Glibc
#endif
import Locking

/// Watches a folder (or one file) for changes, by polling: twice a second
/// it compares the names, sizes and modification times of the files below
/// it, and calls `changed` when they differ from the last look. Folders
/// whose name begins with `.` (an editor's, git's) are not looked into.
///
/// Polling rather than inotify: it sees files in folders created after it
/// started, on any file system, and costs a few `stat` calls per file a
/// second, nothing for the folders `sql-rest` serves.
///
/// ```swift
/// FolderWatcher.start("services") { kill(getpid(), SIGHUP) }
/// ```
enum FolderWatcher {
    static let interval: useconds_t = 500_000

    /// Starts a thread that watches `path` for as long as the process lives.
    static func start(_ path: String, changed: @escaping @Sendable () -> Void) {
        // Taken before this returns: a change made once it has returned is seen.
        let first = fingerprint(of: path)
        DetachedThread.start {
            var last = first
            while true {
                usleep(interval)
                let now = fingerprint(of: path)
                if now != last {
                    last = now
                    changed()
                }
            }
        }
    }

    /// Name, size and modification time of each file below `path`, sorted by name.
    static func fingerprint(of path: String) -> [String] {
        var entries: [String] = []
        collect(path, into: &entries)
        return entries.sorted()
    }

    private static func collect(_ path: String, into entries: inout [String]) {
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        if (info.st_mode & S_IFMT) != S_IFDIR {
            entries.append("\(path) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)")
            return
        }
        guard let directory = opendir(path) else { return }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard !name.hasPrefix(".") else { continue }
            collect(path + "/" + name, into: &entries)
        }
    }
}
