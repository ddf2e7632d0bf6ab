internal import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#endif
import Logging
import Synchronization

/// Owns the running `MHD_Daemon`s of a server: starts them in `init`, stops
/// them in `shutDown` (or `deinit`, if never shut down).
///
/// Each ``EventLoop`` runs a daemon of its own (`EventLoopDaemon`), on a
/// listening socket of its own: the sockets share the port
/// (`SO_REUSEPORT`), and the kernel spreads new connections over them.
///
/// The daemons' callbacks receive the `RequestProcessor` through their
/// `void *` argument; it is retained once from start to stop. The
/// connection notification receives the `ConnectionSetup`, which the
/// daemon holds.
final class Daemon {
    let port: Int
    private let processor: RequestProcessor
    private let connectionSetup: ConnectionSetup
    /// A daemon per loop.
    private var loopDaemons: [EventLoopDaemon] = []
    private var isRunning = true
    /// The certificate and key's PEM texts and the priority string as C
    /// strings, which the daemons may read while they run; freed after they stop.
    private var tlsStrings: [UnsafeMutablePointer<CChar>] = []

    init(configuration: HTTPServer.Configuration, processor: RequestProcessor) throws {
        self.processor = processor
        var loopDaemons: [EventLoopDaemon] = []
        var port = 0
        let address = try SocketAddress(host: configuration.host, port: configuration.port)
        let context = Unmanaged.passRetained(processor)
        do {
            connectionSetup = ConnectionSetup(
                processor: processor,
                tls: try configuration.tls.map { certificate in
                    do {
                        let priorities = try TLSPriorities(configuration.tlsPriorities)
                        return TLSCredentialStore(try TLSCredentials(certificate), priorities: priorities)
                    } catch {
                        throw HTTPServer.StartError(description: "cannot serve HTTPS: \(error)")
                    }
                })
            var flags = MHD_USE_ERROR_LOG.rawValue
            var options = Daemon.options(
                configuration: configuration, context: context.toOpaque(),
                setup: Unmanaged.passUnretained(connectionSetup).toOpaque())
            if let tls = configuration.tls {
                guard MHD_is_feature_supported(.FEATURE_TLS) == .YES else {
                    throw HTTPServer.StartError(description: "this libmicrohttpd is built without TLS support")
                }
                flags |= MHD_USE_TLS.rawValue
                // libmicrohttpd needs a certificate to start; each connection
                // is then given the store's (`connectionChanged`).
                let certificate = strdup(tls.certificatePEM)!
                let key = strdup(tls.privateKeyPEM)!
                let priorities = strdup(configuration.tlsPriorities)!
                tlsStrings = [certificate, key, priorities]
                options.append(MHD_OptionItem(option: .HTTPS_MEM_CERT, value: 0, ptr_value: UnsafeMutableRawPointer(certificate)))
                options.append(MHD_OptionItem(option: .HTTPS_MEM_KEY, value: 0, ptr_value: UnsafeMutableRawPointer(key)))
                options.append(MHD_OptionItem(option: .HTTPS_PRIORITIES, value: 0, ptr_value: UnsafeMutableRawPointer(priorities)))
            }
            // No internal thread: each loop runs its daemon (libmicrohttpd
            // then has no inter-thread channel of its own; a resume from
            // another thread wakes the loop instead, `EventLoopDaemon.resumed`).
            flags |= MHD_USE_EPOLL.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
            let sockets = try ListeningSockets(address: address, count: max(configuration.eventLoops, 1))
            port = sockets.port
            for (index, socket) in sockets.descriptors.enumerated() {
                var own = options
                own.append(MHD_OptionItem(option: .LISTEN_SOCKET, value: Int(socket), ptr_value: nil))
                guard let handle = Daemon.start(flags: flags, options: own, context: context) else {
                    for descriptor in sockets.descriptors[index...] { close(descriptor) }
                    throw HTTPServer.StartError(
                        description: "cannot serve on \(configuration.host):\(sockets.port) (see the log for the reason)")
                }
                do {
                    loopDaemons.append(
                        try EventLoopDaemon(
                            handle: handle, name: "http-\(index + 1)",
                            writesEventsDirectly: processor.libraryPatches.writesEventsDirectly))
                } catch {
                    MHD_stop_daemon(handle)
                    for descriptor in sockets.descriptors[(index + 1)...] { close(descriptor) }
                    throw HTTPServer.StartError(description: "cannot start an event loop: \(error)")
                }
            }
            self.port = port
            self.loopDaemons = loopDaemons
        } catch {
            for daemon in loopDaemons { daemon.stop() }
            processor.deadlines.stop()
            context.release()
            for string in tlsStrings { free(string) }
            throw error
        }
    }

    /// The options every daemon shares; the caller adds its address or socket and `END`.
    private static func options(
        configuration: HTTPServer.Configuration, context: UnsafeMutableRawPointer, setup: UnsafeMutableRawPointer
    ) -> [MHD_OptionItem] {
        [
            // The logger comes first so that it receives every message.
            MHD_OptionItem(option: .EXTERNAL_LOGGER, value: unsafeBitCast(Daemon.logMessage, to: Int.self), ptr_value: context),
            // The limit is kept by the accept policy, which counts the
            // connections of every loop's daemon and refuses one over it at
            // once; each daemon's own limit stays out of its way.
            MHD_OptionItem(
                option: .CONNECTION_LIMIT, value: 2 * configuration.maximumConnections + 64, ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_TIMEOUT, value: configuration.connectionTimeout, ptr_value: nil),
            // Larger than the limit, so that a request somewhat over it
            // still reaches `RequestProcessor.begin`, which answers it; a
            // larger one libmicrohttpd refuses itself, with the same problem
            // document (Daemon+LibraryErrors.swift).
            MHD_OptionItem(
                option: .CONNECTION_MEMORY_LIMIT, value: Daemon.memoryLimit(headerLimit: configuration.maximumHeaderSize),
                ptr_value: nil),
            MHD_OptionItem(option: .URI_LOG_CALLBACK, value: unsafeBitCast(Daemon.requestBegan, to: Int.self), ptr_value: context),
            MHD_OptionItem(
                option: .NOTIFY_CONNECTION, value: unsafeBitCast(Daemon.connectionChanged, to: Int.self), ptr_value: setup),
            MHD_OptionItem(
                option: .NOTIFY_COMPLETED, value: unsafeBitCast(Daemon.requestCompleted, to: Int.self), ptr_value: context),
        ]
    }

    /// Starts a daemon on the listening socket that `options` names (port 0: it binds none of its own).
    private static func start(flags: UInt32, options: [MHD_OptionItem], context: Unmanaged<RequestProcessor>) -> OpaquePointer? {
        var options = options
        options.append(MHD_OptionItem(option: .END, value: 0, ptr_value: nil))
        return options.withUnsafeMutableBufferPointer { options in
            shim_MHD_start_daemon(
                flags, 0, Daemon.acceptPolicy, context.toOpaque(),
                Daemon.accessHandler, context.toOpaque(), options.baseAddress)
        }
    }

    /// libmicrohttpd's per-connection memory pool for a header limit:
    /// twice the limit, and at least 16 KB more than the limit.
    ///
    /// The pool holds the header section as received (parsed in place),
    /// a record of about 64 bytes per header field taken from the same
    /// pool, and later the response's header lines. Twice the limit lets
    /// a request line or a header field of up to about twice the limit, or
    /// a section of 90-byte fields up to about 1.2 times the limit (both
    /// measured), reach `RequestProcessor.begin`, which answers them
    /// exactly at the limit. A larger request libmicrohttpd refuses itself
    /// (414 or 431), and its answer is replaced by the same problem
    /// document (Daemon+LibraryErrors.swift).
    ///
    /// No larger, for speed and memory: libmicrohttpd 0.9.75 zeroes the
    /// whole pool after every request (`MHD_pool_reset`), and the unused
    /// half of it again when it trims the read buffer, so every keep-alive
    /// connection that has served a request keeps the whole pool resident,
    /// mapped lazily or not, and the zeroing grows with the pool.
    static func memoryLimit(headerLimit: Int) -> Int {
        max(2 * headerLimit, headerLimit + (16 << 10))
    }

    deinit {
        if isRunning {
            processor.suspensions.abandonAll()
            stopLoopDaemons()
            processor.deadlines.stop()
            Unmanaged.passUnretained(processor).release()
        }
        for string in tlsStrings { free(string) }
    }

    /// New connections present `certificate` from now on.
    func replaceTLS(with certificate: HTTPServer.TLSCertificate) throws(HTTPServer.TLSError) {
        guard let store = connectionSetup.tls else {
            throw HTTPServer.TLSError(description: "the server was started without TLS")
        }
        store.replace(with: try TLSCredentials(certificate))
    }

    /// New connections' handshakes agree on what `priorities` allow.
    func replaceTLSPriorities(with priorities: String) throws(HTTPServer.TLSError) {
        guard let store = connectionSetup.tls else {
            throw HTTPServer.TLSError(description: "the server was started without TLS")
        }
        store.replace(with: try TLSPriorities(priorities))
    }

    /// Stops the loops, then their daemons (with no loop running them, on this thread).
    private func stopLoopDaemons() {
        for daemon in loopDaemons { daemon.stop() }
        loopDaemons = []
    }

    /// Stops accepting, waits up to `timeout` seconds for the requests in
    /// flight, then stops the daemons (closing idle keep-alive connections).
    func shutDown(timeout: Double, logger: Logger) {
        guard isRunning else { return }
        processor.isDraining.store(true, ordering: .releasing)
        for daemon in loopDaemons { daemon.quiesce() }

        let inFlight = processor.requestsInFlight.load(ordering: .acquiring)
        if inFlight > 0 {
            logger.info("stopping: waiting up to \(timeout) s for \(inFlight) request(s) in flight")
        }
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(timeout * 1000)))
        while processor.requestsInFlight.load(ordering: .acquiring) > 0, ContinuousClock.now < deadline {
            usleep(5_000)
        }
        let abandoned = processor.requestsInFlight.load(ordering: .acquiring)
        if abandoned > 0 {
            logger.warning("stopping: \(abandoned) request(s) still in flight after \(timeout) s, closing their connections")
        }
        // libmicrohttpd must not be stopped with a connection suspended.
        processor.suspensions.abandonAll()
        stopLoopDaemons()
        processor.deadlines.stop()
        isRunning = false
        Unmanaged.passUnretained(processor).release()
    }

    // MARK: - Callbacks

    /// MHD_OPTION_URI_LOG_CALLBACK: the first thing MHD tells about a request,
    /// with its raw target. The returned context is the request's `con_cls`.
    private static let requestBegan:
        @convention(c) (
            UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?
        ) -> UnsafeMutableRawPointer? = { cls, uri, _ in
            let processor = Unmanaged<RequestProcessor>.fromOpaque(cls!).takeUnretainedValue()
            let target = uri.map { Array(UnsafeRawBufferPointer(start: $0, count: strlen($0))) } ?? []
            // Next, libmicrohttpd would split the query into arguments, each a
            // record of about 64 bytes in the connection's memory pool; a few
            // thousand parameters exhaust it, and it then closes the connection
            // without an answer. The server decodes the query itself, from
            // `target`, and never asks libmicrohttpd for it: the query is
            // emptied in libmicrohttpd's own (writable) request buffer, so
            // that every request reaches `RequestProcessor.begin`.
            if let uri, let mark = strchr(uri, Int32(UInt8(ascii: "?"))) {
                UnsafeMutablePointer(mutating: mark + 1).pointee = 0
            }
            let context = RequestState(rawTarget: target, logger: processor.logger)
            processor.requestsInFlight.add(1, ordering: .acquiringAndReleasing)
            return Unmanaged.passRetained(context).toOpaque()
        }

    /// The accept policy: refuses a connection over the limit, every loop's connections counted.
    private static let acceptPolicy: MHD_AcceptPolicyCallback = { cls, _, _ in
        let processor = Unmanaged<RequestProcessor>.fromOpaque(cls!).takeUnretainedValue()
        return processor.openConnections.load(ordering: .relaxed) < processor.configuration.maximumConnections ? .YES : .NO
    }

    /// What the connection notification needs: the processor, and with
    /// TLS the credentials each new connection presents.
    final class ConnectionSetup: Sendable {
        let processor: RequestProcessor
        let tls: TLSCredentialStore?

        init(processor: RequestProcessor, tls: TLSCredentialStore?) {
            self.processor = processor
            self.tls = tls
        }
    }

    /// MHD_OPTION_NOTIFY_CONNECTION: a connection opened (before its TLS
    /// handshake) or closed.
    private static let connectionChanged:
        @convention(c) (
            UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
            MHD_ConnectionNotificationCode
        ) -> Void = { cls, connection, socketContext, code in
            guard let cls, let connection, let socketContext else { return }
            let setup = Unmanaged<ConnectionSetup>.fromOpaque(cls).takeUnretainedValue()
            let processor = setup.processor
            switch code {
            case .CONNECTION_NOTIFY_STARTED:
                if let tls = setup.tls, let session = shim_MHD_get_tls_session(connection) { tls.apply(to: session) }
                processor.openConnections.add(1, ordering: .relaxed)
                // The connection's socket context holds one retain on its
                // record until the connection closes.
                let watch = processor.deadlines.opened(socket: shim_MHD_get_connection_fd(connection))
                // libmicrohttpd accepts connections only in `MHD_run`, which
                // only the daemon's loop calls.
                guard let loopDaemon = EventLoopDaemon.current else {
                    preconditionFailure("libmicrohttpd opened a connection off its event loop")
                }
                let open = OpenConnection(processor: processor, watch: watch, loopDaemon: loopDaemon)
                socketContext.pointee = Unmanaged.passRetained(open).toOpaque()
            default:
                processor.openConnections.subtract(1, ordering: .relaxed)
                if let opaque = socketContext.pointee {
                    socketContext.pointee = nil
                    let open = Unmanaged<OpenConnection>.fromOpaque(opaque).takeRetainedValue()
                    if let watch = open.watch { processor.deadlines.closed(watch) }
                }
            }
        }

    /// What the server keeps for one open connection, as its socket context.
    final class OpenConnection {
        let processor: RequestProcessor
        /// The deadlines' watch of the connection, if it has one.
        let watch: ConnectionDeadline.Watch?
        /// The daemon (and loop) that serves the connection.
        let loopDaemon: EventLoopDaemon
        /// When its last request completed, in nanoseconds of
        /// `CLOCK_MONOTONIC_COARSE`; 0 before the first (`releasePoolUnlessBusy`).
        let lastCompleted = Atomic<UInt64>(0)

        init(processor: RequestProcessor, watch: ConnectionDeadline.Watch?, loopDaemon: EventLoopDaemon) {
            self.processor = processor
            self.watch = watch
            self.loopDaemon = loopDaemon
        }
    }

    /// The record of a connection (set when it opened).
    static func openConnection(_ connection: OpaquePointer) -> OpenConnection? {
        shim_MHD_get_socket_context(connection).map { Unmanaged<OpenConnection>.fromOpaque($0).takeUnretainedValue() }
    }

    /// The deadlines' watch of a connection, if it has one.
    static func watch(_ connection: OpaquePointer) -> ConnectionDeadline.Watch? {
        openConnection(connection)?.watch
    }

    /// MHD_OPTION_NOTIFY_COMPLETED: the request is over, whatever happened.
    private static let requestCompleted:
        @convention(c) (
            UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
            MHD_RequestTerminationCode
        ) -> Void = { cls, connection, contextPointer, termination in
            let processor = Unmanaged<RequestProcessor>.fromOpaque(cls!).takeUnretainedValue()
            let context = contextPointer?.pointee.map { Unmanaged<RequestState>.fromOpaque($0).takeRetainedValue() }
            contextPointer?.pointee = nil
            if let connection, let open = openConnection(connection) {
                if let watch = open.watch {
                    // A request that ends while its admission is pending (its client gone) leaves no expiry behind.
                    if context?.admissionWait != nil { processor.deadlines.admissionDecided(watch) }
                    processor.deadlines.requestCompleted(watch)
                }
                if termination == .REQUEST_TERMINATED_COMPLETED_OK {
                    releasePoolUnlessBusy(open)
                } else {
                    zeroPoolAsUsual(open)
                }
            }
            guard let context else { return }
            processor.complete(context, outcome: termination.outcome)
            processor.requestsInFlight.subtract(1, ordering: .acquiringAndReleasing)
        }

    /// The access handler: called once the header fields are in, once per
    /// piece of body, and a final time with no data.
    private static let accessHandler:
        @convention(c) (
            UnsafeMutableRawPointer?, OpaquePointer?,
            UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
            UnsafePointer<CChar>?, UnsafeMutablePointer<Int>?,
            UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        ) -> MHD_Result = { cls, connection, _, method, version, uploadData, uploadDataSize, contextPointer in
            guard let cls, let connection, let contextPointer, let opaque = contextPointer.pointee, let uploadDataSize
            else { return .NO }
            let processor = Unmanaged<RequestProcessor>.fromOpaque(cls).takeUnretainedValue()
            let context = Unmanaged<RequestState>.fromOpaque(opaque).takeUnretainedValue()
            let connectionHandle = ClientConnection(connection, releasesPoolPages: processor.libraryPatches.releasesPoolPages)

            if !context.hasStarted {
                if let watch = watch(connection) { processor.deadlines.headersReceived(watch) }
                let isHTTP10 = version.map { strcmp($0, MHD_HTTP_VERSION_1_0) == 0 } ?? false
                return processor.begin(
                    context, on: connectionHandle, method: method.map { String(cString: $0) } ?? "", isHTTP10: isHTTP10) ? .YES : .NO
            }
            if uploadDataSize.pointee > 0 {
                let chunk = UnsafeRawBufferPointer(start: uploadData, count: uploadDataSize.pointee)
                uploadDataSize.pointee = 0
                return processor.receive(chunk, for: context, on: connectionHandle) ? .YES : .NO
            }
            return processor.finish(context, on: connectionHandle) ? .YES : .NO
        }

    /// MHD_OPTION_EXTERNAL_LOGGER: libmicrohttpd's own messages.
    private static let logMessage: MHD_LogCallback = { cls, format, arguments in
        let processor = Unmanaged<RequestProcessor>.fromOpaque(cls!).takeUnretainedValue()
        guard let format, let arguments else { return }
        var buffer = [CChar](repeating: 0, count: 1024)
        _ = vsnprintf(&buffer, buffer.count, format, arguments)
        let message = String(nulTerminated: buffer)
        processor.logger.warning("libmicrohttpd: \(message.trimmingCharacters(in: "\n"))")
    }
}

extension MHD_RequestTerminationCode {
    var outcome: RequestState.Outcome {
        switch self {
        case .REQUEST_TERMINATED_COMPLETED_OK: .completed
        case .REQUEST_TERMINATED_TIMEOUT_REACHED: .aborted("timed out")
        case .REQUEST_TERMINATED_DAEMON_SHUTDOWN: .aborted("server shut down")
        case .REQUEST_TERMINATED_CLIENT_ABORT: .aborted("client went away")
        case .REQUEST_TERMINATED_READ_ERROR: .aborted("read error")
        default: .aborted("connection error")
        }
    }
}
