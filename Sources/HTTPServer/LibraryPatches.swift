internal import CMicroHTTPD
internal import CMicroHTTPDErrorHook
import Synchronization

/// Which of the server's changes to libmicrohttpd's behaviour are in effect
/// for a server, and why.
///
/// The server changes libmicrohttpd from underneath, each change written
/// against the internals of the versions the test suite has passed on:
///
/// - **error pages**: libmicrohttpd's own error responses (malformed or
///   oversized requests) become problem documents (`ErrorHook.c`,
///   Daemon+LibraryErrors.swift); stock: its short HTML pages;
/// - **pool release**: a connection's memory pool is given back to the
///   kernel, or left unzeroed, instead of zeroed after each request
///   (`PoolRelease.c`, Daemon+PoolMemory.swift); stock: zeroed, so an idle
///   connection keeps its whole pool resident;
/// - **epoll suspension**: a suspended connection's socket stays in its
///   loop's epoll set (`EpollSuspension.c`, Daemon+EpollSuspension.swift);
///   stock: taken out and added back, two more system calls per suspension;
/// - **allocator**: glibc's fast bins off for the process (``AllocatorTuning``).
///
/// They are made only on a tested version (``testedVersions``) and
/// architecture, unless the policy says otherwise; the stock path is
/// correct everywhere, and `make test` runs the HTTP suites on both.
/// (A streamed answer to HEAD always closes its connection: libmicrohttpd
/// 0.9.75 sends the terminating chunk even for HEAD, and closing is correct
/// whatever the version does, so that is no patch.)
///
/// ```swift
/// let patches = LibraryPatches.resolve(.off)
/// print(patches)   // "libmicrohttpd 0.9.75: its internals are not patched (turned off)"
/// ```
public struct LibraryPatches: Sendable, CustomStringConvertible {
    /// When to make the changes.
    ///
    /// ```swift
    /// HTTPServer.Configuration(libraryPatches: .off)
    /// ```
    public enum Policy: String, Sendable, Hashable, CaseIterable {
        /// On a tested version and architecture only (the default).
        case onTested = "on"
        /// Never: libmicrohttpd as it comes.
        case off
        /// On any version, on a supported architecture: to try a version
        /// before it goes on the tested list (scripts/mhd-versions).
        case forced = "force"
    }

    /// The versions of libmicrohttpd (`MHD_get_version()`) the HTTP suites
    /// have passed on with the patches on (scripts/mhd-versions adds one).
    public static let testedVersions = ["0.9.75", "0.9.77", "1.0.1"]
    /// The architectures they have passed on.
    public static let testedArchitectures = ["x86_64"]

    /// The version of the libmicrohttpd this process has loaded.
    public static let loadedVersion: String = MHD_get_version().map { String(cString: $0) } ?? "unknown"

    /// This process's architecture.
    public static var architecture: String {
        #if arch(x86_64)
        "x86_64"
        #elseif arch(arm64)
        "arm64"
        #else
        "other"
        #endif
    }

    /// The policy asked for.
    public let policy: Policy
    /// libmicrohttpd's error responses become problem documents.
    public let replacesErrorPages: Bool
    /// Connection pools are given back or left unzeroed rather than zeroed.
    public let releasesPoolPages: Bool
    /// Suspended sockets stay in their epoll set.
    public let keepsSuspendedSockets: Bool
    /// glibc's fast bins are off.
    public let tunesAllocator: Bool
    /// Which path was taken and why, in a line for the log.
    public let description: String

    /// Whether any change is in effect.
    public var isPatched: Bool { replacesErrorPages || releasesPoolPages || keepsSuspendedSockets || tunesAllocator }

    /// What `policy` comes to in this process, making the changes it allows
    /// (each once per process; a server whose patches are off leaves them
    /// idle).
    ///
    /// ```swift
    /// LibraryPatches.resolve(.onTested).isPatched   // true on libmicrohttpd 0.9.75, x86_64
    /// ```
    public static func resolve(_ policy: Policy) -> LibraryPatches {
        let library = "libmicrohttpd \(loadedVersion)"
        let refusal: String? =
            switch policy {
            case .off: "turned off"
            case _ where !testedArchitectures.contains(architecture):
                "\(architecture) is not a tested architecture (\(testedArchitectures.joined(separator: ", ")))"
            case .onTested where !testedVersions.contains(loadedVersion):
                "\(loadedVersion) is not on the tested list (\(testedVersions.joined(separator: ", ")))"
            default: nil
            }
        if let refusal {
            return LibraryPatches(
                policy: policy, replacesErrorPages: false, releasesPoolPages: false, keepsSuspendedSockets: false,
                tunesAllocator: false, description: "\(library): its internals are not patched (\(refusal))")
        }
        let installed = installedOnce
        let names = [
            (installed.errorPages, "error pages"), (installed.poolRelease, "pool release"),
            (installed.epollSuspension, "epoll suspension"), (installed.allocator, "allocator"),
        ]
        let missing = names.filter { !$0.0 }.map(\.1)
        let why = policy == .forced && !testedVersions.contains(loadedVersion) ? "forced, not on the tested list" : "tested"
        return LibraryPatches(
            policy: policy, replacesErrorPages: installed.errorPages, releasesPoolPages: installed.poolRelease,
            keepsSuspendedSockets: installed.epollSuspension, tunesAllocator: installed.allocator,
            description: "\(library): patched (\(why)): \(names.filter(\.0).map(\.1).joined(separator: ", "))"
                + (missing.isEmpty ? "" : "; not possible in this build: \(missing.joined(separator: ", "))"))
    }

    /// The changes, made by the first server whose policy allows them.
    private static let installedOnce = (
        errorPages: mhd_error_hook_install(Daemon.libraryErrorReplacement),
        poolRelease: mhd_pool_release_install(),
        epollSuspension: mhd_epoll_suspension_install(),
        allocator: AllocatorTuning.disableFastBins()
    )
}
