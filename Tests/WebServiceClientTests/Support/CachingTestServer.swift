import Foundation
import HTTPServer

/// An origin server other than ours, for the cache tests: each path
/// answers what its test scripts (only the header fields given, such as
/// `Expires`, `Last-Modified`, `Age` or `stale-*`; never an `ETag`), and
/// every request is recorded with its conditional header fields.
/// Runs the project's `HTTPServer` on an ephemeral port of 127.0.0.1.
final class CachingTestServer: @unchecked Sendable {
    // `@unchecked Sendable`: `scripts` and `received` are touched only with `lock` held.

    struct Answer {
        var status = 200
        var headers: [String: String] = [:]
        var body = ""
    }

    /// One request as the server saw it.
    struct Received {
        var path: String
        var ifModifiedSince: String?
        var ifNoneMatch: String?
        var authorization: String?
    }

    /// Answers the `number`th request (from 1) on a path.
    typealias Script = @Sendable (_ request: Received, _ number: Int) -> Answer

    private let lock = NSLock()
    private var scripts: [String: Script] = [:]
    private var received: [Received] = []
    private var server: HTTPServer?

    init() throws {
        let server = HTTPServer(configuration: .init(port: 0, shutdownTimeout: 2)) { [unowned self] request in
            self.respond(to: request)
        }
        try server.start()
        self.server = server
    }

    var baseURL: URL { URL(string: "http://127.0.0.1:\(server!.port)")! }

    /// Answers requests for `path` by `script`.
    func route(_ path: String, _ script: @escaping Script) {
        lock.withLock { scripts[path] = script }
    }

    /// The requests received for `path`, in order.
    func requests(_ path: String) -> [Received] {
        lock.withLock { received.filter { $0.path == path } }
    }

    func stop() {
        server?.stop()
    }

    private func respond(to request: borrowing HTTPRequest) -> HTTPResponse {
        let path = String(request.rawPath.prefix { $0 != "?" })
        let seen = Received(
            path: path, ifModifiedSince: request.headers["If-Modified-Since"], ifNoneMatch: request.headers["If-None-Match"],
            authorization: request.headers["Authorization"])
        let (script, number): (Script?, Int) = lock.withLock {
            received.append(seen)
            return (scripts[path], received.count { $0.path == path })
        }
        guard let script else { return HTTPResponse(status: .notFound, text: "no script for \(path)") }
        let answer = script(seen, number)
        var headers = HTTPHeaders()
        for (name, value) in answer.headers { headers[name] = value }
        if answer.status != 304 { headers["Content-Type"] = "text/plain" }
        let body: HTTPResponse.Body = answer.status == 304 ? .empty : .bytes(Array(answer.body.utf8))
        return HTTPResponse(status: HTTPStatus(answer.status), headers: headers, body: body)
    }
}

/// `date` as an HTTP date in the preferred form (`Sun, 06 Nov 1994 08:49:37 GMT`),
/// or in one of the two obsolete forms a recipient must still read.
func httpDate(_ date: Date, _ form: HTTPDateForm = .preferred) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat =
        switch form {
        case .preferred: "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        case .rfc850: "EEEE, dd-MMM-yy HH:mm:ss 'GMT'"
        case .asctime: "EEE MMM d HH:mm:ss yyyy"
        }
    var text = formatter.string(from: date)
    if form == .asctime {
        // asctime pads a one-digit day with a space: `Nov  6`.
        let words = text.split(separator: " ")
        if words[2].count == 1 { text = "\(words[0]) \(words[1])  \(words[2]) \(words[3]) \(words[4])" }
    }
    return text
}

enum HTTPDateForm {
    case preferred, rfc850, asctime
}
