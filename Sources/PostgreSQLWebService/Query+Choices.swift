import PostgreSQL
import WebService

// MARK: - Filters, order and members chosen by the request

extension Query {
    /// This list or object with the request's filters, order and members
    /// (``ColumnChoices``): its statement becomes a subquery,
    ///
    /// ```sql
    /// SELECT <members> FROM (<statement>) AS chosen WHERE <filters> ORDER BY <order>
    /// ```
    ///
    /// so that PostgreSQL pushes the conditions down into the statement
    /// (an index on a filtered column serves them). Every value is bound
    /// as a parameter; identifiers are the labels of the columns the
    /// ``ColumnChoices`` declared, quoted. Without an order, the
    /// statement's own holds. Selected members are written in the order
    /// asked; the other columns stay in the result, unwritten, for
    /// attached queries to bind from. Paging, counts, CSV and attachments
    /// apply to the filtered rows.
    ///
    /// ```swift
    /// Query.list(sql).choosing(ChosenColumns(values)).paged(limit: limit, offset: offset)
    /// ```
    public func choosing(_ chosen: ChosenColumns) -> Query {
        precondition(isList || isObject, "choosing(_:) narrows a Query.list or a Query.object")
        guard !chosen.isEmpty || chosen.key != nil else { return self }
        var query = self
        query.chosen = chosen
        return query
    }

    /// The quoted identifier of the column labelled `label` in the
    /// subquery: PostgreSQL names an unquoted alias (`AS employeeNumber`)
    /// in lower case (`"employeenumber"`), which `aliases` (from
    /// `SQLTokens.aliases(in:)`) tells.
    static func identifier(_ label: String, aliases: [String: String]) -> String {
        let lowered = label.lowercased()
        let name = aliases[lowered] == label ? lowered : label
        return "\"" + name.replacing("\"", with: "\"\"") + "\""
    }

    /// The statement with ``chosen`` applied, and its arguments with the
    /// filters' values; the statement as it is when nothing was chosen.
    func chosenStatement() -> (sql: String, arguments: SQLArguments) {
        guard let chosen, !chosen.isEmpty else { return (sql, arguments) }
        var arguments = self.arguments
        let shape = StatementShape.of(sql)
        let aliases = shape.labelSpelling
        let taken = shape.parameters.names
        var counter = 0
        func bind(_ value: SQLValue) -> String {
            var name: String
            repeat {
                counter += 1
                name = "chosenValue\(counter)"
            } while taken.contains(name)
            arguments[value: name] = value
            return ":" + name
        }
        var members = "chosen.*"
        if let select = chosen.select {
            // The members asked for; then, after the marker, every column for attached queries to bind from.
            let selected = select.map { "chosen.\(Self.identifier($0, aliases: aliases)) AS \"\($0.replacing("\"", with: "\"\""))\"" }
            members = (selected + ["NULL AS \"\(ObjectTemplate.hiddenColumnsMarker)\"", "chosen.*"]).joined(separator: ", ")
        }
        var conditions: [String] = []
        for filter in chosen.filters {
            let column = "chosen." + Self.identifier(filter.column, aliases: aliases)
            let condition: String =
                switch filter.comparison {
                case .equal: "\(column) = \(bind(filter.value))"
                case .notEqual: "\(column) <> \(bind(filter.value))"
                case .greater: "\(column) > \(bind(filter.value))"
                case .greaterOrEqual: "\(column) >= \(bind(filter.value))"
                case .less: "\(column) < \(bind(filter.value))"
                case .lessOrEqual: "\(column) <= \(bind(filter.value))"
                case .like: "CAST(\(column) AS text) LIKE \(bind(filter.value))"
                case .caseInsensitiveLike: "CAST(\(column) AS text) ILIKE \(bind(filter.value))"
                case .oneOf: "\(column) = ANY(\(bind(filter.value)))"
                case .isNull: "\(column) IS NULL"
                case .isTrue: "\(column) IS TRUE"
                case .isFalse: "\(column) IS FALSE"
                case .isUnknown: "\(column) IS UNKNOWN"
                }
            conditions.append(filter.isNegated ? "NOT (\(condition))" : condition)
        }
        // The closing parenthesis on a line of its own: the SQL may end with a `--` comment.
        var wrapped = "SELECT \(members) FROM (\(Self.withoutTrailingSemicolons(sql))\n) AS chosen"
        if !conditions.isEmpty { wrapped += " WHERE " + conditions.joined(separator: " AND ") }
        if let order = chosen.order, !order.isEmpty {
            wrapped +=
                " ORDER BY "
                + order.map { key in
                    "chosen." + Self.identifier(key.column, aliases: aliases) + (key.isDescending ? " DESC" : " ASC")
                        + (key.nulls.map { $0 == .first ? " NULLS FIRST" : " NULLS LAST" } ?? "")
                }.joined(separator: ", ")
        }
        return (wrapped, arguments)
    }

    var isObject: Bool {
        if case .object = shape { return true }
        return false
    }
}
