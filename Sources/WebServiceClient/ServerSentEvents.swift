import Foundation

/// The WHATWG Server-Sent Events format read as bytes arrive: lines ended
/// by LF, CRLF or CR; `field: value` lines gathered into an event until an
/// empty line; `data` lines joined by LF; comments (`:`) skipped; `id`
/// kept as the last event id and `retry` as the reconnection time.
///
/// ```swift
/// var parser = ServerSentEventParser()
/// let events = parser.append(Data("event: update\ndata: {\"id\":1}\n\n".utf8))
/// events[0].name   // "update"
/// ```
struct ServerSentEventParser: Sendable {
    /// One event as the stream wrote it.
    struct Event: Sendable, Equatable {
        var name: String
        var data: String
        /// The last event id once this event was read (the stream's, not only this event's).
        var lastEventID: String?
    }

    private var line: [UInt8] = []
    private var afterCarriageReturn = false
    private var name = ""
    private var data: [String] = []
    private var hasData = false
    /// The last `id:` the stream sent.
    private(set) var lastEventID: String?
    /// The last `retry:` the stream sent, in milliseconds.
    private(set) var retry: Int?

    /// A parser for a new stream, which keeps the last one's `retry` until it sends its own.
    init(retry: Int? = nil) {
        self.retry = retry
    }

    /// The events `bytes` complete.
    mutating func append(_ bytes: Data) -> [Event] {
        var events: [Event] = []
        for byte in bytes {
            if afterCarriageReturn {
                afterCarriageReturn = false
                if byte == UInt8(ascii: "\n") { continue }
            }
            switch byte {
            case UInt8(ascii: "\n"):
                if let event = endLine() { events.append(event) }
            case UInt8(ascii: "\r"):
                afterCarriageReturn = true
                if let event = endLine() { events.append(event) }
            default:
                line.append(byte)
            }
        }
        return events
    }

    /// A whole line: a field, a comment, or the empty line that dispatches the event.
    private mutating func endLine() -> Event? {
        defer { line.removeAll(keepingCapacity: true) }
        guard !line.isEmpty else {
            defer {
                name = ""
                data = []
                hasData = false
            }
            guard hasData else { return nil }
            return Event(name: name.isEmpty ? "message" : name, data: data.joined(separator: "\n"), lastEventID: lastEventID)
        }
        if line[0] == UInt8(ascii: ":") { return nil }
        let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
        let field = String(decoding: line[..<colon], as: UTF8.self)
        var valueStart = colon == line.endIndex ? colon : line.index(after: colon)
        if valueStart < line.endIndex, line[valueStart] == UInt8(ascii: " ") { valueStart = line.index(after: valueStart) }
        let value = String(decoding: line[valueStart...], as: UTF8.self)
        switch field {
        case "event": name = value
        case "data":
            data.append(value)
            hasData = true
        case "id": if !value.contains("\u{0}") { lastEventID = value }
        case "retry": if let milliseconds = Int(value), milliseconds >= 0 { retry = milliseconds }
        default: break
        }
        return nil
    }
}
