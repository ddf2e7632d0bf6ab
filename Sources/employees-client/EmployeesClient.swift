import ArgumentParser
import Foundation
import SQLRestVersion
import WebServiceClient

/// A command-line client of `employees-server`, made with `WebServiceClient`
/// and `JSONRPCClient`.
///
/// ```
/// employees-client --base-url http://localhost:8080 --cache ~/.cache/employees get 10004 --details titles,salaries
/// employees-client --base-url http://localhost:8080 --retry 3 search 'bal*'
/// employees-client --base-url http://localhost:8080 rpc math.getSum a=2 b=4
/// employees-client --base-url http://localhost:8080 watch '/employees?lastName=eq.Facello'
/// ```
@main
struct EmployeesClient: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "employees-client",
        abstract: "Calls employees-server: one employee, a search, any operation by JSON-RPC, or a list followed as it changes.",
        version: SwiftSQLRest.version,
        subcommands: [Get.self, Search.self, RPC.self, Watch.self])

    @OptionGroup var options: ClientOptions
}

struct ClientOptions: ParsableArguments {
    @Option(help: "Where employees-server answers (http://localhost:8080).")
    var baseURL: String

    @Option(help: "A folder to keep answers in; when the server cannot be reached, the stored answer is printed.")
    var cache: String?

    @Option(help: "Seconds to wait for the server.")
    var timeout: Double = 30

    @Option(
        help: ArgumentHelp(
            "Send a call up to N more times when the server is unreachable or busy (429, 503: after its Retry-After).",
            discussion: "get and search only: rpc calls are POSTs, never sent twice. Without Retry-After, the waits grow, with jitter."))
    var retry: Int = 0

    func validate() throws {
        guard retry >= 0 else { throw ValidationError("--retry is a count of further attempts, 0 or more.") }
    }

    func client() throws -> WebServiceClient {
        guard let url = URL(string: baseURL), url.scheme == "http" || url.scheme == "https" else {
            throw ValidationError("--base-url must be an http or https URL, not \(baseURL).")
        }
        let cache = try self.cache.map { try ResponseCache(directory: URL(filePath: ($0 as NSString).expandingTildeInPath)) }
        let hooks: [WebServiceHook] = retry > 0 ? [.retry(RetryPolicy(maxAttempts: retry + 1))] : []
        return WebServiceClient(baseURL: url, configuration: .init(hooks: hooks, timeout: timeout, cache: cache))
    }
}

// MARK: - get

struct Get: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Prints one employee as JSON.")

    @OptionGroup var options: ClientOptions

    @Argument(help: "The employee's number (10001 and up).")
    var number: Int

    @Option(help: "What to nest: titles, salaries, departments, comma-separated.")
    var details: String?

    func run() async throws {
        let client = try options.client()
        var arguments: RequestArguments = ["employeeNumber": number]
        if let details { arguments["details"] = .string(details) }
        let response = try await reporting(client) {
            try await client.send(WebServiceRequest(.get, "/employees/{employeeNumber}", arguments: arguments))
        }
        if response.isStale {
            let stored = response.storedAt.map { $0.formatted(.iso8601) } ?? "earlier"
            let age = response.age.map { ", \(Int($0)) s old" } ?? ""
            standardError(
                "employees-client: \(client.baseURL.absoluteString) did not confirm the stored answer; printing it stale (stored at \(stored)\(age))."
            )
        }
        FileHandle.standardOutput.write(response.data)
        FileHandle.standardOutput.write(Data("\n".utf8))
    }
}

// MARK: - search

struct Search: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Prints the employees whose first or last name matches, one per line (number, first name, last name), as they arrive.")

    @OptionGroup var options: ClientOptions

    @Argument(help: "A name pattern: `*` matches any run of characters (bal*, *son).")
    var pattern: String

    @Flag(inversion: .prefixedNo, help: "Show how far a long answer is on standard error (default: when it is a terminal).")
    var progress: Bool?

    struct Match: Decodable {
        var employeeNumber: Int
        var firstName: String
        var lastName: String
    }

    func run() async throws {
        let client = try options.client()
        var output = Data()
        let line = (progress ?? (isatty(STDERR_FILENO) == 1)) ? ProgressLine() : nil
        var request = WebServiceRequest(.get, "/employees", arguments: ["name": pattern])
        if let line { request.progress = { line.update(bytes: $0.completedBytes) } }
        try await reporting(client) {
            for try await match in client.stream(request, of: Match.self) {
                line?.update(matches: 1)
                output.append(contentsOf: "\(match.employeeNumber)\t\(match.firstName)\t\(match.lastName)\n".utf8)
                if output.count >= 16 << 10 {
                    FileHandle.standardOutput.write(output)
                    output.removeAll(keepingCapacity: true)
                }
            }
        }
        FileHandle.standardOutput.write(output)
        line?.finish()
    }
}

/// A line on standard error, rewritten in place, that tells how far a
/// long answer is: the bytes received and the matches printed. An answer
/// shorter than `delay` seconds shows none.
///
/// `@unchecked Sendable`: the fields are touched only with `lock` held.
final class ProgressLine: @unchecked Sendable {
    private let lock = NSLock()
    private let start = Date()
    private var bytes: Int64 = 0
    private var matches = 0
    private var shownAt: Date?
    /// Seconds before the line first shows, then between its updates.
    private let delay: TimeInterval = 0.5
    private let interval: TimeInterval = 0.25

    func update(bytes: Int64? = nil, matches added: Int = 0) {
        let now = Date()
        let text: String? = lock.withLock {
            if let bytes { self.bytes = bytes }
            matches += added
            guard now.timeIntervalSince(start) >= delay, now.timeIntervalSince(shownAt ?? .distantPast) >= interval else { return nil }
            shownAt = now
            return describe(now)
        }
        if let text { FileHandle.standardError.write(Data(("\r" + text).utf8)) }
    }

    /// The last count, on a line of its own, if the line was shown.
    func finish() {
        let text: String? = lock.withLock { shownAt == nil ? nil : describe(Date()) }
        if let text { FileHandle.standardError.write(Data(("\r" + text + "\n").utf8)) }
    }

    private func describe(_ now: Date) -> String {
        let megabytes = (Double(bytes) / 1_048_576).formatted(.number.precision(.fractionLength(1)))
        let seconds = now.timeIntervalSince(start).formatted(.number.precision(.fractionLength(1)))
        return "employees-client: \(matches) matches, \(megabytes) MB received in \(seconds) s"
    }
}

// MARK: - rpc

struct RPC: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rpc",
        abstract: "Calls an operation by JSON-RPC (rpc.discover lists them) and prints its result as JSON.",
        discussion: """
            Each param is name=value; a value that reads as JSON (2, true, [1,2], "text") is sent as that value, any \
            other as a string. A name given more than once is a list: details=titles details=salaries.
            """)

    @OptionGroup var options: ClientOptions

    @Argument(help: "The method: an operationId such as employees.getByEmployeeNumber or math.getSum.")
    var method: String

    @Argument(help: "The params, as name=value.")
    var params: [String] = []

    func run() async throws {
        var names: [String] = []
        var values: [String: [RequestArgumentValue]] = [:]
        for param in params {
            guard let equals = param.firstIndex(of: "="), equals != param.startIndex else {
                throw ValidationError("A param is name=value, not \(param).")
            }
            let name = String(param[..<equals])
            if values[name] == nil { names.append(name) }
            values[name, default: []].append(Self.value(String(param[param.index(after: equals)...])))
        }
        let arguments = RequestArguments(
            names.map { name in
                let given = values[name] ?? []
                return (name, given.count == 1 ? given[0] : .list(given))
            })
        let client = try options.client()
        let rpc = JSONRPCClient(client: client)
        let result = try await reporting(client) { try await rpc.call(method, params: .byName(arguments), as: JSONAny.self) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        FileHandle.standardOutput.write(try encoder.encode(result))
        FileHandle.standardOutput.write(Data("\n".utf8))
    }

    /// `text` as the JSON value it reads as, else as a string.
    static func value(_ text: String) -> RequestArgumentValue {
        guard let value = try? JSONDecoder().decode(JSONAny.self, from: Data(text.utf8)) else { return .string(text) }
        return value.argumentValue
    }
}

// MARK: - watch

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Follows a list as it changes: prints its rows, then each change as it comes, one per line (Ctrl-C stops).",
        discussion: """
            Each line is the event's name and its JSON: `snapshot` for each row the list holds, `ready` once they are \
            all printed, then `insert`, `update` and `delete` (the key alone) as rows enter, change and leave it, and \
            `reset` when the rows printed are stale (a new snapshot follows). The stream is connected again, where it \
            left off, when it ends or breaks (docs/LIVE.md).
            """)

    @OptionGroup var options: ClientOptions

    @Argument(help: "The list's path, with its filters, such as /departments or '/employees?lastName=eq.Facello'.")
    var path: String = "/departments"

    func run() async throws {
        let client = try options.client()
        let (path, arguments) = Self.split(self.path)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        func print(_ name: String, _ value: (some Encodable)?) throws {
            var line = Data(name.utf8)
            if let value {
                line.append(contentsOf: " ".utf8)
                line.append(try encoder.encode(value))
            }
            line.append(contentsOf: "\n".utf8)
            FileHandle.standardOutput.write(line)
        }
        try await reporting(client) {
            for try await event in client.subscribe(path, arguments: arguments, of: JSONAny.self) {
                switch event {
                case .snapshot(let rows): for row in rows { try print("snapshot", row) }
                case .ready: try print("ready", JSONAny?.none)
                case .insert(let row): try print("insert", row)
                case .update(let row): try print("update", row)
                case .delete(let key): try print("delete", key)
                case .reset: try print("reset", JSONAny?.none)
                case .message(let data): try print("message", try? JSONDecoder().decode(JSONAny.self, from: data))
                }
            }
        }
    }

    /// `/employees?lastName=eq.Facello` as the path and its query's arguments.
    static func split(_ target: String) -> (path: String, arguments: RequestArguments) {
        guard let question = target.firstIndex(of: "?") else { return (target, [:]) }
        let query = target[target.index(after: question)...]
        var arguments: [(name: String, value: RequestArgumentValue)] = []
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : ""
            arguments.append((name, .string(value)))
        }
        return (String(target[..<question]), RequestArguments(arguments))
    }
}

// MARK: - Errors and output

/// Runs `call`; a failure becomes a message on standard error and exit status 1.
func reporting<T>(_ client: WebServiceClient, _ call: () async throws -> T) async throws -> T {
    do {
        return try await call()
    } catch let error as WebServiceError {
        switch error.code {
        case .transport, .timedOut:
            standardError(
                "employees-client: cannot reach \(client.baseURL.absoluteString): \(error.detail ?? "\(error)")"
                    + (client.configuration.cache == nil ? "" : " (and nothing is stored for this request)"))
        case .server:
            standardError("employees-client: \(error.status ?? 0) \(error.title ?? ""): \(error.detail ?? "no detail")")
        default:
            standardError("employees-client: \(error)")
        }
        throw ExitCode(1)
    } catch let error as JSONRPCError {
        standardError("employees-client: \(error)")
        throw ExitCode(1)
    }
}

func standardError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// Any JSON value, to print a result whatever its shape.
enum JSONAny: Codable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case integer(Int)
    case string(String)
    case array([JSONAny])
    case object([String: JSONAny])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONAny].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONAny].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    var argumentValue: RequestArgumentValue {
        switch self {
        case .null: .string("")
        case .bool(let value): value.argumentValue
        case .number(let value): value.argumentValue
        case .integer(let value): value.argumentValue
        case .string(let value): .string(value)
        case .array(let values): .list(values.map(\.argumentValue))
        case .object: .string((try? JSONEncoder().encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}")
        }
    }
}
