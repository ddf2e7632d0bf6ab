internal import CLibPQ

// MARK: - COPY … FROM STDIN

extension Connection {
    /// Runs `sql`, a `COPY … FROM STDIN`, with the data `write` sends: it
    /// calls `send` with each next piece of the data (rows in COPY's format,
    /// any cut between pieces), which goes to PostgreSQL at once, so a copy
    /// of any length holds one piece at a time. When `write` throws, the
    /// copy is ended as failed (PostgreSQL undoes it, and the transaction it
    /// runs in fails) and the error rethrown; PostgreSQL's own error (a row
    /// it cannot read) throws as a ``DatabaseError``.
    ///
    /// ```swift
    /// try connection.copyIn("COPY items (name) FROM STDIN") { send in
    ///     for name in names { try send(Array((name + "\n").utf8)) }
    /// }
    /// ```
    package func copyIn(_ sql: String, _ write: (_ send: ([UInt8]) throws -> Void) throws -> Void) throws {
        finishActiveCursor()
        let handle = try openHandle()
        guard let started = PQexec(handle, sql) else { throw connectionError() }
        let start = QueryResult(taking: started)
        guard start.status == PGRES_COPY_IN else {
            try check(start)
            throw DatabaseError(code: .internalError, message: "the statement is no COPY FROM STDIN")
        }
        var failure: (any Error)?
        do {
            try write { data in
                // Sent in messages of at most 1 MiB: a piece of any length fits libpq's Int32 count.
                var start = 0
                while start < data.count {
                    let end = min(start + (1 << 20), data.count)
                    let sent = data.withUnsafeBytes { bytes in
                        UnsafeRawBufferPointer(rebasing: bytes[start..<end]).withMemoryRebound(to: CChar.self) {
                            PQputCopyData(handle, $0.baseAddress, Int32($0.count))
                        }
                    }
                    // The connection failed: its error is the copy's result's, read below.
                    guard sent == 1 else { throw CopyRefused() }
                    start = end
                }
            }
        } catch is CopyRefused {
        } catch {
            failure = error
        }
        _ = PQputCopyEnd(handle, failure == nil ? nil : "the data could not be read")
        var outcome: (any Error)?
        while let raw = PQgetResult(handle) {
            do { try check(QueryResult(taking: raw)) } catch { if outcome == nil { outcome = error } }
        }
        if let failure { throw failure }
        if let outcome { throw outcome }
        if PQstatus(handle) == CONNECTION_BAD { throw connectionError() }
    }

    private struct CopyRefused: Error {}
}
