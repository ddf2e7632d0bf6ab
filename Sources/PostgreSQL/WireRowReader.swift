internal import CLibPQ
#if canImport(Glibc)
import Glibc
#endif

/// Runs one execution of a prepared statement and reads its rows from the
/// connection's socket as the server sends them, one `DataRow` message at a
/// time, with libpq idle meanwhile.
///
/// libpq's single-row mode builds a `PGresult` for every row (a copy of the
/// column descriptions, several allocations, freed again), the larger part
/// of what a streamed list of short rows costs the server (`make bench`,
/// scenario 13, compares the two). Here a row is the place of its values
/// in a buffer of received bytes, read in place.
///
/// libpq has connected, authenticated and prepared the statement, and is
/// idle: the messages of the frontend/backend protocol that one execution
/// takes (`Bind`, `Describe`, `Execute`, `Sync`; `Parse` first for a
/// connection that ``Connection/preparesNothing``) are written to its
/// socket here, and every answer up to and including `ReadyForQuery` is
/// read here, so libpq finds the connection as it left it. Not for an
/// encrypted connection (TLS or GSSAPI), whose bytes only libpq can read:
/// ``isUsable(on:)`` tells.
final class WireRowReader {
    private let connection: Connection
    private let socket: Int32
    /// The received bytes; messages are read from `position` on.
    private var buffer: WireBuffer
    private var position = 0
    /// The frame the next row is read into, reused while no row handed out
    /// before is still held.
    private var frame: WireRow.Frame
    /// The columns the server described, `nil` when the statement's layout
    /// was known already (no `Describe` was sent).
    private(set) var describedColumns: [Column]?
    /// The failure the server reported; thrown once `ReadyForQuery` came.
    private var failure: DatabaseError?
    /// `ReadyForQuery` has been read: the connection is idle again.
    private(set) var isFinished = false
    /// The statements sent before the one whose rows are read (an
    /// ``Access``'s), whose results have not all come yet.
    private var preliminariesLeft: Int
    /// The role the preliminaries set: a failure among them is a ``RoleError``.
    private let role: String?
    /// The failure of a preliminary that set the role, as thrown.
    private var roleFailure: (any Error)?
    /// The rows the statement returned, by its `CommandComplete` (`SELECT 42`), once it came, when counted.
    private(set) var completedRows: Int?
    /// Whether `completedRows` is read (for a span).
    private let countsRows: Bool

    /// The buffer's first size: a few of PostgreSQL's 8 KB sends.
    static let initialCapacity = 32 << 10

    /// Whether rows can be read from `connection`'s socket: it is open and not encrypted.
    static func isUsable(on connection: Connection) -> Bool {
        guard let handle = connection.handle, !connection.streamsThroughLibpq else { return false }
        return PQsslInUse(handle) == 0 && PQgssEncInUse(handle) == 0
    }

    /// Sends one execution of `statement` with text-format `values`, after
    /// those of `preliminaries` (prepared statements whose results are
    /// read and dropped), all in one implicit transaction; with
    /// `describe`, the server describes the result's columns first. With
    /// `commentedSQL` (a recording span's: `StatementSpan`), that text
    /// is parsed as the unnamed statement and run instead; with
    /// `countsRows`, ``completedRows`` says how many rows came.
    init(
        connection: Connection, statement: PreparedStatement, values: [String?], describe: Bool,
        preliminaries: [(statement: PreparedStatement, values: [String?])] = [], role: String? = nil,
        commentedSQL: String? = nil, countsRows: Bool = false
    ) throws {
        let handle = try connection.openHandle()
        self.connection = connection
        socket = PQsocket(handle)
        buffer = WireBuffer(capacity: Self.initialCapacity)
        frame = WireRow.Frame(buffer: buffer)
        preliminariesLeft = preliminaries.count
        self.role = role
        self.countsRows = countsRows
        var message = WireMessage()
        for preliminary in preliminaries {
            Self.appendExecution(of: preliminary.statement, preliminary.values, on: connection, to: &message)
            message.begin("E")
            message.appendCString("")
            message.appendInt32(0)
            message.end()
        }
        Self.appendExecution(of: statement, values, on: connection, text: commentedSQL, to: &message)
        if describe {
            message.begin("D")
            message.bytes.append(UInt8(ascii: "P"))
            message.appendCString("")
            message.end()
        }
        message.begin("E")
        message.appendCString("")
        message.appendInt32(0)  // every row
        message.end()
        message.begin("S")
        message.end()
        try write(message.bytes)
    }

    /// Appends `Bind` (after `Parse` of the unnamed statement on a
    /// connection that prepares nothing, or with `text`) of the unnamed
    /// portal for `statement` with text-format `values`.
    private static func appendExecution(
        of statement: PreparedStatement, _ values: [String?], on connection: Connection, text: String? = nil,
        to message: inout WireMessage
    ) {
        let unnamed = text ?? (connection.preparesNothing ? statement.parameters.sql : nil)
        if let unnamed {
            message.begin("P")
            message.appendCString("")
            message.appendCString(unnamed)
            message.appendInt16(0)
            message.end()
        }
        message.begin("B")
        message.appendCString("")
        message.appendCString(unnamed != nil ? "" : statement.name)
        message.appendInt16(0)  // every parameter in text format
        message.appendInt16(Int16(truncatingIfNeeded: values.count))
        for value in values {
            guard var value else {
                message.appendInt32(-1)
                continue
            }
            value.withUTF8 { utf8 in
                message.appendInt32(Int32(truncatingIfNeeded: utf8.count))
                message.bytes.append(contentsOf: utf8)
            }
        }
        message.appendInt16(0)  // every column in text format
        message.end()
    }

    // MARK: - Reading

    /// The next row, `nil` at the end of the result.
    ///
    /// - Throws: the server's error once the execution is over (the
    ///   connection is idle again then), or a ``DatabaseError`` of class
    ///   `08` when the connection is lost.
    func next() throws -> WireRow? {
        var row: WireRow?
        _ = try readRows(while: { row == nil }) { row = WireRow(frame: $0) }
        return row
    }

    /// Reads rows into one frame and hands each to `body`, while `more()`
    /// says so and rows come: whether the result has ended. The call's
    /// next row is read into the same frame; a frame still held when a
    /// later call begins (``next()`` hands it out in a row) keeps its
    /// values, and the rows go into a frame of their own.
    ///
    /// For a list's loop: a row here costs no reference counting, where
    /// each ``next()`` hands out a row that holds its frame (a retain and a
    /// release, and a check that the frame is free, per row).
    ///
    /// - Throws: as ``next()``.
    func readRows(while more: () -> Bool, _ body: (WireRow.Frame) throws -> Void) throws -> Bool {
        // A row handed out before and still held keeps its frame and its
        // buffer, which is then never written to again.
        if !isKnownUniquelyReferenced(&frame) {
            frame.buffer.isPinned = true
            frame = WireRow.Frame(buffer: buffer)
        }
        let frame = self.frame
        while !isFinished, more() {
            let (type, message) = try nextMessage()
            guard type == UInt8(ascii: "D"), preliminariesLeft == 0 else {
                try handle(type, message)
                continue
            }
            if frame.buffer !== buffer { frame.buffer = buffer }
            try frame.read(message)
            try body(frame)
        }
        return isFinished
    }

    /// A message other than a row.
    private func handle(_ type: UInt8, _ body: UnsafeRawBufferPointer) throws {
        switch type {
        case UInt8(ascii: "T"):
            describedColumns = try Self.columns(in: body)
        case UInt8(ascii: "n"):
            describedColumns = []
        case UInt8(ascii: "D"):
            // A preliminary's row.
            break
        case UInt8(ascii: "C") where preliminariesLeft > 0:
            preliminariesLeft -= 1
        case UInt8(ascii: "C") where countsRows:
            completedRows = Self.rowCount(inCommandTag: body)
        case UInt8(ascii: "E"):
            let error = Self.error(in: body)
            if failure == nil {
                failure = error
                if preliminariesLeft > 0, let role { roleFailure = RoleError.failure(error, role: role) }
            }
        case UInt8(ascii: "Z"):
            isFinished = true
            try connection.settleTransactionStatus(UInt8(body.first ?? UInt8(ascii: "I")))
            if let failure {
                connection.noteFailure(failure)
                throw roleFailure ?? failure
            }
        case UInt8(ascii: "H"), UInt8(ascii: "G"), UInt8(ascii: "W"):
            failure =
                failure
                ?? DatabaseError(
                    code: .featureNotSupported, message: "COPY cannot stream rows here: run it with execute")
        default:
            // ParseComplete, BindComplete, CommandComplete, EmptyQueryResponse,
            // notices, parameter status, notifications, copy data: nothing to keep.
            break
        }
    }

    /// Stops before the end: the server is asked to cancel the execution,
    /// and everything it sends up to `ReadyForQuery` is read and dropped.
    /// Safe to call twice; a lost connection is left broken.
    func close() {
        guard !isFinished, let handle = connection.handle else { return }
        if let cancel = PQgetCancel(handle) {
            var buffer = [CChar](repeating: 0, count: 256)
            _ = PQcancel(cancel, &buffer, Int32(buffer.count))
            PQfreeCancel(cancel)
        }
        failure = nil
        do {
            while try next() != nil {}
        } catch {
            // The cancellation's own error (57014), or a lost connection (marked broken).
        }
    }

    /// The next whole message at `position`, reading from the socket as
    /// needed: its type and body (valid until the next read).
    private func nextMessage() throws -> (UInt8, UnsafeRawBufferPointer) {
        while true {
            let available = buffer.count - position
            if available >= 5 {
                let length = Int(buffer.int32(at: position + 1))
                guard length >= 4 else { throw lost("a malformed message from the server") }
                if available >= 1 + length {
                    let type = buffer.byte(at: position)
                    let body = UnsafeRawBufferPointer(start: buffer.storage + position + 5, count: length - 4)
                    position += 1 + length
                    return (type, body)
                }
                try makeRoom(for: 1 + length)
            } else {
                try makeRoom(for: 5)
            }
            try receive()
        }
    }

    /// Makes room after the unread bytes for a message of `size` bytes:
    /// moves them to the front, or into a new buffer when the current one
    /// is too small or held by a row handed out.
    private func makeRoom(for size: Int) throws {
        let unread = buffer.count - position
        // Appending moves nothing: a pinned buffer takes more bytes at its end.
        if buffer.capacity - buffer.count >= size - unread { return }
        if !buffer.isPinned, size <= buffer.capacity {
            buffer.moveToFront(from: position)
        } else {
            let replacement = WireBuffer(capacity: max(buffer.capacity, size))
            replacement.append(from: buffer, offset: position, count: unread)
            buffer = replacement
        }
        position = 0
    }

    /// Reads what the socket has into the buffer, waiting for it if nothing has come.
    private func receive() throws {
        let count = try transfer(waitingFor: POLLIN, "recv") {
            recv(socket, buffer.storage + buffer.count, buffer.capacity - buffer.count, 0)
        }
        if count == 0 { throw lost("the server closed the connection") }
        buffer.count += count
    }

    private func write(_ bytes: [UInt8]) throws {
        var sent = 0
        // Not empty inside the loop: `bytes` has a base address.
        while sent < bytes.count {
            sent += try transfer(waitingFor: POLLOUT, "send") {
                bytes.withUnsafeBytes { send(socket, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            }
        }
    }

    /// Runs `operation` (a `recv` or a `send` on the non-blocking socket)
    /// until it moves bytes or the stream ends, waiting for the socket to be
    /// ready for `events` meanwhile: the count moved, 0 at the end.
    private func transfer(waitingFor events: Int32, _ call: String, _ operation: () -> Int) throws -> Int {
        while true {
            let count = operation()
            if count >= 0 { return count }
            switch errno {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                var ready = pollfd(fd: socket, events: Int16(events), revents: 0)
                if poll(&ready, 1, -1) < 0, errno != EINTR { throw lost("poll: \(String(cString: strerror(errno)))") }
            default:
                throw lost("\(call): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// The connection is lost: it is marked broken, the reader finished.
    private func lost(_ reason: String) -> DatabaseError {
        isFinished = true
        // A fatal error the server sent before closing says best what happened.
        let error =
            failure.flatMap { $0.isConnectionFailure ? $0 : nil }
            ?? DatabaseError(code: .connectionFailure, message: "connection lost: \(reason)")
        connection.markBroken()
        return error
    }

    // MARK: - Messages

    /// The columns of a `RowDescription`: each field's name and type.
    private static func columns(in body: UnsafeRawBufferPointer) throws -> [Column] {
        var reader = WireBodyReader(body)
        let count = Int(try reader.int16())
        var columns: [Column] = []
        columns.reserveCapacity(count)
        for _ in 0..<count {
            let name = try reader.cString()
            _ = try reader.int32()  // table
            _ = try reader.int16()  // attribute number
            let type = UInt32(bitPattern: try reader.int32())
            _ = try reader.int16()  // size
            _ = try reader.int32()  // type modifier
            _ = try reader.int16()  // format
            columns.append(Column(label: name, type: PostgresType(oid: type)))
        }
        return columns
    }

    /// The row count at the end of a `CommandComplete` tag (`SELECT 42`, `UPDATE 3`), if it has one.
    private static func rowCount(inCommandTag body: UnsafeRawBufferPointer) -> Int? {
        let tag = body.prefix { $0 != 0 }
        guard let space = tag.lastIndex(of: UInt8(ascii: " ")) else { return nil }
        return Int(String(decoding: tag[(space + 1)...], as: UTF8.self))
    }

    /// The fields of an `ErrorResponse` as a ``DatabaseError``.
    static func error(in body: UnsafeRawBufferPointer) -> DatabaseError {
        var fields: [UInt8: String] = [:]
        var reader = WireBodyReader(body)
        while let code = try? reader.byte(), code != 0, let value = try? reader.cString() {
            fields[code] = value
        }
        return DatabaseError(
            code: fields[UInt8(ascii: "C")].map(SQLState.init(rawValue:)) ?? .internalError,
            message: fields[UInt8(ascii: "M")] ?? "the server reported an error",
            detail: fields[UInt8(ascii: "D")], hint: fields[UInt8(ascii: "H")],
            position: fields[UInt8(ascii: "P")].flatMap { Int($0) },
            constraint: fields[UInt8(ascii: "n")], table: fields[UInt8(ascii: "t")], column: fields[UInt8(ascii: "c")])
    }
}

/// A reader reads from its connection, which one thread uses at a time.
@available(*, unavailable)
extension WireRowReader: Sendable {}
