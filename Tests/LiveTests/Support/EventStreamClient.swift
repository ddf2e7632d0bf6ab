import Foundation
import HTTPTestClient

/// A Server-Sent Events client over one raw socket (`TestClient`): the
/// response's head, then the body (chunked, or without chunks until the
/// connection closes) decoded and cut into events as the WHATWG format
/// says (`field: value` lines, an empty line after each event, comments
/// beginning with `:`).
///
/// ```swift
/// let stream = try EventStreamClient(port: port, target: "/items")
/// let snapshot = try stream.events(through: "ready")
/// let next = try stream.next()
/// ```
final class EventStreamClient: @unchecked Sendable {
    // `@unchecked Sendable`: a stream is read by one thread at a time (a
    // test's, or the one thread it hands the stream to).
    struct Event: Equatable, CustomStringConvertible {
        var name = "message"
        var id: String?
        var data = ""

        var description: String { "\(name)#\(id ?? "-") \(data)" }

        /// The data as JSON.
        var json: Any? { try? JSONSerialization.jsonObject(with: Data(data.utf8)) }
    }

    enum Failure: Error, CustomStringConvertible {
        case timedOut(after: [Event])
        case malformed(String)

        var description: String {
            switch self {
            case .timedOut(let events): "no event in time; had \(events)"
            case .malformed(let text): "malformed stream: \(text)"
            }
        }
    }

    let client: TestClient
    private(set) var status = 0
    private(set) var headers: [String: String] = [:]
    /// The body of a response that is not a stream (a problem document).
    private(set) var body = ""
    private var raw: [UInt8] = []
    private var decoded: [UInt8] = []
    /// The final chunk came, or a body sent without chunks ended with its
    /// connection: the stream ended as cleanly as its framing can tell.
    private(set) var hasEnded = false
    /// The connection closed without the final chunk of a chunked body.
    private(set) var wasCutOff = false
    /// The body is sent without chunks and ends when the connection closes
    /// (the event-writes patch, ``LibraryPatches``).
    private(set) var isCloseDelimited = false
    /// The connection was reset rather than closed.
    private var wasReset = false
    private(set) var comments = 0
    private(set) var retries: [Int] = []
    /// Every event received, in order.
    private(set) var received: [Event] = []
    private var pending: [Event] = []

    init(port: Int, target: String, headers: [(String, String)] = [], receiveBufferSize: Int? = nil) throws {
        client = try TestClient(port: port, receiveBufferSize: receiveBufferSize, timeoutSeconds: 1)
        try client.sendRequest("GET", target, headers: [("Accept", "text/event-stream")] + headers)
        let deadline = Date().addingTimeInterval(15)
        while true {
            if let end = Self.find(Array("\r\n\r\n".utf8), in: raw) {
                try parseHead(Array(raw[..<end]))
                raw.removeFirst(end + 4)
                break
            }
            guard try receive(until: deadline) else { throw Failure.malformed("no head: \(String(decoding: raw, as: UTF8.self))") }
        }
        if self.headers["transfer-encoding"] == nil, self.headers["content-length"] == nil,
            self.headers["connection"]?.lowercased() == "close"
        {
            isCloseDelimited = true
        } else if self.headers["transfer-encoding"]?.lowercased() != "chunked" {
            let length = Int(self.headers["content-length"] ?? "0") ?? 0
            while raw.count < length, try receive(until: deadline) {}
            body = String(decoding: raw.prefix(length), as: UTF8.self)
            hasEnded = true
        }
    }

    /// The header field `name` (any case).
    func header(_ name: String) -> String? { headers[name.lowercased()] }

    private func parseHead(_ head: [UInt8]) throws {
        let lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n")
        guard let first = lines.first, first.hasPrefix("HTTP/1.1 "), let code = Int(first.dropFirst(9).prefix(3)) else {
            throw Failure.malformed(lines.first ?? "")
        }
        status = code
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
    }

    /// Reads once; `false` when the connection closed or the deadline passed.
    private func receive(until deadline: Date) throws -> Bool {
        while Date() < deadline {
            do {
                let bytes = try client.read()
                if bytes.isEmpty { return false }
                raw += bytes
                return true
            } catch TestClient.Failure.receive(let code) where code == EAGAIN || code == EWOULDBLOCK {
                continue
            } catch TestClient.Failure.receive(let code) where code == ECONNRESET {
                wasReset = true
                return false
            }
        }
        return false
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<(start + needle.count)]) == needle { return start }
        }
        return nil
    }

    /// Moves whole chunks from `raw` to `decoded`, and whole events from there to `pending`.
    private func decode() throws {
        if isCloseDelimited {
            decoded += raw
            raw = []
        }
        while !hasEnded, !isCloseDelimited, let lineEnd = Self.find([13, 10], in: raw) {
            let sizeText = String(decoding: raw[..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText, radix: 16) else { throw Failure.malformed("chunk size \(sizeText)") }
            if size == 0 {
                hasEnded = true
                raw = []
                break
            }
            guard raw.count >= lineEnd + 2 + size + 2 else { break }
            decoded += raw[(lineEnd + 2)..<(lineEnd + 2 + size)]
            raw.removeFirst(lineEnd + 2 + size + 2)
        }
        while let end = Self.find([10, 10], in: decoded) {
            let block = String(decoding: decoded[..<end], as: UTF8.self)
            decoded.removeFirst(end + 2)
            var event = Event()
            var hasData = false
            for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix(":") {
                    comments += 1
                    continue
                }
                let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                let field = String(parts[0])
                var value = parts.count > 1 ? String(parts[1]) : ""
                if value.hasPrefix(" ") { value.removeFirst() }
                switch field {
                case "event": event.name = value
                case "id": event.id = value
                case "data":
                    event.data += (hasData ? "\n" : "") + value
                    hasData = true
                case "retry": if let retry = Int(value) { retries.append(retry) }
                default: break
                }
            }
            if hasData {
                pending.append(event)
                received.append(event)
            }
        }
    }

    /// The next event, `nil` once the stream ended (cleanly or not);
    /// throws when none came within `timeout` seconds.
    func next(timeout: Double = 10) throws -> Event? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            try decode()
            if !pending.isEmpty { return pending.removeFirst() }
            if hasEnded || wasCutOff { return nil }
            if !(try receive(until: deadline)) {
                if Date() >= deadline { throw Failure.timedOut(after: received) }
                // A body without chunks ends cleanly with a close after a whole event, not a reset.
                if isCloseDelimited, !wasReset, decoded.isEmpty { hasEnded = true } else { wasCutOff = true }
            }
        }
    }

    /// The events up to and including the first named `name`.
    func events(through name: String, timeout: Double = 10) throws -> [Event] {
        var events: [Event] = []
        while let event = try next(timeout: timeout) {
            events.append(event)
            if event.name == name { return events }
        }
        throw Failure.malformed("the stream ended before \(name): \(events)")
    }

    /// Whether no event comes within `seconds`.
    func isQuiet(for seconds: Double) throws -> Bool {
        do {
            _ = try next(timeout: seconds)
            return false
        } catch Failure.timedOut {
            return true
        }
    }

    /// Reads comments and events until `seconds` pass, for a heartbeat.
    func drain(for seconds: Double) throws {
        _ = try? next(timeout: seconds)
    }

    /// The rows of the `snapshot` events among `events`, in order.
    static func rows(of events: [Event]) -> [[String: Any]] {
        events.filter { $0.name == "snapshot" }.flatMap { ($0.json as? [[String: Any]]) ?? [] }
    }
}
