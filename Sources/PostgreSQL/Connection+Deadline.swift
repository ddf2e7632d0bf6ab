internal import CLibPQ
#if canImport(Glibc)
import Glibc
#endif

// MARK: - A statement that may not wait for ever

extension Connection {
    /// The first column of the first row of `sql` (no parameters, simple
    /// protocol) as a `Double`, waiting at most `timeout` for the server's
    /// answer: a server that keeps the connection open and answers nothing
    /// (stopped, or cut off by a firewall that drops packets) does not
    /// block the caller. After a timeout the connection is closed and a
    /// connection failure thrown. For the replica probe, whose thread
    /// watches every replica.
    ///
    /// ```swift
    /// let lag = try connection.fetchDouble("SELECT 0::float8", within: .seconds(2))
    /// ```
    func fetchDouble(_ sql: String, within timeout: Duration) throws -> Double? {
        finishActiveCursor()
        let handle = try openHandle()
        // A short query: the socket's send buffer takes it at once.
        guard PQsendQuery(handle, sql) == 1 else { throw connectionError() }
        let deadline = ContinuousClock.now + timeout
        var value: Double?
        var failure: DatabaseError?
        while true {
            while PQisBusy(handle) == 1 {
                let milliseconds = Int32(clamping: Int64(max(0, ((deadline - .now) / .milliseconds(1)).rounded(.up))))
                var socket = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
                let ready = poll(&socket, 1, milliseconds)
                if ready < 0, errno == EINTR { continue }
                if ready == 0 {
                    close()
                    throw DatabaseError(code: .connectionFailure, message: "no answer within \(timeout)")
                }
                if ready < 0 || PQconsumeInput(handle) == 0 { throw connectionError() }
            }
            guard let raw = PQgetResult(handle) else { break }
            let result = QueryResult(taking: raw)
            if let error = result.error {
                failure = failure ?? error
            } else if value == nil, PQntuples(raw) > 0, PQnfields(raw) > 0, PQgetisnull(raw, 0, 0) == 0 {
                value = Double(String(cString: PQgetvalue(raw, 0, 0)))
            }
        }
        if let failure {
            noteFailure(failure)
            throw failure
        }
        return value
    }
}
