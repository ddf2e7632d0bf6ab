#if canImport(Glibc)
import Glibc
#endif
import Locking
import PostgreSQL
import Testing

/// The replicas' watcher cannot hang on a replica that stops answering: its
/// connection and its statement have timeouts, and such a replica is taken
/// out as one that is down, while the others are still asked.
@Suite struct ReplicaProbeTests {
    /// A TCP server on 127.0.0.1 that accepts every connection and never
    /// answers it, or with `logsIn`, plays a PostgreSQL server as far as the
    /// end of the login (no TLS, no authentication) and then never answers.
    final class SilentServer: Sendable {
        let port: Int
        private let listener: Int32
        private let accepted = Locked<[Int32]>([])

        init(logsIn: Bool) throws {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(listener, $0, length) == 0 && listen(listener, 16) == 0 && getsockname(listener, $0, &length) == 0
                }
            }
            self.listener = listener
            port = Int(UInt16(bigEndian: address.sin_port))
            try #require(bound, "cannot listen: \(String(cString: strerror(errno)))")
            let accepted = accepted
            let started = DetachedThread.start {
                while true {
                    let client = accept(listener, nil, nil)
                    if client < 0 { return }  // the listener was shut down
                    _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                    accepted.withLock { $0.append(client) }
                    if logsIn { Self.logIn(client) }
                }
            }
            try #require(started)
        }

        /// Answers a libpq client's requests up to its login: "no" to TLS
        /// and GSS encryption, then AuthenticationOk and ReadyForQuery.
        private static func logIn(_ client: Int32) {
            while true {
                var header = [UInt8](repeating: 0, count: 8)
                guard recv(client, &header, 8, Int32(MSG_WAITALL)) == 8 else { return }
                let length = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
                let code = Int(header[4]) << 24 | Int(header[5]) << 16 | Int(header[6]) << 8 | Int(header[7])
                var rest = [UInt8](repeating: 0, count: max(0, length - 8))
                if !rest.isEmpty, recv(client, &rest, rest.count, Int32(MSG_WAITALL)) != rest.count { return }
                if code == 80_877_103 || code == 80_877_104 {  // SSLRequest, GSSENCRequest
                    _ = send(client, [UInt8(ascii: "N")], 1, 0)
                    continue
                }
                let reply: [UInt8] = [UInt8(ascii: "R"), 0, 0, 0, 8, 0, 0, 0, 0, UInt8(ascii: "Z"), 0, 0, 0, 5, UInt8(ascii: "I")]
                _ = send(client, reply, reply.count, 0)
                return
            }
        }

        var conninfo: String { "host=127.0.0.1 port=\(port) dbname=silent user=silent sslmode=disable gssencmode=disable" }

        func close() {
            shutdown(listener, Int32(SHUT_RDWR))
            Glibc.close(listener)
            for client in accepted.withLock({ $0 }) { Glibc.close(client) }
        }
    }

    /// Watches `conninfos`' replicas with a 2 s probe timeout and returns
    /// whether each was healthy after `seconds`, and the reasons given for
    /// taking them out.
    private func watch(_ conninfos: [String], for seconds: Double) async throws -> (healthy: [Bool], reasons: [Int: String]) {
        let reasons = Locked<[Int: String]>([:])
        let replicas = ReplicaSet(
            conninfos.map { ConnectionPool(.init(conninfo: $0, size: 1)) },
            configuration: .init(checkInterval: .milliseconds(200), longestRetry: .seconds(1), probeTimeout: .seconds(2))
        ) { index, change in
            if case .out(let reason, _) = change { reasons.withLock { $0[index] = $0[index] ?? reason } }
        }
        defer { replicas.close() }
        try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        return (replicas.healthy, reasons.withLock { $0 })
    }

    @Test func aReplicaThatAcceptsTheConnectionAndNeverAnswersIsTakenOut() async throws {
        let silent = try SilentServer(logsIn: false)
        defer { silent.close() }
        // The healthy replica after the silent one: it is asked all the same.
        let (healthy, reasons) = try await watch([silent.conninfo, ""], for: 6)
        #expect(healthy == [false, true])
        #expect(reasons[0] == "unreachable", "libpq's connect_timeout: \(reasons)")
    }

    @Test func aReplicaThatLogsInAndNeverAnswersTheStatementIsTakenOut() async throws {
        let silent = try SilentServer(logsIn: true)
        defer { silent.close() }
        let (healthy, reasons) = try await watch([silent.conninfo, ""], for: 6)
        #expect(healthy == [false, true])
        #expect(reasons[0] == "unreachable", "the statement's timeout: \(reasons)")
    }
}
