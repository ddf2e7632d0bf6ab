/// How much one request may ask the server to do, in the things a caller
/// can repeat: argument values, filters, the items of an `in.()` list, the
/// calls of a JSON-RPC batch and its bytes. The work the server does for each
/// grows in step with the count (never faster), and a count past its limit
/// is refused before that work, with a problem document that names the
/// limit: `400` for the counts, `413` for the JSON-RPC body, whose limit the
/// server applies before it reads the body (``WebServiceRouter/maximumBodySizeByPath``).
///
/// The router holds one (``WebServiceRouter/limits``) and hands it to every
/// request's runner (``RoutedRequest/limits``); `ServerProgram` sets it from
/// its options (`--max-arguments`, `--max-filters`, `--max-list-items`,
/// `--max-batch-calls`, `--max-jsonrpc-bytes`).
///
/// ```swift
/// var limits = RequestLimits()
/// limits.batchCalls = 100
/// let router = try WebServiceRouter(services: services, runners: [runner], limits: limits)
/// ```
public struct RequestLimits: Sendable, Hashable {
    /// Argument values in one request: query items, form fields and the
    /// members of a JSON object body, each value of a repeated argument
    /// and each element of an array member counting once.
    public var arguments: Int
    /// Conditions on columns in one request (`?lastName=eq.Facello`).
    public var filters: Int
    /// Items in one `in.()` list.
    public var listItems: Int
    /// Calls in one JSON-RPC batch.
    public var batchCalls: Int
    /// Bytes of a JSON-RPC request body, a batch or a single call.
    public var jsonRPCBytes: Int

    /// The most parameters PostgreSQL binds to one statement: a request
    /// that would bind more is refused as the limits above refuse theirs,
    /// before PostgreSQL sees it.
    public static let postgreSQLParameters = 65_535

    /// Every limit has a default; name only what differs.
    ///
    /// ```swift
    /// RequestLimits(arguments: 200, batchCalls: 50)
    /// ```
    public init(
        arguments: Int = 1_000, filters: Int = 1_000, listItems: Int = 1_000, batchCalls: Int = 1_000, jsonRPCBytes: Int = 1 << 20
    ) {
        self.arguments = arguments
        self.filters = filters
        self.listItems = listItems
        self.batchCalls = batchCalls
        self.jsonRPCBytes = jsonRPCBytes
    }

    /// The `400` problem for a request that asks for more than a limit
    /// allows: its detail names the limit, and the member `limit` holds it.
    ///
    /// ```swift
    /// throw RequestLimits.exceeded("filters", limit: limits.filters, detail: "The request has more than 1000 filters.")
    /// ```
    public static func exceeded(_ name: String, limit: Int, detail: String) -> HTTPError {
        HTTPError(.badRequest, detail: detail, extensions: [("limit", .string(name)), ("maximum", .integer(limit))])
    }
}
