import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An event of a list followed live (docs/LIVE.md), its rows decoded as `Row`.
///
/// ```swift
/// switch event {
/// case .snapshot(let rows): for row in rows { table[row.id] = row }
/// case .insert(let row), .update(let row): table[row.id] = row
/// case .delete(let key): table[Int(key["id"]!)!] = nil
/// case .reset: table = [:]
/// case .ready, .message: break
/// }
/// ```
public enum LiveEvent<Row: Decodable & Sendable>: Sendable {
    /// A page of the list's rows as they are now.
    case snapshot([Row])
    /// The snapshot is whole; changes follow.
    case ready
    /// A row entered the list.
    case insert(Row)
    /// A row of the list changed.
    case update(Row)
    /// A row left the list: its key, each column's value as text.
    case delete([String: String])
    /// The rows held are stale: forget them, a snapshot follows.
    case reset
    /// A channel's notification (`-- @listen`): its payload as JSON.
    case message(Data)
}

/// How a subscription connects again after its stream ends or fails: at
/// once after a clean end (after the server's `retry:` when it sent one),
/// else after a wait that doubles from `initialDelay` up to `maximumDelay`,
/// with jitter, until a connection is made.
///
/// ```swift
/// ReconnectPolicy(initialDelay: 0.5, maximumDelay: 30)
/// ```
public struct ReconnectPolicy: Sendable {
    public var initialDelay: TimeInterval
    public var maximumDelay: TimeInterval

    public init(initialDelay: TimeInterval = 0.5, maximumDelay: TimeInterval = 30) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
    }
}

/// The events of a list followed live, as an `AsyncSequence` that never
/// ends by itself: when its stream ends or breaks it connects again, with
/// the `Last-Event-ID` of the last event it read (the server then sends
/// what was missed, or `reset` and a new snapshot). A problem the server
/// answers that calling again would not change (400, 403, 406) throws;
/// leaving the loop, or cancelling the task, closes the stream.
///
/// ```swift
/// for try await event in client.subscribe("/departments", of: Department.self) {
///     print(event)
/// }
/// ```
public struct LiveSubscription<Row: Decodable & Sendable>: AsyncSequence {
    let client: WebServiceClient
    let request: WebServiceRequest
    let policy: ReconnectPolicy

    public func makeAsyncIterator() -> Iterator {
        Iterator(client: client, request: request, policy: policy)
    }

    public struct Iterator: AsyncIteratorProtocol {
        private let client: WebServiceClient
        private let request: WebServiceRequest
        private let policy: ReconnectPolicy
        private var transfer: StreamingTransfer?
        private var parser = ServerSentEventParser()
        private var pending: [LiveEvent<Row>] = []
        private var lastEventID: String?
        /// Failed connections in a row; the wait before the next grows with them.
        private var failures = 0
        private var hasConnected = false
        private let decoder = WebServiceDecoding.decoder()

        init(client: WebServiceClient, request: WebServiceRequest, policy: ReconnectPolicy) {
            self.client = client
            self.request = request
            self.policy = policy
        }

        public mutating func next() async throws -> LiveEvent<Row>? {
            while true {
                try Task.checkCancellation()
                if !pending.isEmpty { return pending.removeFirst() }
                guard let transfer else {
                    try await connect()
                    continue
                }
                let block: Data?
                do {
                    block = try await transfer.next()
                } catch {
                    if Task.isCancelled { throw CancellationError() }
                    self.transfer = nil
                    failures += 1
                    continue
                }
                guard let block else {
                    // A clean end (a drain, the stream's lifetime): again after the server's retry.
                    self.transfer = nil
                    continue
                }
                for event in parser.append(block) {
                    if let id = event.lastEventID { lastEventID = id }
                    pending.append(try decode(event))
                }
            }
        }

        /// Connects, after the wait the failures so far call for.
        private mutating func connect() async throws {
            if hasConnected || failures > 0 {
                let base = failures == 0 ? Double(parser.retry ?? 0) / 1000 : policy.initialDelay * pow(2, Double(failures - 1))
                let delay = Swift.min(policy.maximumDelay, base) * Double.random(in: 0.75...1.25)
                if delay > 0 { try await Task.sleep(nanoseconds: UInt64(delay * 1e9)) }
            }
            var attempt = request
            attempt.headers["Accept"] = "text/event-stream"
            if let lastEventID { attempt.headers["Last-Event-ID"] = lastEventID }
            do {
                let start = try await client.startStreaming(attempt)
                parser = ServerSentEventParser(retry: parser.retry)
                switch start {
                case .transfer(let started):
                    transfer = started
                case .body(let body):
                    for event in parser.append(body) { pending.append(try decode(event)) }
                }
                hasConnected = true
                failures = 0
            } catch let error as WebServiceError where error.isUnreachable || error.status == 429 {
                failures += 1
            }
        }

        private func decode(_ event: ServerSentEventParser.Event) throws -> LiveEvent<Row> {
            let data = Data(event.data.utf8)
            do {
                switch event.name {
                case "snapshot": return .snapshot(try decoder.decode([Row].self, from: data))
                case "ready": return .ready
                case "insert": return .insert(try decoder.decode(Row.self, from: data))
                case "update": return .update(try decoder.decode(Row.self, from: data))
                case "delete": return .delete(try Self.key(data))
                case "reset": return .reset
                default: return .message(data)
                }
            } catch let error as WebServiceError {
                throw error
            } catch {
                throw WebServiceError(.decoding, detail: "A \(event.name) event is not a \(Row.self): \(error)", underlying: error)
            }
        }

        /// A `delete` event's key: each member's value as text.
        private static func key(_ data: Data) throws -> [String: String] {
            guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw WebServiceError(.decoding, detail: "A delete event's data is not an object.")
            }
            return object.mapValues { value in
                switch value {
                case let text as String: text
                case let number as NSNumber: number.stringValue
                default: "\(value)"
                }
            }
        }
    }
}

extension WebServiceClient {
    /// Follows the list `GET path` answers as an event stream (`Accept:
    /// text/event-stream`, docs/LIVE.md): its rows, then each change to
    /// them, decoded as `Row`, connecting again with `Last-Event-ID` when
    /// the stream ends or breaks (``LiveSubscription``).
    ///
    /// ```swift
    /// for try await event in client.subscribe("/employees", arguments: ["lastName": "eq.Facello"], of: EmployeeSummary.self) {
    ///     if case .update(let employee) = event { print(employee.firstName) }
    /// }
    /// ```
    public func subscribe<Row: Decodable & Sendable>(
        _ path: String, arguments: RequestArguments = [:], headers: [String: String] = [:], of type: Row.Type = Row.self,
        reconnecting policy: ReconnectPolicy = ReconnectPolicy()
    ) -> LiveSubscription<Row> {
        LiveSubscription(client: self, request: WebServiceRequest(.get, path, arguments: arguments, headers: headers), policy: policy)
    }
}
