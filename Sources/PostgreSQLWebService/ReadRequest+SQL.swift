import PostgreSQL
import WebService

// MARK: - The statements a read request runs

extension ReadRequest {
    /// `query` (which reads the root resource: its statement, arguments
    /// and shape) narrowed, filtered, ordered and paged as this request
    /// asks, with a query per embedded resource: the root's statement
    /// wraps the query's own as a subquery (`FROM (…) AS "t0"`), so that
    /// PostgreSQL pushes the conditions down into it, and each embedded
    /// resource's statement binds its parent's columns as parameters, to
    /// run once per block of parent rows. Every value is bound; every
    /// identifier is a label or name the resources declared, quoted.
    /// Values are bound under names neither the query's SQL nor `taken` uses.
    /// `passing`: columns of the query's statement the root's rows carry after their members (a write's row addresses).
    func apply(to query: Query, taken: Set<String> = [], passing: [String] = []) -> Query {
        var builder = Builder(counter: Counter(), taken: Set(StatementShape.of(query.sql).parameters.names).union(taken))
        builder.passing = passing
        // The query's own embeds (a `details` argument) bind from the root's columns too.
        let labels = Set(root.resource.columns.map(\.label))
        builder.attachedLabels = query.embeds.flatMap { StatementShape.of($0.query.sql).parameters.names.filter(labels.contains) }
        var arguments = query.arguments
        let sql = builder.statement(for: root, base: query.sql, depth: 0, link: nil, arguments: &arguments)
        let embeds = builder.embeds(of: root, depth: 0)
        return query.with(sql: sql, arguments: arguments, embeds: embeds + query.embeds)
    }

    /// The root's statement without its members, order and pages, for counting its rows.
    func countingStatement(for query: Query) -> (sql: String, arguments: SQLArguments) {
        var builder = Builder(counter: Counter(), taken: Set(StatementShape.of(query.sql).parameters.names))
        var arguments = query.arguments
        var node = root
        node.members = []
        node.order = nil
        let sql = builder.statement(for: node, base: query.sql, depth: 0, link: nil, arguments: &arguments, counting: true)
        return (sql, arguments)
    }

    /// Numbers the values bound across one request's statements.
    final class Counter {
        var next = 0
    }

    /// Writes the SQL of nodes, binding values as it goes.
    struct Builder {
        let counter: Counter
        /// Parameter names the statements use already.
        let taken: Set<String>
        /// Root columns the query's own embeds bind from, kept among its hidden columns.
        var attachedLabels: [String] = []
        var passing: [String] = []

        /// `value` bound under a new name in `arguments`: the placeholder to write.
        mutating func bind(_ value: SQLValue, into arguments: inout SQLArguments) -> String {
            var name: String
            repeat {
                counter.next += 1
                name = "readValue\(counter.next)"
            } while taken.contains(name)
            arguments[value: name] = value
            return ":" + name
        }

        // MARK: Statements

        /// The statement of `node` over `base`, as alias `t<depth>`; `link`
        /// ties it to its parent's row (an embedded resource's). `counting`
        /// leaves out the members (`SELECT 1`).
        mutating func statement(
            for node: Node, base: String, depth: Int, link: String?, arguments: inout SQLArguments, counting: Bool = false
        ) -> String {
            if node.isPlain, link == nil, !counting, !needsHiddenColumns(node) { return base }
            let alias = "t\(depth)"
            var sql = "SELECT "
            if counting {
                sql += "1"
            } else if node.isPlain {
                sql += quoted(alias) + ".*"
                sql += hiddenColumns(of: node, alias: alias)
            } else {
                sql += members(of: node, alias: alias, arguments: &arguments)
                sql += hiddenColumns(of: node, alias: alias)
                if depth == 0 { sql += passing.map { ", " + quoted(alias) + "." + quoted($0) }.joined() }
            }
            // The closing parenthesis on a line of its own: the base may end with a `--` comment.
            sql += " FROM (" + Self.withoutTrailingSemicolons(base) + "\n) AS " + quoted(alias)
            var conditions: [String] = []
            if let link { conditions.append(link) }
            for condition in node.conditions {
                conditions.append(self.condition(condition, in: node, alias: alias, depth: depth, arguments: &arguments))
            }
            for index in node.embeds.indices where node.embeds[index].isInner {
                conditions.append(exists(node.embeds[index], index: index, parentAlias: alias, depth: depth, arguments: &arguments))
            }
            if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
            if !counting, let order = node.order, !order.isEmpty {
                sql +=
                    " ORDER BY "
                    + order.map { key in
                        orderExpression(key, in: node, alias: alias, depth: depth, arguments: &arguments)
                    }.joined(separator: ", ")
            }
            if depth > 0 {
                if let limit = node.limit { sql += " LIMIT " + bind(.text(String(limit)), into: &arguments) + "::int8" }
                if let offset = node.offset { sql += " OFFSET " + bind(.text(String(offset)), into: &arguments) + "::int8" }
            }
            return sql
        }

        /// The members of `node`, each `expression AS "key"`; an embed's
        /// place is a NULL column its template writes the embed at.
        private mutating func members(of node: Node, alias: String, arguments: inout SQLArguments) -> String {
            var members: [String] = []
            for member in node.members {
                switch member {
                case .expression(let expression, let key):
                    members.append(self.expression(expression, alias: alias, arguments: &arguments) + " AS " + quoted(key))
                case .embed(let index):
                    guard let written = Self.writtenIndex(of: index, in: node) else { continue }
                    let marker = node.embeds[index].isSpread ? ObjectTemplate.spreadMarker : ObjectTemplate.embedMarker
                    members.append("NULL AS " + quoted(marker + String(written)))
                }
            }
            return members.isEmpty ? "NULL AS " + quoted(ObjectTemplate.hiddenColumnsMarker) : members.joined(separator: ", ")
        }

        /// The index of a node's embed among the embeds its rows are
        /// written with (those that select something), `nil` for an empty one.
        static func writtenIndex(of index: Int, in node: Node) -> Int? {
            guard !node.embeds[index].isEmpty else { return nil }
            return node.embeds[..<index].count { !$0.isEmpty }
        }

        /// After the marker, the columns embedded resources bind from that
        /// the members do not hold as they are.
        private func hiddenColumns(of node: Node, alias: String) -> String {
            guard needsHiddenColumns(node) || !node.embeds.isEmpty || !attachedLabels.isEmpty else { return "" }
            var hidden: [String] = []
            var named: Set<String> = []
            for (index, embed) in node.embeds.enumerated() where !embed.isEmpty {
                for (label, name) in linkColumns(of: embed, index: index, in: node)
                where !isWritten(label, as: name, in: node) && named.insert(name).inserted {
                    hidden.append(quoted(alias) + "." + quoted(label) + " AS " + quoted(name))
                }
            }
            if node.path.isEmpty {
                for label in attachedLabels where !isWritten(label, as: label, in: node) && named.insert(label).inserted {
                    hidden.append(quoted(alias) + "." + quoted(label) + " AS " + quoted(label))
                }
            }
            guard !hidden.isEmpty else { return "" }
            return ", NULL AS " + quoted(ObjectTemplate.hiddenColumnsMarker) + ", " + hidden.joined(separator: ", ")
        }

        private func needsHiddenColumns(_ node: Node) -> Bool {
            if node.path.isEmpty, attachedLabels.contains(where: { !isWritten($0, as: $0, in: node) }) { return true }
            return node.embeds.enumerated().contains { index, embed in
                !embed.isEmpty && linkColumns(of: embed, index: index, in: node).contains { !isWritten($0.label, as: $0.name, in: node) }
            }
        }

        /// Whether the node's result holds its column `label` under `name` as it is.
        private func isWritten(_ label: String, as name: String, in node: Node) -> Bool {
            if node.isPlain { return label == name }
            for member in node.members {
                guard case .expression(let expression, let key) = member, key == name else { continue }
                return expression.plainColumn?.label == label
            }
            return false
        }

        /// The parent's columns an embed binds from: each label and the
        /// name its statement binds it by.
        private func linkColumns(of embed: Embed, index: Int, in node: Node) -> [(label: String, name: String)] {
            switch embed.relationship.link {
            case .parameters:
                let labels = Set(node.resource.columns.map(\.label))
                return StatementShape.of(embed.node.resource.sql).parameters.names.filter(labels.contains).map { ($0, $0) }
            case .columns(let pairs):
                return pairs.enumerated().map { position, pair in
                    (pair.source, Self.linkName(pair.source, embed: index, position: position))
                }
            case .junction(_, let source, _):
                return source.enumerated().map { position, pair in
                    (pair.source, Self.linkName(pair.source, embed: index, position: position))
                }
            }
        }

        /// The parameter an embedded statement binds a parent's column by:
        /// its label, when a parameter can be named so, else a name of its own.
        static func linkName(_ label: String, embed: Int, position: Int) -> String {
            isParameterName(label) ? label : "readLink\(embed)_\(position)"
        }

        /// Whether `name` can be written `:name` (see `Parameters`).
        static func isParameterName(_ name: String) -> Bool {
            guard let first = name.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
            return name.unicodeScalars.allSatisfy { scalar in
                scalar == "_" || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                    || scalar.value >= 0x80
            }
        }

        // MARK: Embedded resources

        /// The queries of `node`'s embedded resources, each bound to the
        /// parent row by parameters, with theirs.
        mutating func embeds(of node: Node, depth: Int) -> [Query.Embed] {
            node.embeds.enumerated().filter { !$0.element.isEmpty }.map { index, embed in
                var arguments = SQLArguments()
                let link = linkCondition(embed, index: index, alias: "t\(depth + 1)", parentAlias: nil)
                let sql = statement(
                    for: embed.node, base: embed.node.resource.sql, depth: depth + 1,
                    link: link.isEmpty ? nil : link, arguments: &arguments)
                let kind: Query.Embed.Kind =
                    switch (embed.isSpread, embed.relationship.cardinality) {
                    case (true, .one): .spread
                    case (true, .many): .spreadMany
                    case (false, .one): .one
                    case (false, .many): .many
                    }
                let child = Query.list(sql, arguments).with(
                    sql: sql, arguments: arguments, embeds: embeds(of: embed.node, depth: depth + 1))
                return Query.Embed(key: embed.key, query: child, kind: kind)
            }
        }

        /// The condition that ties an embedded resource's rows (alias
        /// `alias`) to its parent: to the parameters the parent's row
        /// binds, or, with `parentAlias`, to the parent's columns (a
        /// correlated subquery). Empty for a `@detail`, whose statement
        /// names the parent's columns itself.
        private func linkCondition(_ embed: Embed, index: Int, alias: String, parentAlias: String?) -> String {
            func parent(_ label: String, position: Int) -> String {
                if let parentAlias { return quoted(parentAlias) + "." + quoted(label) }
                return ":" + Self.linkName(label, embed: index, position: position)
            }
            switch embed.relationship.link {
            case .parameters:
                return ""
            case .columns(let pairs):
                return pairs.enumerated().map { position, pair in
                    quoted(alias) + "." + quoted(pair.target) + " = " + parent(pair.source, position: position)
                }.joined(separator: " AND ")
            case .junction(let table, let source, let target):
                let junction = "j" + alias
                var conditions = target.map {
                    quoted(junction) + "." + quoted($0.junction) + " = " + quoted(alias) + "." + quoted($0.target)
                }
                conditions += source.enumerated().map { position, pair in
                    quoted(junction) + "." + quoted(pair.junction) + " = " + parent(pair.source, position: position)
                }
                return "EXISTS (SELECT 1 FROM \(table) AS \(quoted(junction)) WHERE " + conditions.joined(separator: " AND ") + ")"
            }
        }

        /// `EXISTS` of an embedded resource's rows for the parent row
        /// `parentAlias` (for `!inner` and `embed=not.is.null`).
        private mutating func exists(_ embed: Embed, index: Int, parentAlias: String, depth: Int, arguments: inout SQLArguments) -> String {
            let alias = "t\(depth + 1)"
            let base = correlatedBase(embed, parentAlias: parentAlias)
            let link = linkCondition(embed, index: index, alias: alias, parentAlias: parentAlias)
            var node = embed.node
            node.members = []
            node.order = nil
            node.limit = nil
            node.offset = nil
            return "EXISTS ("
                + statement(
                    for: node, base: base, depth: depth + 1, link: link.isEmpty ? "true" : link, arguments: &arguments, counting: true)
                + ")"
        }

        /// An embedded resource's statement with the parameters it binds
        /// from its parent's row written as the parent's columns.
        private func correlatedBase(_ embed: Embed, parentAlias: String) -> String {
            guard case .parameters = embed.relationship.link else { return embed.node.resource.sql }
            let shape = StatementShape.of(embed.node.resource.sql)
            return Self.substituting(shape.parameters) { name in
                quoted(parentAlias) + "." + quoted(name)
            }
        }

        /// `parameters`' SQL with each `$n` written as `replacement(name)`'s
        /// SQL (for a name of the parent's columns) or `:name` again.
        static func substituting(_ parameters: Parameters, _ replacement: (String) -> String) -> String {
            var text = ""
            SQLTokens.scan(parameters.sql) { token, bytes in
                if case .positionalParameter(let number) = token, number >= 1, number <= parameters.names.count {
                    text += "(" + replacement(parameters.names[number - 1]) + ")"
                } else {
                    text += String(decoding: bytes, as: UTF8.self)
                }
            }
            return text
        }

        // MARK: Expressions

        /// A column, computed column, JSON path and cast, on `alias`.
        mutating func expression(_ expression: Expression, alias: String, arguments: inout SQLArguments) -> String {
            var sql: String
            switch expression.source {
            case .column(let column):
                sql = quoted(alias) + "." + quoted(column.label)
            case .computed(let computed):
                let row = computed.rowColumns.map { quoted(alias) + "." + quoted($0) }.joined(separator: ", ")
                sql = computed.function + "(ROW(" + row + ")::" + computed.rowType + ")"
            }
            if !expression.json.isEmpty {
                sql = "to_jsonb(" + sql + ")"
                for step in expression.json {
                    let key: String =
                        switch step.key {
                        case .name(let name): bind(.text(name), into: &arguments) + "::text"
                        case .index(let index): bind(.text(String(index)), into: &arguments) + "::int4"
                        }
                    sql += (step.asText ? "->>" : "->") + "(" + key + ")"
                }
            }
            if let cast = expression.cast { sql = "CAST(" + sql + " AS " + cast + ")" }
            return sql
        }

        private mutating func orderExpression(
            _ key: OrderKey, in node: Node, alias: String, depth: Int, arguments: inout SQLArguments
        ) -> String {
            var sql: String
            if let embed = key.embed {
                // A column of a to-one embedded resource: its row's, by a scalar subquery.
                let inner = "t\(depth + 1)"
                let base = correlatedBase(node.embeds[embed], parentAlias: alias)
                let link = linkCondition(node.embeds[embed], index: embed, alias: inner, parentAlias: alias)
                let value = expression(key.expression, alias: inner, arguments: &arguments)
                sql =
                    "(SELECT " + value + " FROM (" + Self.withoutTrailingSemicolons(base) + "\n) AS " + quoted(inner)
                    + (link.isEmpty ? "" : " WHERE " + link) + " LIMIT 1)"
            } else {
                sql = expression(key.expression, alias: alias, arguments: &arguments)
            }
            sql += key.isDescending ? " DESC" : " ASC"
            if let nullsFirst = key.nullsFirst { sql += nullsFirst ? " NULLS FIRST" : " NULLS LAST" }
            return sql
        }

        // MARK: Conditions

        private mutating func condition(
            _ condition: Condition, in node: Node, alias: String, depth: Int, arguments: inout SQLArguments
        ) -> String {
            switch condition {
            case .and(let operands):
                guard !operands.isEmpty else { return "true" }
                return "("
                    + operands.map { self.condition($0, in: node, alias: alias, depth: depth, arguments: &arguments) }
                    .joined(separator: " AND ") + ")"
            case .or(let operands):
                guard !operands.isEmpty else { return "false" }
                return "("
                    + operands.map { self.condition($0, in: node, alias: alias, depth: depth, arguments: &arguments) }
                    .joined(separator: " OR ") + ")"
            case .not(let operand):
                return "NOT " + self.condition(operand, in: node, alias: alias, depth: depth, arguments: &arguments)
            case .presence(let embed, let exists):
                let test = self.exists(node.embeds[embed], index: embed, parentAlias: alias, depth: depth, arguments: &arguments)
                return exists ? test : "NOT " + test
            case .test(let test):
                let sql = self.test(test, alias: alias, arguments: &arguments)
                return test.filter.isNegated ? "NOT (" + sql + ")" : "(" + sql + ")"
            }
        }

        /// One filter, before its `not.`.
        private mutating func test(_ test: Test, alias: String, arguments: inout SQLArguments) -> String {
            let filter = test.filter
            let column = expression(test.expression, alias: alias, arguments: &arguments)
            let type = test.expression.type
            let isArray = type.elementType != nil
            // A bytea value is base64, as the server writes it (or hex, `\x00ff`, as PostgreSQL does).
            func scalar(_ text: String) -> String { type == .bytea ? Base64Encoder.byteaHex(fromBase64: text) ?? text : text }
            func value(_ text: String) -> String { bind(.text(isArray ? Self.arrayValue(text) : scalar(text)), into: &arguments) }
            func list(_ values: [String]) -> String { bind(.text(ArrayLiteral.text(values.map(scalar))), into: &arguments) }
            func comparison(_ sqlOperator: String, pattern: Bool = false) -> String {
                let operand = pattern && type != .text && type != .varchar && type != .bpchar ? "CAST(\(column) AS text)" : column
                switch filter.operand {
                case .value(let text):
                    return operand + " " + sqlOperator + " " + value(pattern ? Self.likePattern(text, filter.operator) : text)
                case .list(let values):
                    let quantifier = filter.quantifier == .all ? "ALL" : "ANY"
                    let converted = pattern ? values.map { Self.likePattern($0, filter.operator) } : values
                    return operand + " " + sqlOperator + " " + quantifier + "(" + list(converted) + ")"
                case .truth:
                    return "false"
                }
            }
            switch filter.operator {
            case .eq: return comparison("=")
            case .neq: return comparison("<>")
            case .gt: return comparison(">")
            case .gte: return comparison(">=")
            case .lt: return comparison("<")
            case .lte: return comparison("<=")
            case .like: return comparison("LIKE", pattern: true)
            case .ilike: return comparison("ILIKE", pattern: true)
            case .match: return comparison("~", pattern: true)
            case .imatch: return comparison("~*", pattern: true)
            case .isdistinct: return comparison("IS DISTINCT FROM")
            case .in:
                guard case .list(let values) = filter.operand else { return "false" }
                return column + " = ANY(" + list(values) + ")"
            case .is:
                guard case .truth(let truth) = filter.operand else { return "false" }
                switch truth {
                case .null: return column + " IS NULL"
                case .notNull: return column + " IS NOT NULL"
                case .true: return column + " IS TRUE"
                case .false: return column + " IS FALSE"
                case .unknown: return column + " IS UNKNOWN"
                }
            case .fts, .plfts, .phfts, .wfts:
                guard case .value(let text) = filter.operand else { return "false" }
                let function =
                    switch filter.operator {
                    case .plfts: "plainto_tsquery"
                    case .phfts: "phraseto_tsquery"
                    case .wfts: "websearch_to_tsquery"
                    default: "to_tsquery"
                    }
                let configuration = filter.language.map { "CAST(" + value($0) + " AS regconfig), " } ?? ""
                let document = type == .tsvector ? column : "to_tsvector(" + configuration + column + ")"
                return document + " @@ " + function + "(" + configuration + value(text) + ")"
            case .cs: return comparison("@>")
            case .cd: return comparison("<@")
            case .ov: return comparison("&&")
            case .sl: return comparison("<<")
            case .sr: return comparison(">>")
            case .nxr: return comparison("&<")
            case .nxl: return comparison("&>")
            case .adj: return comparison("-|-")
            }
        }

        /// A value compared with an array column: a JSON array, as the
        /// server writes the column (`[1,2]`, `["a b"]`), as PostgreSQL's
        /// literal (`{"1","2"}`); any other text (`{1,2}`) as it is.
        static func arrayValue(_ text: String) -> String {
            guard text.hasPrefix("["), let value = try? JSONValue.parse(Array(text.utf8)), case .array = value else { return text }
            var literal = ""
            appendArrayLiteral(value, to: &literal)
            return literal
        }

        private static func appendArrayLiteral(_ value: JSONValue, to literal: inout String) {
            let text: String
            switch value {
            case .array(let elements):
                literal += "{"
                for (index, element) in elements.enumerated() {
                    if index > 0 { literal += "," }
                    appendArrayLiteral(element, to: &literal)
                }
                literal += "}"
                return
            case .null:
                literal += "NULL"
                return
            case .bool(let bool): text = bool ? "true" : "false"
            case .integer(let integer): text = String(integer)
            case .number(let number): text = String(number)
            case .string(let string): text = string
            case .object: text = value.jsonText
            }
            literal += "\""
            for scalar in text.unicodeScalars {
                if scalar == "\"" || scalar == "\\" { literal += "\\" }
                literal.unicodeScalars.append(scalar)
            }
            literal += "\""
        }

        /// A `like` or `ilike` pattern with `*` for `%`; other patterns as they are.
        static func likePattern(_ text: String, _ op: ReadSyntax.Operator) -> String {
            op == .like || op == .ilike ? text.replacing("*", with: "%") : text
        }

        static func withoutTrailingSemicolons(_ sql: String) -> String {
            Query.withoutTrailingSemicolons(sql)
        }
    }
}

/// `name` as a quoted SQL identifier (`"a""b"`).
func quoted(_ name: String) -> String {
    enclosed(name, in: UInt8(ascii: "\""))
}

/// `text` between two `mark`s, each `mark` within doubled: how SQL quotes
/// an identifier (`"`) or a string literal (`'`). Built from the bytes: it
/// runs for every name of every statement a request writes.
func enclosed(_ text: String, in mark: UInt8) -> String {
    var text = text
    return text.withUTF8 { bytes in
        let marks = bytes.reduce(0) { $0 + ($1 == mark ? 1 : 0) }
        return String(unsafeUninitializedCapacity: bytes.count + marks + 2) { buffer in
            var end = 0
            buffer[end] = mark
            end += 1
            for byte in bytes {
                buffer[end] = byte
                end += 1
                if byte == mark {
                    buffer[end] = mark
                    end += 1
                }
            }
            buffer[end] = mark
            return end + 1
        }
    }
}

extension PostgresType {
    /// `tsvector`, which full-text filters compare without converting.
    static let tsvector = PostgresType(oid: 3614)
}
