import JSONStreaming
import WebService

/// The WHATWG Server-Sent Events format, as live streams write it: each
/// event a block of `field: value` lines ended by an empty line, its data
/// on one line (JSON, which holds no line break of its own).
///
/// ```swift
/// LiveEvents.event("update", id: "5f3a9c01.42", data: Array(#"{"id":7}"#.utf8))
/// // "id: 5f3a9c01.42\nevent: update\ndata: {\"id\":7}\n\n"
/// ```
enum LiveEvents {
    /// An event named `name` (`nil`: the default, `message`) with `id` and `data`.
    static func event(_ name: String?, id: String?, data: some Collection<UInt8>) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(data.count + 48)
        append(name, id: id, data: data, to: &bytes)
        return bytes
    }

    /// ``event(_:id:data:)`` appended to `bytes`.
    static func append(_ name: String?, id: String?, data: some Collection<UInt8>, to bytes: inout [UInt8]) {
        if let id {
            bytes += "id: ".utf8
            bytes += id.utf8
            bytes.append(UInt8(ascii: "\n"))
        }
        if let name {
            bytes += "event: ".utf8
            bytes += name.utf8
            bytes.append(UInt8(ascii: "\n"))
        }
        bytes += "data: ".utf8
        bytes += data
        bytes += "\n\n".utf8
    }

    /// How long a client waits before it connects again (`retry:`), in milliseconds.
    static func retry(_ milliseconds: Int) -> [UInt8] {
        Array("retry: \(milliseconds)\n\n".utf8)
    }

    /// `reset`: the caller's rows are stale; a new snapshot follows (in
    /// this stream, or in the next connection when this one ends).
    static let reset = event("reset", id: nil, data: Array("{}".utf8))

    /// A comment, which clients ignore and proxies see as traffic.
    static let heartbeat = Array(":\n\n".utf8)

    /// What a `snapshot` page's rows are written between.
    static let snapshotOpening = Array("event: snapshot\ndata: [".utf8)
    static let snapshotClosing = Array("]\n\n".utf8)

    /// A channel's payload as an event's data: the JSON it holds, on one
    /// line; a payload that is not JSON, as a JSON string.
    static func payloadData(_ payload: String) -> [UInt8] {
        let bytes = Array(payload.utf8)
        if let value = try? JSONValue.parse(bytes) {
            return bytes.contains(where: { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }) ? value.jsonBytes : bytes
        }
        var quoted: [UInt8] = []
        JSONWriter.appendString(payload, to: &quoted)
        return quoted
    }
}
