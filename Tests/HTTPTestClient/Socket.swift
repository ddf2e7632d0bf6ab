#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP connection to 127.0.0.1, the one owner of its
/// descriptor: `deinit` closes it.
final class Socket {
    private let descriptor: Int32

    /// Connects to 127.0.0.1:`port`. A small `receiveBufferSize` limits how
    /// much the kernel buffers for a client that does not read; a read
    /// waits at most `timeoutSeconds`.
    init(port: Int, receiveBufferSize: Int?, timeoutSeconds: Int) throws {
        // Close-on-exec: a child another test spawns meanwhile must not hold
        // the connection open after this client closes it.
        descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw TestClient.Failure.connect(errno: errno) }
        if var size = receiveBufferSize.map(Int32.init) {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let result = withLoopbackAddress(port: port) { connect(descriptor, $0, $1) }
        // Not closed here: `deinit` runs for an initializer that throws
        // once every property is set, and a second `close` would close
        // whatever descriptor another thread opened in the meantime.
        if result != 0 { throw TestClient.Failure.connect(errno: errno) }
    }

    deinit {
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    /// Sends all of `bytes`.
    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let result = bytes.withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            }
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else { throw TestClient.Failure.send(errno: errno) }
            sent += result
        }
    }

    /// Receives up to `buffer.count` bytes; 0 once the peer has closed or
    /// reset the connection.
    func receive(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let received = recv(descriptor, buffer.baseAddress, buffer.count, 0)
            if received >= 0 { return received }
            let failure = errno
            if failure == EINTR { continue }
            if failure == ECONNRESET { return 0 }
            throw TestClient.Failure.receive(errno: failure)
        }
    }

    /// Makes the close reset the connection (an RST, as a client that
    /// gives up with unread data sends) rather than end it.
    func resetWhenClosed() {
        var option = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<Glibc.linger>.size))
    }

    /// Closes the sending side: the peer reads the end of the stream and
    /// can still answer.
    func shutdownSending() {
        shutdown(descriptor, Int32(SHUT_WR))
    }

    /// Whether the peer closed its end, checked without blocking or
    /// consuming anything.
    var peerHasClosed: Bool {
        var byte: UInt8 = 0
        let result = recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if result == 0 { return true }
        return result < 0 && errno != EAGAIN && errno != EWOULDBLOCK
    }
}

/// Calls `body` with the address 127.0.0.1:`port` and its length.
func withLoopbackAddress<Result>(port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
}

/// 127.0.0.1:`port` held by a socket bound to it that never listens: a
/// connection to it is refused, and a server asking for any port is not
/// given it. Released when the holder is.
public final class HeldPort {
    private let descriptor: Int32

    /// Holds `port`; `nil` when it cannot be bound.
    public init?(_ port: Int) {
        descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var reuse: Int32 = 1
        // A stopped server's closed connections may still be in TIME_WAIT on the port.
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        guard withLoopbackAddress(port: port, { bind(descriptor, $0, $1) }) == 0 else { return nil }
    }

    deinit {
        if descriptor >= 0 { Glibc.close(descriptor) }
    }
}
