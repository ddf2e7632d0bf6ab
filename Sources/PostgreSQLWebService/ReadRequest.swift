import HTTPServer
import PostgreSQL
import WebService

/// A read request in PostgREST's language, checked against the resource
/// it reads: every name found (columns, computed columns, relationships),
/// every embedded resource placed, every limit kept. A ``Query`` reading
/// it (``Query/reading(_:)``) runs as one statement for the root and one
/// per embedded resource and block of parent rows, streamed.
///
/// ```swift
/// let request = try ReadRequest(graph: graph, resource: 0, arguments: [("select", ["title,album(name)"])])
/// Query.list(graph.resources[0].sql).reading(request)
/// ```
///
/// A class, not a structure: a route's inputs hand it on by reference
/// (it holds the request's syntax and its whole tree of nodes).
public final class ReadRequest: Sendable {
    let root: Node
    /// What it was made of, for ``embedding(_:)``.
    private let graph: ResourceGraph
    private let resource: Int
    private let syntax: ReadSyntax
    private let limits: ReadLimits
    /// Whether arguments along the path of a relationship declared by
    /// parameters that `select` does not embed were left for
    /// ``embedding(_:)``, which `details` may have it embed.
    private let leftDetailPaths: Bool

    /// One resource of the request: the root, or an embedded one.
    struct Node: Sendable {
        let resource: Resource
        /// Its embed path from the root (`["album", "track"]`), for messages.
        let path: [String]
        var members: [Member] = []
        /// Whether `members` are the resource's columns as they are, in order,
        /// followed by embeds only (the statement needs no narrowing).
        var selectsAllColumns = true
        var conditions: [Condition] = []
        var order: [OrderKey]?
        var limit: Int?
        var offset: Int?
        var embeds: [Embed] = []

        /// Whether the statement can run as the resource's own, unwrapped.
        var isPlain: Bool {
            selectsAllColumns && conditions.isEmpty && order == nil && limit == nil && offset == nil
                && !embeds.contains { $0.isInner }
        }
    }

    /// What a node writes, in order.
    enum Member: Sendable {
        case expression(Expression, key: String)
        case embed(Int)
    }

    /// A column (or computed column) of a node's resource, a JSON path
    /// into it, and a cast.
    struct Expression: Sendable {
        enum Source: Sendable {
            case column(Resource.Column)
            case computed(Resource.ComputedColumn)
        }
        var source: Source
        var json: [ReadSyntax.JSONStep] = []
        var cast: String?

        /// The column's PostgreSQL type, as the filters compare it.
        var type: PostgresType {
            if cast != nil { return .unknown }
            if let last = json.last { return last.asText ? .text : .jsonb }
            switch source {
            case .column(let column): return column.type
            case .computed(let computed): return computed.type
            }
        }

        /// The column whose values a filter's value is checked against, when it is one as it is.
        var plainColumn: Resource.Column? {
            guard json.isEmpty, cast == nil, case .column(let column) = source else { return nil }
            return column
        }
    }

    /// An embedded resource of a node.
    struct Embed: Sendable {
        /// The key it is written under: its alias, else the name it was asked by.
        let key: String
        let relationship: Relationship
        var node: Node
        let isInner: Bool
        let isSpread: Bool
        /// `rel()`: it selects nothing, and is written nowhere; its filters still decide for its parent (`!inner`, `is.null`).
        let isEmpty: Bool
    }

    /// A condition on a node's rows.
    indirect enum Condition: Sendable {
        case test(Test)
        case and([Condition])
        case or([Condition])
        case not(Condition)
        /// `embed=is.null` (`exists: false`) or `embed=not.is.null`: whether the embedded resource has a row.
        case presence(embed: Int, exists: Bool)
    }

    /// One filter on an expression.
    struct Test: Sendable {
        let expression: Expression
        let filter: ReadSyntax.Filter
        let parameter: String
    }

    /// One key of a node's order: an expression of its own, or of one of its to-one embeds.
    struct OrderKey: Sendable {
        let expression: Expression
        let embed: Int?
        let isDescending: Bool
        let nullsFirst: Bool?
    }

    // MARK: - Resolving

    /// The request `arguments` (name and values, in order) make on
    /// `graph.resources[resource]`, in PostgREST's language; a name the
    /// resource does not know, a malformed argument or a limit passed is a
    /// ``ReadError`` naming the parameter.
    public convenience init(
        graph: ResourceGraph, resource: Int, arguments: [(name: String, values: [String])], limits: ReadLimits = .default
    ) throws(ReadError) {
        try self.init(
            graph: graph, resource: resource, syntax: try ReadSyntax(arguments: arguments, limits: limits), embedding: nil, limits: limits)
    }

    /// This request with each relationship of `names` embedded whole after
    /// what `select` asks for, unless `select` embeds it already: every
    /// column of its target, with the relationships of that target declared
    /// by parameters (a detail's own details) in turn. How a route's
    /// `details` argument and `select` are one thing: `details=titles` reads
    /// as `select=*,titles(*)`, and `titles.order=fromDate` orders it
    /// either way. A route whose resource has such relationships calls it
    /// (with no names when none are asked for): a filter, order or page
    /// along one that neither `select` nor `names` embed is refused here.
    /// A name the resource has no relationship for is a ``ReadError`` naming `details`.
    ///
    /// ```swift
    /// let read = try ReadRequest(graph: graph, resource: 0, arguments: [("select", ["lastName"])]).embedding(["titles"])
    /// ```
    public func embedding(_ names: [String]) throws(ReadError) -> ReadRequest {
        guard !names.isEmpty || leftDetailPaths else { return self }
        return try ReadRequest(graph: graph, resource: resource, syntax: syntax, embedding: names, limits: limits)
    }

    /// Whether the request asks for the statement's rows as they are:
    /// every column, in order, without condition, order, page or embed.
    var readsAsIs: Bool {
        root.isPlain && root.embeds.isEmpty
    }

    /// The root's page, when the request names one (`limit`, `offset`).
    var page: Query.Page? {
        guard root.limit != nil || root.offset != nil else { return nil }
        return Query.Page(limit: root.limit, offset: root.offset ?? 0)
    }

    /// `request` with another root: the same request narrowed (an event
    /// stream reading some rows again, ``narrowed(_:to:)``).
    init(_ request: ReadRequest, root: Node) {
        graph = request.graph
        resource = request.resource
        syntax = request.syntax
        limits = request.limits
        leftDetailPaths = request.leftDetailPaths
        self.root = root
    }

    /// `embedding` `nil`: the request as its arguments make it, leaving
    /// the arguments along relationships declared by parameters that
    /// `select` does not embed to ``embedding(_:)``.
    private init(graph: ResourceGraph, resource: Int, syntax: ReadSyntax, embedding: [String]?, limits: ReadLimits) throws(ReadError) {
        self.graph = graph
        self.resource = resource
        self.syntax = syntax
        self.limits = limits
        if syntax.isEmpty, embedding?.isEmpty ?? true {
            // No argument: the resource's rows as they are, from the node made at load.
            root = graph.plainRoots[resource]
            leftDetailPaths = false
            return
        }
        var root = try Self.node(
            resource, path: [], select: syntax.select, graph: graph, parameter: "select")
        var leftDetailPaths = false
        /// Whether the arguments along `path` wait for ``embedding(_:)``.
        func isLeft(_ path: [String]) -> Bool {
            guard embedding == nil, let first = path.first, !root.embeds.contains(where: { $0.key == first }),
                root.resource.relationships.contains(where: { relationship in
                    if case .parameters = relationship.link { relationship.name == first } else { false }
                })
            else { return false }
            leftDetailPaths = true
            return true
        }
        for name in embedding ?? [] where !root.embeds.contains(where: { $0.key == name }) {
            let relationship = try Self.relationship(name, hints: [], from: root.resource, graph: graph, parameter: "details")
            let child = Self.wholeNode(relationship.target, path: [name], graph: graph, depth: 1, limits: limits)
            root.embeds.append(Embed(key: name, relationship: relationship, node: child, isInner: false, isSpread: false, isEmpty: false))
            root.members.append(.embed(root.embeds.count - 1))
        }
        for (path, conditions) in syntax.conditions where !isLeft(path) {
            let parameter = path.isEmpty ? "filter" : path.joined(separator: ".")
            try Self.withNode(at: path, in: &root, parameter: parameter) { (node) throws(ReadError) in
                for condition in conditions {
                    node.conditions.append(try Self.condition(condition, in: node, path: path))
                }
            }
        }
        for (path, terms) in syntax.order where !isLeft(path) {
            let parameter = (path + ["order"]).joined(separator: ".")
            try Self.withNode(at: path, in: &root, parameter: parameter) { (node) throws(ReadError) in
                node.order = try terms.map { (term) throws(ReadError) in try Self.orderKey(term, in: node, parameter: parameter) }
            }
        }
        for (path, limit) in syntax.limit where !isLeft(path) {
            try Self.withNode(at: path, in: &root, parameter: (path + ["limit"]).joined(separator: ".")) { node in
                node.limit = limit
            }
        }
        for (path, offset) in syntax.offset where !isLeft(path) {
            try Self.withNode(at: path, in: &root, parameter: (path + ["offset"]).joined(separator: ".")) { node in
                node.offset = offset
            }
        }
        self.root = root
        self.leftDetailPaths = leftDetailPaths
    }

    /// The node for `resource` with `select` (every column when `nil`).
    private static func node(
        _ index: Int, path: [String], select: [ReadSyntax.SelectItem]?, graph: ResourceGraph, parameter: String
    ) throws(ReadError) -> Node {
        let resource = graph.resources[index]
        var node = Node(resource: resource, path: path)
        guard let select else {
            node.members = graph.allColumns[index]
            return node
        }
        var sawStar = false
        var columnsInOrder = true
        for item in select {
            switch item {
            case .star:
                if sawStar || node.members.contains(where: { if case .expression = $0 { true } else { false } }) {
                    columnsInOrder = false
                }
                sawStar = true
                node.members += graph.allColumns[index]
            case .field(let field):
                columnsInOrder = false
                let expression = try Self.expression(field.column, cast: field.cast, in: resource, parameter: parameter)
                let key = field.alias ?? (field.column.json.isEmpty ? Self.label(of: expression) : field.column.defaultKey)
                node.members.append(.expression(expression, key: key))
            case .embed(let syntax):
                let relationship = try Self.relationship(
                    syntax.name, hints: syntax.hints, from: resource, graph: graph, parameter: parameter)

                let key = syntax.alias ?? syntax.name
                let child = try Self.node(
                    relationship.target, path: path + [key], select: syntax.select.isEmpty ? [] : syntax.select,
                    graph: graph, parameter: parameter)
                node.embeds.append(
                    Embed(
                        key: key, relationship: relationship, node: child, isInner: syntax.isInner, isSpread: syntax.isSpread,
                        isEmpty: syntax.select.isEmpty))
                if !syntax.select.isEmpty { node.members.append(.embed(node.embeds.count - 1)) }
            }
        }
        node.selectsAllColumns = sawStar && columnsInOrder
        return node
    }

    /// The node for every column of `resource`, embedding the targets of
    /// its relationships declared by parameters (nested details) as whole
    /// nodes too, down to `limits.depth`.
    private static func wholeNode(_ index: Int, path: [String], graph: ResourceGraph, depth: Int, limits: ReadLimits) -> Node {
        let resource = graph.resources[index]
        var node = Node(resource: resource, path: path)
        node.members = graph.allColumns[index]
        guard depth < limits.depth else { return node }
        for relationship in resource.relationships {
            guard case .parameters = relationship.link, !node.embeds.contains(where: { $0.key == relationship.name }) else { continue }
            let child = wholeNode(
                relationship.target, path: path + [relationship.name], graph: graph, depth: depth + 1, limits: limits)
            node.embeds.append(
                Embed(key: relationship.name, relationship: relationship, node: child, isInner: false, isSpread: false, isEmpty: false))
            node.members.append(.embed(node.embeds.count - 1))
        }
        return node
    }

    /// The label a plain column or computed column is written with.
    private static func label(of expression: Expression) -> String {
        switch expression.source {
        case .column(let column): column.label
        case .computed(let computed): computed.name
        }
    }

    /// The column (or computed column) a request names, with its path and cast.
    private static func expression(
        _ path: ReadSyntax.ColumnPath, cast: String?, in resource: Resource, parameter: String
    ) throws(ReadError) -> Expression {
        let source: Expression.Source
        if let column = resource.column(named: path.name) {
            source = .column(column)
        } else if let computed = resource.computedColumns.first(where: { $0.name == path.name }) {
            source = .computed(computed)
        } else {
            throw ReadError.unknownColumn(path.name, in: resource, parameter: parameter)
        }
        if let cast, !Self.isTypeName(cast) {
            throw ReadError.invalid(parameter, "\"\(cast)\" is not a type name to cast to.")
        }
        return Expression(source: source, json: path.json, cast: cast?.lowercased())
    }

    /// Whether `name` may be written as a type in SQL as it is: words of
    /// letters, digits and underscores (`text`, `double precision`),
    /// optionally followed by `[]`. Nothing else can end the cast.
    static func isTypeName(_ name: String) -> Bool {
        var words = name.split(separator: " ", omittingEmptySubsequences: true)
        guard !words.isEmpty, words.count <= 3 else { return false }
        if let last = words.last, last.hasSuffix("[]") { words[words.count - 1] = last.dropLast(2) }
        return words.allSatisfy { word in
            guard let first = word.unicodeScalars.first, first == "_" || ("a"..."z").contains(first) || ("A"..."Z").contains(first)
            else { return false }
            return word.unicodeScalars.allSatisfy {
                $0 == "_" || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
            }
        }
    }

    /// The relationship of `resource` that `name` (and `hints`) choose.
    private static func relationship(
        _ name: String, hints: [String], from resource: Resource, graph: ResourceGraph, parameter: String
    ) throws(ReadError) -> Relationship {
        // By the target's name, or a to-one relationship by its foreign key's column (`client_id(*)`).
        var candidates = resource.relationships.filter { relationship in
            relationship.name == name || graph.resources[relationship.target].isNamed(name)
        }
        if candidates.isEmpty {
            candidates = resource.relationships.filter { $0.cardinality == .one && $0.columns == [name] }
        }
        for hint in hints {
            candidates = candidates.filter { relationship in
                if relationship.constraint == hint || relationship.columns.contains(hint) { return true }
                if case .junction(let table, _, _) = relationship.link, table.hasSuffix("\"\(hint)\"") { return true }
                return false
            }
        }
        guard let first = candidates.first else {
            if ["count", "sum", "avg", "max", "min"].contains(name) {
                throw ReadError(
                    HTTPError(.badRequest, detail: "Use of aggregate functions is not allowed", parameter: parameter, code: "PGRST123"))
            }
            throw ReadError.unknownRelationship(name, hints: hints, from: resource, parameter: parameter)
        }
        // Without a hint, the one relationship declared by parameters (a
        // file's detail) wins over foreign keys of its name: `details=titles`
        // and `select=*,titles(*)` are one thing.
        if hints.isEmpty, candidates.count > 1 {
            let declared = candidates.filter { if case .parameters = $0.link { true } else { false } }
            if declared.count == 1 { return declared[0] }
        }
        guard candidates.count == 1 else {
            throw ReadError.ambiguousRelationship(name, from: resource, candidates: candidates, parameter: parameter)
        }
        return first
    }

    /// Runs `body` on the node at `path` (embed keys from the root).
    private static func withNode(
        at path: [String], in node: inout Node, parameter: String, _ body: (inout Node) throws(ReadError) -> Void
    ) throws(ReadError) {
        guard let first = path.first else { return try body(&node) }
        guard let index = node.embeds.firstIndex(where: { $0.key == first }) else {
            throw ReadError.notEmbedded(node.path + [first], parameter: parameter)
        }
        try withNode(at: Array(path.dropFirst()), in: &node.embeds[index].node, parameter: parameter, body)
    }

    private static func condition(_ syntax: ReadSyntax.Condition, in node: Node, path: [String]) throws(ReadError) -> Condition {
        switch syntax {
        case .and(let operands):
            return .and(try operands.map { (operand) throws(ReadError) in try condition(operand, in: node, path: path) })
        case .or(let operands):
            return .or(try operands.map { (operand) throws(ReadError) in try condition(operand, in: node, path: path) })
        case .not(let operand):
            return .not(try condition(operand, in: node, path: path))
        case .test(let filter):
            let parameter = (path + [filter.column.name]).joined(separator: ".")
            // `album=is.null`, `album=not.is.null`: whether the embedded resource has a row.
            if filter.column.json.isEmpty, node.resource.column(named: filter.column.name) == nil,
                let embed = node.embeds.firstIndex(where: { $0.key == filter.column.name })
            {
                guard case .truth(let truth) = filter.operand, truth == .null || truth == .notNull else {
                    throw ReadError.invalid(
                        parameter, "An embedded resource is filtered by is.null or not.is.null only (parameter \"\(parameter)\").")
                }
                return .presence(embed: embed, exists: (truth == .notNull) != filter.isNegated)
            }
            let expression = try expression(filter.column, cast: nil, in: node.resource, parameter: parameter)
            if case .column(let column) = expression.source, !column.isFilterable {
                throw ReadError.notChosen(column, in: node.resource, filtering: true, parameter: parameter)
            }
            try check(filter, on: expression, parameter: parameter)
            return .test(Test(expression: expression, filter: filter, parameter: parameter))
        }
    }

    /// Refuses a value its column's type cannot hold, where that is known
    /// exactly and cheaply (integers, booleans, UUIDs); other values are
    /// read by PostgreSQL as the column's type.
    private static func check(_ filter: ReadSyntax.Filter, on expression: Expression, parameter: String) throws(ReadError) {
        // `is.true` of a column of a built-in type other than boolean: refused here, naming the parameter.
        if case .truth(let truth) = filter.operand, truth != .null, truth != .notNull, let column = expression.plainColumn,
            column.type != .bool, column.type.oid < 16_384, column.type != .unknown
        {
            throw ReadError.invalid(
                parameter,
                "The parameter \"\(parameter)\" tests \(column.label) (\(column.valueType.name)) with is.\(truth.rawValue), "
                    + "which applies to a boolean: is.null or is.not_null.")
        }
        guard let column = expression.plainColumn, let check = column.check else { return }
        switch filter.operator {
        case .eq, .neq, .gt, .gte, .lt, .lte, .in, .isdistinct: break
        default: return
        }
        switch filter.operand {
        case .value(let value):
            if !check(value) { throw ReadError.invalidValue(value, for: column, parameter: parameter) }
        case .list(let values):
            for value in values where !check(value) { throw ReadError.invalidValue(value, for: column, parameter: parameter) }
        case .truth:
            break
        }
    }

    private static func orderKey(_ term: ReadSyntax.OrderTerm, in node: Node, parameter: String) throws(ReadError) -> OrderKey {
        guard let embedName = term.embed else {
            let expression = try expression(term.column, cast: nil, in: node.resource, parameter: parameter)
            try checkOrderable(expression, in: node.resource, parameter: parameter)
            return OrderKey(expression: expression, embed: nil, isDescending: term.isDescending, nullsFirst: term.nullsFirst)
        }
        guard let embed = node.embeds.firstIndex(where: { $0.key == embedName }) else {
            throw ReadError.notEmbedded(node.path + [embedName], parameter: parameter)
        }
        guard node.embeds[embed].relationship.cardinality == .one else {
            throw ReadError.relatedOrder(embedName, from: node.resource, parameter: parameter)
        }
        let expression = try expression(term.column, cast: nil, in: node.embeds[embed].node.resource, parameter: parameter)
        try checkOrderable(expression, in: node.embeds[embed].node.resource, parameter: parameter)
        return OrderKey(expression: expression, embed: embed, isDescending: term.isDescending, nullsFirst: term.nullsFirst)
    }

    private static func checkOrderable(_ expression: Expression, in resource: Resource, parameter: String) throws(ReadError) {
        if case .column(let column) = expression.source, !column.isOrderable {
            throw ReadError.notChosen(column, in: resource, filtering: false, parameter: parameter)
        }
    }
}
