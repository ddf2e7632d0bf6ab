import JSONStreaming
import PostgreSQL

/// The first row of an object ``Query`` and the rows of its embeds:
/// prepared statements, no cursor or transaction of their own, one round
/// of statements or two.
///
/// When the arguments hold a value for every parameter of the embeds (as
/// `GET /employees/{n}` binds `:employeeNumber` from its path), the first
/// round is the row and all the embeds, bound from the arguments. Those
/// guesses are kept if the row's columns of the same names hold the same
/// values, which is what binding from the row would have given; otherwise
/// a second round runs the embeds again, bound from the row. Without such
/// values: the row, then the embeds, two rounds. Each round is one
/// implicit transaction, with the request's ``Access``.
///
/// A driver sends the rounds; that is all that differs between a blocking
/// connection (`FirstRowWithEmbeds`) and an event loop's batcher
/// (`QueryRunner`'s object by key). It asks ``nextRound(_:)`` for the
/// statements, with its connection's statement for each SQL text, sends
/// them in one pipeline, and hands the results to
/// ``receive(_:connection:)``, until that returns something other than
/// ``Outcome/secondRound``.
struct ObjectByKey {
    /// What a round's results come to.
    enum Outcome {
        /// The query has no row: no object.
        case noRow
        /// The guesses failed: the embeds run again, bound from the row.
        case secondRound
        /// The row and its embeds' rows.
        case object(Rows)
    }

    /// The row and the rows embedded in it, ready to be written.
    struct Rows {
        let row: Row
        let template: ObjectTemplate
        let children: [ChildBlock]

        /// Writes the row as a JSON object, with its embeds.
        func write<Output: JSONOutput>(options: JSONRenderingOptions, to output: inout Output) {
            template.write(row, options: options, to: &output) { index, output in
                children[index].write(forParent: 0, options: options, to: &output)
            }
        }
    }

    private let query: Query

    /// The statements of the last round's connection, for the layouts of the results.
    private var rowStatement: PreparedStatement?
    private var childStatements: [PreparedStatement] = []
    /// The last round's statements; in the first, the embeds' values are the guesses.
    private var pipeline: [PipelinedStatement] = []
    /// The row, when the first round found it and its guesses failed.
    private var row: Row?

    /// The rounds of `query`. Embeds with embeds of their own need a
    /// connection to run them (``receive(_:connection:)``).
    init(_ query: Query) {
        self.query = query
    }

    // MARK: - Rounds

    /// The statements of the next round, taken from `statement(sql)`, the
    /// driver's connection's statement for `sql`. The row's asks for its
    /// first row only (`firstRowOnly`).
    mutating func nextRound(_ statement: (String) throws -> PreparedStatement) throws -> [PipelinedStatement] {
        let embeds = query.embeds
        pipeline.removeAll(keepingCapacity: true)
        pipeline.reserveCapacity(1 + embeds.count)
        childStatements.removeAll(keepingCapacity: true)
        childStatements.reserveCapacity(embeds.count)
        if let row {
            try bindFromRow(row, embeds, statement)
        } else {
            try bindFromArguments(embeds, statement)
        }
        return pipeline
    }

    /// The row, and the embeds bound from the arguments when all of them can be.
    private mutating func bindFromArguments(_ embeds: [Query.Embed], _ statement: (String) throws -> PreparedStatement) throws {
        let rowStatement = try statement(query.sql)
        self.rowStatement = rowStatement
        for embed in embeds { try childStatements.append(statement(embed.query.sql)) }
        let arguments = query.arguments
        let values = try rowStatement.parameters.textValues { arguments[value: $0] }
        pipeline.append(PipelinedStatement(rowStatement, values: values, firstRowOnly: true))
        for (child, embed) in zip(childStatements, embeds) {
            // The same names as the row's (all `:employeeNumber`, say): the same values, no look-ups.
            if child.parameters.names == rowStatement.parameters.names, embed.query.arguments.count == 0 {
                pipeline.append(PipelinedStatement(child, values: values))
                continue
            }
            let own = embed.query.arguments
            guard let values = try? child.parameters.textValues({ own[value: $0] ?? arguments[value: $0] }) else {
                pipeline.removeSubrange(1...)
                return
            }
            pipeline.append(PipelinedStatement(child, values: values))
        }
    }

    /// The embeds bound from the row's columns, else from the arguments.
    private mutating func bindFromRow(_ row: Row, _ embeds: [Query.Embed], _ statement: (String) throws -> PreparedStatement) throws {
        for embed in embeds { try childStatements.append(statement(embed.query.sql)) }
        let layout = row.layout
        let arguments = query.arguments
        for (child, embed) in zip(childStatements, embeds) {
            let own = embed.query.arguments
            let values = try child.parameters.textValues { name in
                if let column = layout.index(of: name) { return row[column].map(SQLValue.text) ?? .null }
                return own[value: name] ?? arguments[value: name]
            }
            pipeline.append(PipelinedStatement(child, values: values))
        }
    }

    /// Takes the results of the round just sent: `result(i)` is the result
    /// of its statement `i`, or throws that statement's failure (checked the
    /// driver's way). `connection` runs the embeds' own embeds; without
    /// one, embeds must have none.
    mutating func receive(_ result: (Int) throws -> QueryResult, connection: Connection?) throws -> Outcome {
        if let row {
            return .object(try rows(row, result, connection: connection))
        }
        let first = try result(0)
        guard first.rowCount > 0, let rowStatement else { return .noRow }
        let row = Row(result: first, index: 0, layout: rowStatement.layout(of: first))
        if pipeline.count == 1 + query.embeds.count, guessesHold(for: row, rowStatement) {
            // The guesses hold: their failures are the embeds' own.
            return .object(try rows(row, { try result($0 + 1) }, connection: connection))
        }
        self.row = row
        return .secondRound
    }

    /// Whether binding the embeds from `row` gives the first round's values.
    private func guessesHold(for row: Row, _ rowStatement: PreparedStatement) -> Bool {
        // Names already found to agree (with the same values) need no second look.
        var agreeingNames: [String]?
        for index in childStatements.indices {
            let parameters = childStatements[index].parameters
            if parameters.names == agreeingNames { continue }
            guard Self.row(row, agreesWith: pipeline[index + 1].values, for: parameters) else { return false }
            if parameters.names == rowStatement.parameters.names { agreeingNames = parameters.names }
        }
        return true
    }

    /// Whether binding `parameters` from the row gives `values`: the row's
    /// column of each name, where there is one, holds the same text.
    static func row(_ row: Row, agreesWith values: [String?], for parameters: Parameters) -> Bool {
        for (index, name) in parameters.names.enumerated() {
            guard let column = row.layout.index(of: name) else { continue }
            guard let value = values[index] else {
                if row.isNull(column) { continue }
                return false
            }
            guard let bytes = row.bytes(column), bytes.elementsEqual(value.utf8) else { return false }
        }
        return true
    }

    /// The row with its embeds' rows; `result(i)` is embed `i`'s.
    private func rows(_ row: Row, _ result: (Int) throws -> QueryResult, connection: Connection?) throws -> Rows {
        let embeds = query.embeds
        // Every failure first: building a child runs its own embeds' statements.
        for index in embeds.indices { _ = try result(index) }
        var children: [ChildBlock] = []
        children.reserveCapacity(embeds.count)
        for index in embeds.indices {
            let result = try result(index)
            try children.append(
                ChildBlock(
                    embeds[index], rowsOfOneParent: result, layout: childStatements[index].layout(of: result),
                    arguments: query.arguments, connection: connection))
        }
        return Rows(row: row, template: row.layout.objectTemplate(embeds: embeds), children: children)
    }
}
