import WebService

/// A read request in PostgREST's language, as the request wrote it, before
/// its names are looked up in a ``Resource``: what `select`, the filters,
/// `or`/`and`, `order`, `limit` and `offset` say, at the root and for each
/// embedded resource (by its path of embed names, `album.track`).
///
/// Parsing is one pass over each argument, linear in its length; what a
/// request may hold is capped by ``ReadLimits``.
struct ReadSyntax: Sendable {
    /// `select`, `nil` when absent (every column).
    var select: [SelectItem]?
    /// Conditions by path (`[]` the root), each list ANDed.
    var conditions: [[String]: [Condition]] = [:]
    /// `order` by path.
    var order: [[String]: [OrderTerm]] = [:]
    /// `limit` and `offset` by path.
    var limit: [[String]: Int] = [:]
    var offset: [[String]: Int] = [:]

    /// Whether the request said nothing in the language.
    var isEmpty: Bool {
        select == nil && conditions.isEmpty && order.isEmpty && limit.isEmpty && offset.isEmpty
    }

    /// One item of `select`.
    enum SelectItem: Sendable, Equatable {
        /// `*`: every column, in the resource's order.
        case star
        /// `alias:column->json->>path::cast`.
        case field(Field)
        /// `alias:name!hint!inner(items)`, or `...name(items)` spread.
        case embed(Embed)
    }

    /// A column, a JSON path into it, and how the request names and casts it.
    struct Field: Sendable, Equatable {
        var alias: String?
        var column: ColumnPath
        var cast: String?
    }

    /// A column and a path of `->`/`->>` steps into it.
    struct ColumnPath: Sendable, Equatable {
        var name: String
        var json: [JSONStep] = []

        /// The key a selected path is written under without an alias, as
        /// PostgREST writes it: its last step named by a key (array indexes
        /// pass over: `data->0->a->>2` is `a`), else the column's name.
        var defaultKey: String {
            for step in json.reversed() {
                if case .name(let key) = step.key { return key }
            }
            return name
        }
    }

    /// One `->` (JSON) or `->>` (text) step, by key or array index.
    struct JSONStep: Sendable, Equatable {
        enum Key: Sendable, Equatable {
            case name(String)
            case index(Int)
        }
        var asText: Bool
        var key: Key
    }

    /// An embedded resource in `select`.
    struct Embed: Sendable, Equatable {
        var alias: String?
        var name: String
        /// `!fk_name` or `!column` hints that choose among several relationships.
        var hints: [String] = []
        /// `!inner`: parents without a matching row are left out.
        var isInner = false
        /// `...name(…)`: the embedded row's members written into the parent.
        var isSpread = false
        var select: [SelectItem] = []
    }

    /// A condition: a test of a column, or `and`/`or`/`not` of conditions.
    indirect enum Condition: Sendable, Equatable {
        case test(Filter)
        case and([Condition])
        case or([Condition])
        case not(Condition)
    }

    /// `column=[not.]operator[(modifier)].operand`.
    struct Filter: Sendable, Equatable {
        var column: ColumnPath
        var isNegated: Bool
        var `operator`: Operator
        /// `eq(any)`, `like(all)`: the operand is a list, any or all of whose values match.
        var quantifier: Quantifier?
        /// `fts(english)`: the text search configuration.
        var language: String?
        var operand: Operand
    }

    /// What an operator compares with.
    enum Operand: Sendable, Equatable {
        /// A value as written (`eq.5`, `cs.{1,2}`, `fts.cat`).
        case value(String)
        /// The values of `in.(…)` or of a quantifier's `{…}`.
        case list([String])
        /// `is.null`, `is.true`, `is.false`, `is.unknown`, `is.not_null`.
        case truth(Truth)
    }

    enum Truth: String, Sendable, Equatable {
        case null
        case notNull = "not_null"
        case `true`, `false`, unknown
    }

    enum Quantifier: String, Sendable, Equatable {
        case any, all
    }

    /// The operators of PostgREST's filters.
    enum Operator: String, Sendable, Equatable, CaseIterable {
        case eq, neq, gt, gte, lt, lte, like, ilike, match, imatch
        case `in`, `is`, isdistinct
        case fts, plfts, phfts, wfts
        case cs, cd, ov, sl, sr, nxr, nxl, adj

        /// Whether `(any)` and `(all)` may follow it.
        var takesQuantifier: Bool {
            switch self {
            case .eq, .neq, .gt, .gte, .lt, .lte, .like, .ilike, .match, .imatch: true
            default: false
            }
        }

        /// Whether `(config)` may follow it.
        var isFullText: Bool {
            switch self {
            case .fts, .plfts, .phfts, .wfts: true
            default: false
            }
        }
    }

    /// One key of `order`.
    struct OrderTerm: Sendable, Equatable {
        /// The column, or the embedded to-one resource whose column orders (`album(title)`).
        var column: ColumnPath
        var embed: String?
        var isDescending = false
        /// `nil`: PostgreSQL's default (last ascending, first descending).
        var nullsFirst: Bool?
    }
}

/// What one read request may hold: each limit bounds a cost that grows
/// with the request (parsing, resolving and the SQL built), and a request
/// past one is answered 400 naming it, long before PostgreSQL's own limit
/// of 65,535 bound values could refuse it.
///
/// ```swift
/// ReadLimits.default.conditions   // 1,000
/// ```
public struct ReadLimits: Sendable {
    /// Filters and logic conditions, all paths together.
    public var conditions: Int
    /// Values of one `in.(…)` or quantified list.
    public var listValues: Int
    /// Embedded resources in `select`, all levels together.
    public var embeds: Int
    /// Nesting of `select`'s embeds and of `and`/`or`.
    public var depth: Int
    /// Items of `select` and keys of `order`, all levels together.
    public var items: Int

    /// The defaults: 1,000 conditions, 1,000 values per list, 50 embeds,
    /// 16 levels, 1,000 items.
    public static let `default` = ReadLimits(conditions: 1_000, listValues: 1_000, embeds: 50, depth: 16, items: 1_000)

    /// The defaults, with a request's limits on filters and list values
    /// (the server's `--max-filters` and `--max-list-items`).
    public init(_ request: RequestLimits) {
        self = .default
        conditions = request.filters
        listValues = request.listItems
    }

    public init(conditions: Int, listValues: Int, embeds: Int, depth: Int, items: Int) {
        self.conditions = conditions
        self.listValues = listValues
        self.embeds = embeds
        self.depth = depth
        self.items = items
    }
}
