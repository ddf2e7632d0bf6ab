// MARK: - What a followed list needs of its read request

extension ReadRequest {
    /// The resource the request reads.
    var rootResource: Resource { root.resource }

    /// Whether the request pages its root's rows (`limit`, `offset`).
    var pagesRoot: Bool { root.limit != nil || root.offset != nil }

    /// The names the root's rows write the columns `labels` under (their
    /// labels, or aliases from `select`), each as it is: no cast, no JSON
    /// path; `nil` when one of them is not written so.
    func writtenNames(of labels: [String]) -> [String]? {
        var names: [String] = []
        for label in labels {
            let name = root.members.lazy.compactMap { member -> String? in
                guard case .expression(let expression, let key) = member, expression.plainColumn?.label == label else { return nil }
                return key
            }.first
            guard let name else { return nil }
            names.append(name)
        }
        return names
    }

    /// This request with the root's rows narrowed to those whose column
    /// `labels[i]` holds one of `values[i]`, for each `i`: what the rows of
    /// some keys are read again by (PostgreSQL finds them by the key's index).
    func narrowed(_ labels: [String], to values: [[String]]) -> ReadRequest {
        var root = self.root
        for (label, values) in zip(labels, values) {
            guard let column = root.resource.column(named: label) else { continue }
            let filter = ReadSyntax.Filter(
                column: ReadSyntax.ColumnPath(name: label), isNegated: false, operator: .in, quantifier: nil, language: nil,
                operand: .list(values))
            root.conditions.append(.test(Test(expression: Expression(source: .column(column)), filter: filter, parameter: label)))
        }
        return ReadRequest(self, root: root)
    }
}
