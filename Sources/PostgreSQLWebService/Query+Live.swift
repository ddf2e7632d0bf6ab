import HTTPServer
import PostgreSQL
import WebService

// MARK: - A list followed live

extension Query {
    /// This list, whose event stream (`Accept: text/event-stream`) relays
    /// the notifications of `channel` (`NOTIFY channel, '{"id":7}'`) after
    /// its rows: each payload an event of its own, its JSON as the data
    /// (a payload that is not JSON as a JSON string). The rows are read as
    /// the caller's role, so that a role that may not run the statement is
    /// refused (403): the grants say who hears the channel. Any other
    /// request gets the rows alone.
    ///
    /// ```swift
    /// Query.list("SELECT id, body FROM messages ORDER BY id DESC LIMIT 50").listening(to: "messages")
    /// ```
    public func listening(to channel: String) -> Query {
        precondition(isList, "listening(to:) relays a channel after the rows of a Query.list")
        var query = self
        query.channel = channel
        return query
    }

    /// Whether the request's `Accept` prefers `text/event-stream` to what
    /// else it names; found without reading `Accept` in full unless it names it.
    static func asksForEvents(_ request: RoutedRequest) -> Bool {
        guard request.headers.values(for: "Accept").contains(where: { $0.contains("text/event-stream") }) else { return false }
        return (try? ReadPreferences(request.headers))?.representation == .events
    }

    /// The event stream of this list for `request`: its rows as `snapshot`
    /// pages, `ready`, then `insert`, `update` and `delete` for each change
    /// of its rows as the caller may see them (docs/LIVE.md); on a worker,
    /// as the caller's role, read-only, on the primary.
    func eventStream(runner: QueryRunner, request: RoutedRequest) -> HTTPResponse {
        if request.method == .head {
            return HTTPResponse(status: .ok, headers: Self.eventStreamHeaders)
        }
        return HTTPResponse.blocking {
            do {
                return try startEventStream(runner: runner, request: request)
            } catch {
                return request.response(for: error)
            }
        }
    }

    static let eventStreamHeaders: HTTPHeaders = [
        "Content-Type": "text/event-stream", "Cache-Control": "no-cache",
        // nginx passes the events on as they come, whatever its buffering.
        "X-Accel-Buffering": "no",
    ]

    private func startEventStream(runner: QueryRunner, request: RoutedRequest) throws -> HTTPResponse {
        guard let feed = runner.live else {
            throw HTTPError(
                .notAcceptable, detail: "This server does not follow lists as event streams (--live false).", code: "PGRST107",
                hint: "Ask for application/json.")
        }
        let list = try LiveList(self)
        let access = Access(role: request.role, isReadOnly: true)
        let stream = LiveStream()
        let maximumRows = min(feed.configuration.maximumRows, runner.maxRows ?? .max)
        let start = try feed.subscribe(
            stream, to: list, access: access, lastEventID: request.headers["Last-Event-ID"], maximumRows: maximumRows)
        let opening = LiveEvents.retry(feed.retryMilliseconds)
        switch start {
        case .resumed:
            stream.start(opening: opening, snapshot: nil, readyID: nil)
        case .snapshot(let readyID, let isReset):
            do {
                let pool = runner.pool
                let connection = try pool.acquire()
                do {
                    let rows = try list.resolved.rowSource(on: connection, access: access)
                    let snapshot = LiveStream.Snapshot(rows: rows, lease: (pool, connection), options: runner.options)
                    stream.start(opening: isReset ? opening + LiveEvents.reset : opening, snapshot: snapshot, readyID: readyID)
                } catch {
                    pool.release(connection)
                    throw error
                }
            } catch {
                feed.abandon(stream)
                throw error
            }
        }
        return HTTPResponse(status: .ok, headers: Self.eventStreamHeaders, body: .stream(stream))
    }
}
