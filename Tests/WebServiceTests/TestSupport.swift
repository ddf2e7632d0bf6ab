import Foundation
@testable import HTTPServer
import HTTPTestClient
import Logging
import Testing
import WebService

// MARK: - Requests

/// A request as the server would hand it over, from a target such as
/// `/math/sum?a=2&b=4` (percent-encoded, `+` for spaces).
func makeRequest(
    _ method: HTTPMethod = .get,
    _ target: String,
    headers: HTTPHeaders = HTTPHeaders(),
    formFields: [FormField] = [],
    body: [UInt8] = []
) -> HTTPRequest {
    let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
    let rawPath = String(parts[0])
    let rawQuery = parts.count > 1 ? String(parts[1]) : nil
    func decode(_ text: Substring) -> String {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding!
    }
    let queryItems = (rawQuery ?? "").split(separator: "&").map { pair in
        let nameValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        return QueryItem(name: decode(nameValue[0]), value: nameValue.count > 1 ? decode(nameValue[1]) : "")
    }
    return HTTPRequest(
        method: method,
        rawPath: rawPath,
        pathSegments: rawPath.split(separator: "/").map { decode($0) },
        rawQuery: rawQuery,
        queryItems: queryItems,
        headers: headers,
        formFields: formFields,
        body: body
    )
}

/// A request with a JSON body.
func makeJSONRequest(_ method: HTTPMethod, _ target: String, json: String) -> HTTPRequest {
    makeRequest(method, target, headers: ["Content-Type": "application/json"], body: Array(json.utf8))
}

// MARK: - Responses

extension WebServiceRouter {
    /// The response as the server would send it: the work of a handler
    /// that runs off the event loop (blocking or `async`) is done here.
    func resolvedResponse(to request: HTTPRequest) -> HTTPResponse {
        RequestProcessor.resolve(respond(to: request))
    }
}

extension HTTPResponse {
    /// The body as text; a streamed body is read to the end and closed.
    var text: String {
        if isDeferred { return "(deferred)" }
        switch body {
        case .empty:
            return ""
        case .bytes(let bytes):
            return String(decoding: bytes, as: UTF8.self)
        case .stream(let stream):
            var out: [UInt8] = []
            defer { stream.close() }
            while (try? stream.write(into: &out)) == true {}
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// The body parsed as a JSON object.
    var object: [String: Any] {
        JSONReader.object(text.utf8)
    }
}

// MARK: - Logging

/// Keeps every log message so a test can look for it.
final class LogRecorder: @unchecked Sendable {
    // Guarded by `lock`; log handlers may be called from any thread.
    private let lock = NSLock()
    private var storedEntries: [(message: String, metadata: Logger.Metadata)] = []

    var entries: [(message: String, metadata: Logger.Metadata)] {
        lock.withLock { storedEntries }
    }

    func append(_ message: String, _ metadata: Logger.Metadata) {
        lock.withLock { storedEntries.append((message, metadata)) }
    }

    var logger: Logger {
        Logger(label: "test") { _ in RecordingLogHandler(recorder: self) }
    }
}

struct RecordingLogHandler: LogHandler {
    let recorder: LogRecorder
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        recorder.append("\(event.message)", metadata.merging(event.metadata ?? [:]) { $1 })
    }
}
