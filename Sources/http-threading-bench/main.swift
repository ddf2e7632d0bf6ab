#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import HTTPServer
import Logging

/// Serves a handler that blocks for a while on every request, to compare
/// libmicrohttpd threading models under load (see docs/THREADING.md). With
/// event loops the blocking part runs on a worker (`HTTPResponse.blocking`).
///
/// ```
/// swift run -c release http-threading-bench --mode thread-per-connection --port 8090
/// wrk -t2 -c64 -d10s http://127.0.0.1:8090/
/// ```
struct ThreadingBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "http-threading-bench",
        abstract: "Serve a handler that sleeps on each request, in a chosen threading model."
    )

    enum Mode: String, ExpressibleByArgument, CaseIterable {
        case threadPerConnection = "thread-per-connection"
        case eventLoops = "event-loops"
    }

    @Option(help: "thread-per-connection or event-loops.")
    var mode: Mode = .threadPerConnection

    @Option(help: "Event-loop threads (with --mode event-loops).")
    var threads: Int = 2

    @Option(help: "Milliseconds each request blocks.")
    var sleepMilliseconds: Int = 10

    @Option(help: "Port on 127.0.0.1.")
    var port: Int = 8090

    func run() throws {
        var logger = Logger(label: "http-threading-bench")
        logger.logLevel = .warning
        let threading: HTTPServer.ThreadingModel =
            mode == .eventLoops ? .eventLoops(threads: threads) : .threadPerConnection
        let delay = useconds_t(sleepMilliseconds * 1000)
        let server = HTTPServer(
            configuration: .init(port: port, maximumConnections: 1024, threading: threading),
            logger: logger
        ) { _ in
            guard delay > 0 else { return HTTPResponse(text: "ok") }
            return HTTPResponse.blocking {
                usleep(delay)
                return HTTPResponse(text: "ok")
            }
        }
        try server.start()
        print("serving on 127.0.0.1:\(server.port), mode \(mode.rawValue)\(mode == .eventLoops ? " (\(threads) threads)" : ""), \(sleepMilliseconds) ms per request")
        server.runUntilSignalled()
    }
}

ThreadingBench.main()
