#if canImport(Glibc)
import Glibc
#endif
import Logging
import Locking
import RequestTracing
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd, run by event loops.
///
/// A few event-loop threads (``Configuration/eventLoops``) each serve many
/// connections. The handler is called on a loop once the request, body
/// included, has been received, and must not block: work that may block
/// goes in ``HTTPResponse/blocking(_:)`` (run on a worker thread),
/// ``HTTPResponse/later(_:)`` (completed by another thread) or
/// ``HTTPResponse/async(_:)``, and the connection is set aside meanwhile. A
/// response may stream (`HTTPResponse.Body.stream`), pulled on worker
/// threads as the client reads (docs/THREADING.md).
///
/// ```swift
/// let server = HTTPServer(configuration: .init(port: 8080)) { request in
///     HTTPResponse(text: "Hello, \(request.pathSegments.last ?? "World")")
/// }
/// try server.start()
/// server.runUntilSignalled()   // SIGINT or SIGTERM: graceful stop
/// ```
public final class HTTPServer: Sendable {
    /// What the server binds to and the limits it enforces.
    ///
    /// ```swift
    /// HTTPServer.Configuration(host: "0.0.0.0", port: 8080, maximumBodySize: 1 << 20)
    /// ```
    public struct Configuration: Sendable {
        /// A numeric IPv4 or IPv6 address, or `localhost`.
        public var host: String
        /// The TCP port; 0 binds an ephemeral port (see `HTTPServer.port`).
        public var port: Int
        /// Connections served at once; more are refused.
        public var maximumConnections: Int
        /// Seconds a connection may stay idle before it is closed.
        public var connectionTimeout: Int
        /// Largest request body in bytes; a larger one is answered 413.
        public var maximumBodySize: Int
        /// Lower limits than ``maximumBodySize`` for the bodies sent to
        /// some paths (`/jsonrpc`: the request's path as a router reads it,
        /// its segments percent-decoded, one slash between them, so that
        /// `/json%72pc/` is `/jsonrpc`). A body past its path's limit is
        /// answered 413 as one past ``maximumBodySize`` is: at once, unread,
        /// when `Content-Length` announces it.
        ///
        /// ```swift
        /// configuration.maximumBodySizeByPath = ["/jsonrpc": 1 << 20]
        /// ```
        public var maximumBodySizeByPath: [String: Int] = [:]
        /// Largest request line plus header fields, in bytes; a larger
        /// request is answered 414 or 431 with a problem document, whatever
        /// its size. (Past twice the limit, less for a section of many
        /// short fields, libmicrohttpd refuses the request itself, when its
        /// per-connection memory pool, sized from this limit, is full; the
        /// server replaces its answer with the same document.)
        ///
        /// The default, 16 KB, is Node.js's (Apache and nginx allow 8 KB
        /// per line). libmicrohttpd zeroes its whole per-connection pool
        /// (sized from this limit) after every request, so a larger limit
        /// costs CPU on every request, not only on large ones.
        public var maximumHeaderSize: Int
        /// Seconds `stop()` lets in-flight requests finish.
        public var shutdownTimeout: Double
        /// Event-loop threads, each running a libmicrohttpd daemon of its
        /// own on a listening socket of its own (the kernel spreads new
        /// connections over them); fewer than one counts as one. A loop
        /// serves many connections, so more loops only help with more
        /// processors: `ServiceHost` runs half the machine's.
        public var eventLoops: Int
        /// gzip for clients that accept it; `nil`: never.
        public var compression: ResponseCompression?
        /// Which other origins' web pages may call the server; `nil`: none (no CORS header is sent).
        public var crossOrigin: CrossOriginPolicy?
        /// The access log line as metadata fields (`method`, `path`,
        /// `status`, `bytes`, `durationMs`, `requestId`) for a log handler
        /// that writes fields (JSON lines); `false`: one line of text
        /// (`GET /items/1 200 42 bytes 0.4 ms requestId=…`), cheaper.
        public var accessLogFields: Bool
        /// HTTPS with this certificate and key (libmicrohttpd's GnuTLS); `nil`: plain HTTP.
        /// ``HTTPServer/reloadTLS(_:)`` replaces it while the server runs.
        public var tls: TLSCertificate?
        /// Decides from the header fields, before the body is read, whether
        /// a request goes on and as which role (an authenticator); `nil`:
        /// every request goes on, without a role.
        public var admission: (any RequestAdmission)?
        /// Seconds a request's body may take to arrive, from the end of its header fields.
        public var bodyTimeout: Double = 30
        /// Seconds a streamed response may take to be sent, from its first
        /// block, however slowly its client reads; past it the connection is
        /// closed (the client sees a truncated body), and what the response
        /// held (a database connection) is let go.
        public var responseTimeout: Double = 600
        /// The most bytes of request bodies held at once, every request's
        /// together (in memory or in temporary files); a body that would go
        /// past it is discarded and its request answered 503. It bounds
        /// ``maximumBodySize`` too: a body larger than it is answered 413.
        public var maximumBodyBytesInFlight: Int = 64 << 20
        /// The largest body held in memory: past it, a body (other than a
        /// form's) goes on to a temporary file (``HTTPRequest/spooledBody``),
        /// so that a handler reading it in pieces holds none of it at once.
        public var bodyMemoryLimit: Int = 1 << 20
        /// Whether a request that may change state (any method but GET,
        /// HEAD and OPTIONS) from a web page of another site is refused with
        /// 403: its `Origin` is not one of ``allowedHosts`` on the port the
        /// request came to, nor one ``crossOrigin`` lists by name (`*` lets
        /// pages read, not write), or, without `Origin`, its `Sec-Fetch-Site`
        /// is `cross-site`. A browser sends such requests (a form posted
        /// from elsewhere) with the user's credentials.
        public var refusesCrossSiteWrites = true
        /// The host names the server answers for, compared with the host
        /// part of each request's `Host` (without its port, ignoring case);
        /// a request for another name is answered 421 before anything else,
        /// so that a page that rebinds its own name to the server's address
        /// (DNS rebinding) reaches nothing. `*` among them: any name.
        /// `nil`, the default: the names of ``host``, the address and
        /// `localhost` for a loopback address, `localhost`, `127.0.0.1` and
        /// `::1` for `localhost`, the machine's host name, `localhost` and
        /// every interface's address for `0.0.0.0` and `::`, the address and
        /// the machine's host name for another. A server behind a proxy or
        /// a DNS name lists the names its clients use.
        ///
        /// ```swift
        /// configuration.allowedHosts = ["api.example.com", "localhost"]
        /// ```
        public var allowedHosts: [String]?
        /// Seconds a request may wait for its admission's decision
        /// (``Admission/pending(_:)``, a password check); past it, it is
        /// answered 503 with `Retry-After`, whatever the check then decides.
        public var admissionTimeout: Double = 10
        /// With ``tls``: the GnuTLS priority string, which chooses the
        /// protocol versions and ciphers a handshake may agree on
        /// (`NORMAL:-VERS-TLS1.2` drops TLS 1.2, say). A string GnuTLS
        /// rejects makes `start()` throw. The default allows TLS 1.2 and 1.3 only.
        /// ``HTTPServer/reloadTLSPriorities(_:)`` replaces it while the server runs.
        public var tlsPriorities: String
        /// When the server changes libmicrohttpd's behaviour from
        /// underneath, for speed, memory and problem documents: by default
        /// only on the versions and architectures tested (``LibraryPatches``).
        public var libraryPatches: LibraryPatches.Policy
        /// The tracer of the requests: with one, each request has a server
        /// span (its parent from the request's `traceparent`, if any),
        /// with a child for its admission, and the handler gets the
        /// request's ``HTTPRequest/trace`` when the span records. `nil`:
        /// no span, nothing read of `traceparent`.
        ///
        /// ```swift
        /// configuration.tracer = try OTLPTracer(.init(endpoint: "http://127.0.0.1:4318", serviceName: "api"), logger: logger)
        /// ```
        public var tracer: (any Tracer)?
        /// Whether every answer carries `Server-Timing`, in milliseconds:
        /// `admission` (when the request had one), `handler` (the handler
        /// and the work its response waited for: the database's
        /// statements) and `total` (from the request line to the answer's
        /// header).
        public var serverTiming = false

        /// Every setting has a default; name only what differs.
        ///
        /// ```swift
        /// HTTPServer.Configuration(port: 0, shutdownTimeout: 2)
        /// ```
        public init(
            host: String = "127.0.0.1",
            port: Int = 8080,
            maximumConnections: Int = 512,
            connectionTimeout: Int = 30,
            maximumBodySize: Int = 10 << 20,
            maximumHeaderSize: Int = 16 << 10,
            shutdownTimeout: Double = 10,
            eventLoops: Int = 1,
            compression: ResponseCompression? = ResponseCompression(),
            crossOrigin: CrossOriginPolicy? = nil,
            tls: TLSCertificate? = nil,
            tlsPriorities: String = Configuration.modernTLSPriorities,
            accessLogFields: Bool = false,
            libraryPatches: LibraryPatches.Policy = .onTested
        ) {
            self.tls = tls
            self.tlsPriorities = tlsPriorities
            self.libraryPatches = libraryPatches
            self.accessLogFields = accessLogFields
            self.compression = compression
            self.crossOrigin = crossOrigin
            self.host = host
            self.port = port
            self.maximumConnections = maximumConnections
            self.connectionTimeout = connectionTimeout
            self.maximumBodySize = maximumBodySize
            self.maximumHeaderSize = maximumHeaderSize
            self.shutdownTimeout = shutdownTimeout
            self.eventLoops = eventLoops
        }

        /// GnuTLS's `NORMAL` ciphers over TLS 1.3 and 1.2 only: no TLS 1.0 or
        /// 1.1, which current browsers and clients no longer offer either.
        public static let modernTLSPriorities = "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
    }

    /// The certificate chain and private key an HTTPS server presents, as
    /// PEM text (`-----BEGIN CERTIFICATE-----`, `-----BEGIN PRIVATE KEY-----`).
    ///
    /// ```swift
    /// HTTPServer.Configuration(port: 8443, tls: TLSCertificate(certificatePEM: certificate, privateKeyPEM: key))
    /// ```
    public struct TLSCertificate: Sendable, Hashable {
        public var certificatePEM: String
        public var privateKeyPEM: String

        public init(certificatePEM: String, privateKeyPEM: String) {
            self.certificatePEM = certificatePEM
            self.privateKeyPEM = privateKeyPEM
        }
    }

    /// Turns a request into a response. Called after the whole body has
    /// arrived, on an event loop, where it must not block: it returns
    /// ``HTTPResponse/blocking(_:)`` for work that may, which then runs on a
    /// worker thread, or ``HTTPResponse/later(_:)`` for work another thread
    /// completes. It receives the request to keep (`consuming`), so that
    /// passing it on moves it.
    public typealias Handler = @Sendable (consuming HTTPRequest) -> HTTPResponse

    /// Why the server could not start.
    ///
    /// ```swift
    /// do { try server.start() } catch { print(error) }   // "cannot listen on 127.0.0.1:80"
    /// ```
    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    private let configuration: Configuration
    private let logger: Logger
    private let handler: Handler
    private let daemon = Locked<Daemon?>(nil)
    private let boundPort = Atomic<Int>(0)

    /// Creates a server; nothing is bound until `start()`.
    ///
    /// ```swift
    /// let server = HTTPServer(configuration: .init(port: 0)) { _ in HTTPResponse(status: .noContent) }
    /// ```
    public init(
        configuration: Configuration = .init(),
        logger: Logger = Logger(label: "http"),
        handler: @escaping Handler
    ) {
        self.configuration = configuration
        self.logger = logger
        self.handler = handler
    }

    deinit {
        stop()
    }

    /// Binds the socket and serves in background threads; returns at once.
    /// Starting a running server does nothing. It first raises the
    /// process's soft limit on open files to the hard limit (each
    /// connection takes a file descriptor), and logs which of
    /// libmicrohttpd's patches are in effect (``LibraryPatches``).
    ///
    /// ```swift
    /// try server.start()
    /// print("listening on port \(server.port)")
    /// ```
    public func start() throws {
        try daemon.withLock { daemon in
            guard daemon == nil else { return }
            let descriptors = FileDescriptorLimit.raiseToHardLimit()
            if descriptors < configuration.maximumConnections + 64 {
                logger.warning(
                    "the process may open \(descriptors) file descriptors, too few for \(configuration.maximumConnections) connections (raise the hard limit, ulimit -Hn)"
                )
            }
            let processor = RequestProcessor(configuration: configuration, logger: logger, handler: handler)
            let patches = processor.libraryPatches
            if patches.isPatched || patches.policy == .off {
                logger.info("\(patches)")
            } else {
                logger.warning("\(patches)")
            }
            let started = try Daemon(configuration: configuration, processor: processor)
            boundPort.store(started.port, ordering: .releasing)
            logger.info("listening on \(configuration.host):\(started.port), answering for \(processor.allowedHosts)")
            daemon = started
        }
    }

    /// The port the server is bound to (the chosen one when configured
    /// with port 0), or 0 when not running.
    ///
    /// ```swift
    /// let url = "http://127.0.0.1:\(server.port)/"
    /// ```
    public var port: Int {
        boundPort.load(ordering: .acquiring)
    }

    /// Stops gracefully: stops accepting connections, lets in-flight
    /// requests finish for up to `shutdownTimeout` seconds, then closes
    /// everything. Stopping a stopped server does nothing.
    ///
    /// ```swift
    /// server.stop()
    /// ```
    public func stop() {
        daemon.withLock { daemon in
            guard let running = daemon else { return }
            running.shutDown(timeout: configuration.shutdownTimeout, logger: logger)
            daemon = nil
            boundPort.store(0, ordering: .releasing)
        }
    }

    /// Makes new connections present `certificate` from now on (a renewed
    /// certificate, read again from its files); connections already open
    /// keep the one they began with. The key must match the certificate;
    /// when it does not, or either cannot be loaded, this throws and the
    /// server goes on presenting the one it had. A server started
    /// without TLS, or not running, throws too. A start after a stop
    /// presents the configuration's certificate again.
    ///
    /// ```swift
    /// try server.reloadTLS(TLSCertificate(certificatePEM: renewedCertificate, privateKeyPEM: renewedKey))
    /// ```
    public func reloadTLS(_ certificate: TLSCertificate) throws(TLSError) {
        try daemon.withLock { (daemon) throws(TLSError) in
            guard let daemon else { throw TLSError(description: "the server is not running") }
            try daemon.replaceTLS(with: certificate)
        }
    }

    /// Makes the handshakes of new connections agree on what the GnuTLS
    /// priority string `priorities` allows from now on (protocol versions,
    /// ciphers); connections already open keep what they agreed on. When
    /// GnuTLS rejects the string, this throws, naming the part it stopped
    /// at, and the server goes on with the priorities it had. A server
    /// started without TLS, or not running, throws too. A start after a
    /// stop uses the configuration's ``Configuration/tlsPriorities`` again.
    ///
    /// ```swift
    /// try server.reloadTLSPriorities("NORMAL:-VERS-ALL:+VERS-TLS1.3")   // TLS 1.3 only from now on
    /// ```
    public func reloadTLSPriorities(_ priorities: String) throws(TLSError) {
        try daemon.withLock { (daemon) throws(TLSError) in
            guard let daemon else { throw TLSError(description: "the server is not running") }
            try daemon.replaceTLSPriorities(with: priorities)
        }
    }

    /// Blocks until the process receives SIGINT or SIGTERM, then stops
    /// gracefully and returns (the caller then exits with status 0). With
    /// `onHangup`, each SIGHUP meanwhile calls it (on this thread; the
    /// server keeps serving) instead of ending the process.
    ///
    /// On SIGTERM, with `drainSeconds` over 0, the server first calls
    /// `onDrain` (which turns a readiness probe to 503) and goes on serving
    /// for `drainSeconds`, so that a load balancer stops sending requests
    /// before the listener closes; SIGINT (Ctrl-C) stops without draining.
    /// A second SIGINT or SIGTERM, during the drain or the stop, ends the
    /// process at once (exit status 128 + the signal). `beforeStop` runs
    /// right before the stop (it ends responses that would not end by
    /// themselves: event streams). `ready` runs once the signals are
    /// handled: the place to announce that the server serves, since a
    /// SIGHUP sent before would end the process.
    ///
    /// ```swift
    /// try server.start()
    /// server.runUntilSignalled(drainSeconds: 5, onDrain: { health.beginDraining() }, onHangup: { reloadConfiguration() })
    /// ```
    public func runUntilSignalled(
        drainSeconds: Double = 0, onDrain: (() -> Void)? = nil, onHangup: (() -> Void)? = nil, beforeStop: (() -> Void)? = nil,
        ready: () -> Void = {}
    ) {
        SignalWaiter.wait(for: onHangup == nil ? [SIGINT, SIGTERM] : [SIGINT, SIGTERM, SIGHUP], ready: ready) { signal in
            if signal == SIGHUP, let onHangup {
                logger.info("received SIGHUP")
                onHangup()
                return true
            }
            if signal == SIGTERM, drainSeconds > 0 {
                logger.info("received SIGTERM, draining for \(drainSeconds) s before stopping")
                onDrain?()
                let end = ContinuousClock.now + .milliseconds(Int(drainSeconds * 1000))
                while ContinuousClock.now < end { usleep(10_000) }
            }
            logger.info("received \(SignalWaiter.name(of: signal)), stopping")
            beforeStop?()
            stop()
            return false
        }
        logger.info("stopped")
    }
}
