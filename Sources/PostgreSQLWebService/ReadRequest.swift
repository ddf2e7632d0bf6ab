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
public struct ReadRequest: Sendable {
    let root: Node

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
    public init(
        graph: ResourceGraph, resource: Int, arguments: [(name: String, values: [String])], limits: ReadLimits = .default
    ) throws(ReadError) {
        let syntax = try ReadSyntax(arguments: arguments, limits: limits)
        var root = try Self.node(
            graph.resources[resource], path: [], select: syntax.select, graph: graph, parameter: "select")
        var placed: Set<[String]> = []
        for (path, conditions) in syntax.conditions {
            let parameter = path.isEmpty ? "filter" : path.joined(separator: ".")
            try Self.withNode(at: path, in: &root, parameter: parameter) { (node) throws(ReadError) in
                for condition in conditions {
                    node.conditions.append(try Self.condition(condition, in: node, path: path))
                }
            }
            placed.insert(path)
        }
        for (path, terms) in syntax.order {
            let parameter = (path + ["order"]).joined(separator: ".")
            try Self.withNode(at: path, in: &root, parameter: parameter) { (node) throws(ReadError) in
                node.order = try terms.map { (term) throws(ReadError) in try Self.orderKey(term, in: node, parameter: parameter) }
            }
        }
        for (path, limit) in syntax.limit {
            try Self.withNode(at: path, in: &root, parameter: (path + ["limit"]).joined(separator: ".")) { node in
                node.limit = limit
            }
        }
        for (path, offset) in syntax.offset {
            try Self.withNode(at: path, in: &root, parameter: (path + ["offset"]).joined(separator: ".")) { node in
                node.offset = offset
            }
        }
        self.root = root
    }

    /// The node for `resource` with `select` (every column when `nil`).
    private static func node(
        _ resource: Resource, path: [String], select: [ReadSyntax.SelectItem]?, graph: ResourceGraph, parameter: String
    ) throws(ReadError) -> Node {
        var node = Node(resource: resource, path: path)
        guard let select else {
            node.members = resource.columns.map { .expression(Expression(source: .column($0)), key: $0.label) }
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
                for column in resource.columns {
                    node.members.append(.expression(Expression(source: .column(column)), key: column.label))
                }
            case .field(let field):
                columnsInOrder = false
                let expression = try Self.expression(field.column, cast: field.cast, in: resource, parameter: parameter)
                let key = field.alias ?? (field.column.json.isEmpty ? Self.label(of: expression) : field.column.defaultKey)
                node.members.append(.expression(expression, key: key))
            case .embed(let syntax):
                let relationship = try Self.relationship(syntax.name, hints: syntax.hints, from: resource, graph: graph, parameter: parameter)

                let key = syntax.alias ?? syntax.name
                let child = try Self.node(
                    graph.resources[relationship.target], path: path + [key], select: syntax.select.isEmpty ? [] : syntax.select,
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
            try check(filter, on: expression, parameter: parameter)
            return .test(Test(expression: expression, filter: filter, parameter: parameter))
        }
    }

    /// Refuses a value its column's type cannot hold, where that is known
    /// exactly and cheaply (integers, booleans, UUIDs); other values are
    /// read by PostgreSQL as the column's type.
    private static func check(_ filter: ReadSyntax.Filter, on expression: Expression, parameter: String) throws(ReadError) {
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
            return OrderKey(expression: expression, embed: nil, isDescending: term.isDescending, nullsFirst: term.nullsFirst)
        }
        guard let embed = node.embeds.firstIndex(where: { $0.key == embedName }) else {
            throw ReadError.notEmbedded(node.path + [embedName], parameter: parameter)
        }
        guard node.embeds[embed].relationship.cardinality == .one else {
            throw ReadError.relatedOrder(embedName, from: node.resource, parameter: parameter)
        }
        let expression = try expression(term.column, cast: nil, in: node.embeds[embed].node.resource, parameter: parameter)
        return OrderKey(expression: expression, embed: embed, isDescending: term.isDescending, nullsFirst: term.nullsFirst)
    }
}
