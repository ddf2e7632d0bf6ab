internal import CMicroHTTPD
internal import CMicroHTTPDPatches
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
/// - **event writes**: an event stream's bytes are sent to its socket by
///   the content reader itself, in the pass that has them, and only what
///   the socket does not take then is handed to libmicrohttpd (`StreamPump`);
///   stock: libmicrohttpd sends what the reader gave at its next pass over
///   its connections. This relies on libmicrohttpd sending nothing of a
///   response's body but what its reader gave, and calling the reader only
///   once that is sent, which holds of every tested version; the response
///   is then sent without chunks and closes its connection at its end.
///
/// They are made only on a tested version (``testedVersions``) and
/// architecture, unless the policy says otherwise; the stock path is
/// correct everywhere, and `make test` runs the HTTP suites on both.
/// (A streamed answer to HEAD always closes its connection: libmicrohttpd
/// 0.9.75 sends the terminating chunk even for HEAD, and closing is correct
/// whatever the version does, so that is no patch.)
///
/// Each can be left out on its own (`--mhd-patches error-pages,event-writes`),
/// so that `make bench` can tell what each buys.
///
/// ```swift
/// let patches = LibraryPatches.resolve(.off)
/// print(patches)   // "libmicrohttpd 0.9.75: its internals are not patched (turned off)"
/// ```
public struct LibraryPatches: Sendable, CustomStringConvertible {
    /// One change to libmicrohttpd's behaviour.
    public enum Patch: String, Sendable, Hashable, CaseIterable, Comparable {
        /// libmicrohttpd's own error responses become problem documents.
        case errorPages = "error-pages"
        /// A connection's pool is given back or left unzeroed, not zeroed.
        case poolRelease = "pool-release"
        /// An event stream's reader sends its bytes itself.
        case eventWrites = "event-writes"

        /// The versions this patch has passed the HTTP suites on, when
        /// fewer than ``LibraryPatches/testedVersions``.
        var onlyTestedOn: [String]? { self == .eventWrites ? ["0.9.75"] : nil }

        public static func < (left: Patch, right: Patch) -> Bool {
            (allCases.firstIndex(of: left) ?? 0) < (allCases.firstIndex(of: right) ?? 0)
        }
    }

    /// When to make which changes: `on` (every patch, on a tested version
    /// and architecture), `off`, `force` (every patch, on any version of a
    /// supported architecture), or the names of some patches separated by
    /// commas (those only, on a tested version and architecture).
    ///
    /// ```swift
    /// HTTPServer.Configuration(libraryPatches: .off)
    /// LibraryPatches.Policy(rawValue: "error-pages,pool-release")   // two of the three
    /// ```
    public struct Policy: Sendable, Hashable, RawRepresentable {
        /// The patches asked for.
        public let patches: Set<Patch>
        /// Whether they are made on versions off the tested list.
        public let anyVersion: Bool

        /// Every patch, on a tested version and architecture only (the default).
        public static let onTested = Policy(patches: Set(Patch.allCases), anyVersion: false)
        /// None: libmicrohttpd as it comes.
        public static let off = Policy(patches: [], anyVersion: false)
        /// Every patch on any version, on a supported architecture: to try
        /// a version before it goes on the tested list (scripts/mhd-versions).
        public static let forced = Policy(patches: Set(Patch.allCases), anyVersion: true)

        /// `patches` only, on a tested version and architecture.
        public static func only(_ patches: Set<Patch>) -> Policy { Policy(patches: patches, anyVersion: false) }

        private init(patches: Set<Patch>, anyVersion: Bool) {
            self.patches = patches
            self.anyVersion = anyVersion
        }

        /// `on`, `off`, `force`, or patch names separated by commas; `nil`
        /// for anything else (an unknown name, an empty list).
        public init?(rawValue: String) {
            switch rawValue {
            case "on": self = .onTested
            case "off": self = .off
            case "force": self = .forced
            default:
                let names = rawValue.split(separator: ",", omittingEmptySubsequences: false)
                    .map { String($0.filter { $0 != " " }) }
                let patches = names.compactMap(Patch.init(rawValue:))
                guard !names.isEmpty, patches.count == names.count else { return nil }
                self = .only(Set(patches))
            }
        }

        public var rawValue: String {
            switch self {
            case .onTested: "on"
            case .off: "off"
            case .forced: "force"
            default: patches.sorted().map(\.rawValue).joined(separator: ",")
            }
        }

        // Compared by their fields: RawRepresentable's default `==` would
        // compare raw values, whose getter compares policies.
        public static func == (left: Policy, right: Policy) -> Bool {
            left.patches == right.patches && left.anyVersion == right.anyVersion
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(patches)
            hasher.combine(anyVersion)
        }

        /// The forms `init(rawValue:)` reads, for messages.
        public static let syntax =
            "on, off, force, or patch names separated by commas ("
            + Patch.allCases.map(\.rawValue).joined(separator: ", ") + ")"
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
    /// The patches in effect.
    public let patches: Set<Patch>
    /// Which path was taken and why, in a line for the log.
    public let description: String

    /// libmicrohttpd's error responses become problem documents.
    public let replacesErrorPages: Bool
    /// Connection pools are given back or left unzeroed rather than zeroed.
    public let releasesPoolPages: Bool
    /// Event streams' readers send their bytes themselves.
    public let writesEventsDirectly: Bool

    // The flags are stored: the request path reads them on every request.
    init(policy: Policy, patches: Set<Patch>, description: String) {
        self.policy = policy
        self.patches = patches
        self.description = description
        replacesErrorPages = patches.contains(.errorPages)
        releasesPoolPages = patches.contains(.poolRelease)
        writesEventsDirectly = patches.contains(.eventWrites)
    }

    /// Whether any change is in effect.
    public var isPatched: Bool { !patches.isEmpty }

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
            case _ where !policy.anyVersion && !testedVersions.contains(loadedVersion):
                "\(loadedVersion) is not on the tested list (\(testedVersions.joined(separator: ", ")))"
            default: nil
            }
        if let refusal {
            return LibraryPatches(policy: policy, patches: [], description: "\(library): its internals are not patched (\(refusal))")
        }
        let asked = policy.patches.sorted()
        let untested = asked.filter { !policy.anyVersion && !($0.onlyTestedOn?.contains(loadedVersion) ?? true) }
        let installed = asked.filter { !untested.contains($0) && install($0) }
        let impossible = asked.filter { !installed.contains($0) && !untested.contains($0) }
        let left = Patch.allCases.filter { !policy.patches.contains($0) }
        let why = policy.anyVersion && !testedVersions.contains(loadedVersion) ? "forced, not on the tested list" : "tested"
        var description = "\(library): patched (\(why)): \(installed.map(\.rawValue).joined(separator: ", "))"
        if !left.isEmpty { description += "; left out: \(left.map(\.rawValue).joined(separator: ", "))" }
        if !untested.isEmpty { description += "; not tested on \(loadedVersion): \(untested.map(\.rawValue).joined(separator: ", "))" }
        if !impossible.isEmpty { description += "; not possible in this build: \(impossible.map(\.rawValue).joined(separator: ", "))" }
        return LibraryPatches(policy: policy, patches: Set(installed), description: description)
    }

    /// Makes `patch` once per process, on the first server that asks for
    /// it; whether it is in effect.
    private static func install(_ patch: Patch) -> Bool {
        switch patch {
        case .errorPages: errorPagesInstalled
        case .poolRelease: poolReleaseInstalled
        case .eventWrites: true
        }
    }

    private static let errorPagesInstalled = mhd_error_hook_install(Daemon.libraryErrorReplacement)
    private static let poolReleaseInstalled = mhd_pool_release_install()
}
