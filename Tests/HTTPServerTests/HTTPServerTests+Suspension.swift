#if canImport(Glibc)
import Glibc
#endif
import HTTPServer
import HTTPTestClient
import Synchronization
import Testing

/// A connection waiting for its response is suspended (libmicrohttpd takes
/// its socket out of its loop's epoll set) and resumed from another thread
/// (put back): it then goes on serving requests, and a socket closed after
/// a suspension is in no epoll set.
extension HTTPServerTests {
    /// Opened by the test; the handler's work waits for it.
    final class Gate: Sendable {
        private let isOpen = Atomic<Bool>(false)
        func open() { isOpen.store(true, ordering: .releasing) }
        func wait() {
            while !isOpen.load(ordering: .acquiring) { usleep(1_000) }
        }
    }

    /// A server on one event loop whose `/wait` responses come once `gate`
    /// opens, from another thread, and whose other responses come 2 ms
    /// later, from another thread too: each request is suspended.
    private func startSuspendingServer(gate: Gate) throws -> HTTPServer {
        try startServer(.init(eventLoops: 1)) { request in
            let path = request.rawPath
            return HTTPResponse.later { promise in
                onNewThread {
                    if path == "/wait" { gate.wait() } else { usleep(2_000) }
                    promise.succeed(HTTPResponse(text: "done \(path)"))
                }
            }
        }
    }

    #if os(Linux) && arch(x86_64)
    @Test func aResumedConnectionGoesOnServing() throws {
        let gate = Gate()
        let server = try startSuspendingServer(gate: gate)
        defer { server.stop() }
        let client = try TestClient(port: server.port)
        #expect(try client.request("GET", "/first").text == "done /first")
        try client.sendRequest("GET", "/wait")
        usleep(100_000)
        gate.open()
        #expect(try client.readResponse().text == "done /wait")
        for index in 0..<3 {
            #expect(try client.request("GET", "/after/\(index)").text == "done /after/\(index)")
        }
    }

    /// A connection closed by the server right after a suspension leaves
    /// the epoll set even while another descriptor keeps its socket open (as
    /// a child process between fork and exec does): a registration left
    /// behind would report the socket's events under the freed connection.
    @Test func aSocketClosedAfterASuspensionLeavesTheEpollSetThoughStillOpenElsewhere() throws {
        let gate = Gate()
        let server = try startSuspendingServer(gate: gate)
        defer { server.stop() }
        let client = try TestClient(port: server.port)
        try client.sendRequest("GET", "/wait", headers: [("Connection", "close")])
        usleep(100_000)
        let sockets = Self.acceptedSockets(port: server.port)
        try #require(sockets.count == 1, "the server's side of the one connection: \(sockets)")
        let held = dup(sockets[0])
        try #require(held >= 0)
        defer { close(held) }
        let socket = Self.inode(held)
        gate.open()
        #expect(try client.readResponse().text == "done /wait")
        #expect(eventually { !Self.acceptedSockets(port: server.port).contains { $0 != held } }, "the server closed its descriptor")
        #expect(!Self.epollRegistrations().contains(socket), "the closed socket is still registered")
        // Events on the socket (the client's end closing) reach no one; new connections are served.
        try client.send("GET /more HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        usleep(20_000)
        #expect(try TestClient(port: server.port).request("GET", "/next").text == "done /next")
    }

    /// This process's sockets accepted on `port` (whose peer is connected).
    private static func acceptedSockets(port: Int) -> [Int32] {
        descriptors().filter { descriptor in
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
            }
            guard named == 0, address.sin_family == sa_family_t(AF_INET), Int(UInt16(bigEndian: address.sin_port)) == port
            else { return false }
            var peer = sockaddr_in()
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            return withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
            } == 0
        }
    }

    /// The inode of the file `descriptor` refers to (a socket's, here).
    private static func inode(_ descriptor: Int32) -> UInt64 {
        var status = stat()
        return fstat(descriptor, &status) == 0 ? UInt64(status.st_ino) : 0
    }

    /// The inodes of the files registered in this process's epoll sets,
    /// from each set's `/proc/self/fdinfo` (`tfd:` lines, `ino:` in hex).
    private static func epollRegistrations() -> Set<UInt64> {
        var registered: Set<UInt64> = []
        for descriptor in descriptors() where link(descriptor) == "anon_inode:[eventpoll]" {
            let info = String(decoding: readFile("/proc/self/fdinfo/\(descriptor)"), as: UTF8.self)
            for line in info.split(separator: "\n") {
                let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                guard fields.first == "tfd:", let field = fields.first(where: { $0.hasPrefix("ino:") }),
                    let inode = UInt64(field.dropFirst(4), radix: 16)
                else { continue }
                registered.insert(inode)
            }
        }
        return registered
    }

    private static func descriptors() -> [Int32] {
        directoryNames("/proc/self/fd").compactMap { Int32($0) }
    }

    private static func link(_ descriptor: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let length = readlink("/proc/self/fd/\(descriptor)", &buffer, buffer.count - 1)
        guard length > 0 else { return "" }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    #endif

    /// A second request sent while the first is suspended (pipelined): its
    /// bytes arrive during the suspension, and are read after the resume.
    @Test func aRequestPipelinedBehindASuspendedOneIsAnswered() throws {
        let gate = Gate()
        let server = try startSuspendingServer(gate: gate)
        defer { server.stop() }
        let client = try TestClient(port: server.port)
        try client.sendRequest("GET", "/wait")
        usleep(50_000)
        try client.sendRequest("GET", "/second")
        usleep(50_000)
        gate.open()
        #expect(try client.readResponse().text == "done /wait")
        #expect(try client.readResponse().text == "done /second")
        #expect(try client.request("GET", "/third").text == "done /third")
    }

    /// Connections that end around a suspension (closed after their answer,
    /// or by the client while waiting for it) leave nothing behind: the new
    /// connections that follow, likely on the same descriptor numbers, are
    /// answered at once.
    @Test func connectionsEndingAroundASuspensionLeaveTheNextOnesServed() throws {
        let server = try startSuspendingServer(gate: Gate())
        defer { server.stop() }
        for round in 0..<30 {
            let closing = try TestClient.request("GET", "/closing/\(round)", port: server.port)
            #expect(closing.text == "done /closing/\(round)")
            do {
                let abandoned = try TestClient(port: server.port)
                try abandoned.sendRequest("GET", "/abandoned/\(round)")
                usleep(1_000)
            }
            let next = try TestClient(port: server.port, timeoutSeconds: 5)
            for index in 0..<2 {
                #expect(try next.request("GET", "/next/\(round)/\(index)").text == "done /next/\(round)/\(index)")
            }
        }
    }
}
