import JSONStreaming
import PostgreSQL

/// The first row of a query and the rows of its attachments, for an
/// object adapter (``ResultSetAdapter/Shape/object``): prepared statements,
/// no cursor or transaction of their own, one round of statements or two.
///
/// When the arguments hold a value for every parameter of the attachments
/// (as `GET /employees/{n}` binds `:employeeNumber` from its path), the
/// first round is the row and all the attachments, bound from the
/// arguments. Those guesses are kept if the row's columns of the same names
/// hold the same values, which is what binding from the row would have
/// given; otherwise a second round runs the attachments again, bound from
/// the row. Without such values: the row, then the attachments, two rounds.
/// Each statement sees what was committed when it started.
///
/// A driver sends the rounds; that is all that differs between a blocking
/// connection (`FirstRowWithAttachments`) and the pipeline loop
/// (`PipelinedObject`). It asks ``nextRound(_:)`` for the statements, with
/// its connection's statement for each SQL text, sends them in one
/// pipeline, and hands the results to ``receive(_:connection:)``, until
/// that returns something other than ``Outcome/secondRound``.
struct ObjectWithAttachments {
    /// What a round's results come to.
    enum Outcome {
        /// The query has no row: no object.
        case noRow
        /// The guesses failed: the attachments run again, bound from the row.
        case secondRound
        /// The row and its attachments' rows.
        case object(Rows)
    }

    /// The row and the rows attached to it, ready to be written.
    struct Rows {
        let row: Row
        let template: ObjectTemplate
        let children: [ChildBlock]

        /// Writes the row as a JSON object, with its attachments' arrays.
        func write<Output: JSONOutput>(options: JSONRenderingOptions, to output: inout Output) {
            template.write(row, options: options, to: &output) { index, output in
                children[index].writeArray(forParent: 0, options: options, to: &output)
            }
        }
    }

    private let sql: String
    private let arguments: SQLArguments
    private let attachments: [Attachment]

    /// The statements of the last round's connection, for the layouts of the results.
    private var rowStatement: PreparedStatement?
    private var childStatements: [PreparedStatement] = []
    /// The last round's statements; in the first, the attachments' values are the guesses.
    private var pipeline: [PipelinedStatement] = []
    /// The row, when the first round found it and its guesses failed.
    private var row: Row?

    init(sql: String, arguments: SQLArguments, attachments: [Attachment]) {
        self.sql = sql
        self.arguments = arguments
        self.attachments = attachments
    }

    // MARK: - Rounds

    /// The statements of the next round, taken from `statement(sql)`, the
    /// driver's connection's statement for `sql`. The row's asks for its
    /// first row only (`firstRowOnly`).
    mutating func nextRound(_ statement: (String) throws -> PreparedStatement) throws -> [PipelinedStatement] {
        pipeline.removeAll(keepingCapacity: true)
        pipeline.reserveCapacity(1 + attachments.count)
        childStatements.removeAll(keepingCapacity: true)
        childStatements.reserveCapacity(attachments.count)
        if let row {
            try bindFromRow(row, statement)
        } else {
            try bindFromArguments(statement)
        }
        return pipeline
    }

    /// The row, and the attachments bound from the arguments when all of them can be.
    private mutating func bindFromArguments(_ statement: (String) throws -> PreparedStatement) throws {
        let rowStatement = try statement(sql)
        self.rowStatement = rowStatement
        for attachment in attachments { try childStatements.append(statement(attachment.sql)) }
        let values = try rowStatement.parameters.textValues { arguments[value: $0] }
        pipeline.append(PipelinedStatement(rowStatement, values: values, firstRowOnly: true))
        for child in childStatements {
            // The same names as the row's (all `:employeeNumber`, say): the same values, no look-ups.
            if child.parameters.names == rowStatement.parameters.names {
                pipeline.append(PipelinedStatement(child, values: values))
                continue
            }
            guard let values = try? child.parameters.textValues({ arguments[value: $0] }) else {
                pipeline.removeSubrange(1...)
                return
            }
            pipeline.append(PipelinedStatement(child, values: values))
        }
    }

    /// The attachments bound from the row's columns, else from the arguments.
    private mutating func bindFromRow(_ row: Row, _ statement: (String) throws -> PreparedStatement) throws {
        for attachment in attachments { try childStatements.append(statement(attachment.sql)) }
        let layout = row.layout
        for child in childStatements {
            let values = try child.parameters.textValues { name in
                if let column = layout.index(of: name) { return row[column].map(SQLValue.text) ?? .null }
                return arguments[value: name]
            }
            pipeline.append(PipelinedStatement(child, values: values))
        }
    }

    /// Takes the results of the round just sent: `result(i)` is the result
    /// of its statement `i`, or throws that statement's failure (checked the
    /// driver's way). `connection` runs the attachments' own attachments;
    /// without one, attachments must have none.
    mutating func receive(_ result: (Int) throws -> QueryResult, connection: Connection?) throws -> Outcome {
        if let row {
            return .object(try rows(row, result, connection: connection))
        }
        let first = try result(0)
        guard first.rowCount > 0, let rowStatement else { return .noRow }
        let row = Row(result: first, index: 0, layout: rowStatement.layout(of: first))
        if pipeline.count == 1 + attachments.count, guessesHold(for: row, rowStatement) {
            // The guesses hold: their failures are the attachments' own.
            return .object(try rows(row, { try result($0 + 1) }, connection: connection))
        }
        self.row = row
        return .secondRound
    }

    /// Whether binding the attachments from `row` gives the first round's values.
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

    /// The row with its attachments' rows; `result(i)` is attachment `i`'s.
    private func rows(_ row: Row, _ result: (Int) throws -> QueryResult, connection: Connection?) throws -> Rows {
        // Every failure first: building a child runs its own attachments' statements.
        for index in attachments.indices { _ = try result(index) }
        var children: [ChildBlock] = []
        children.reserveCapacity(attachments.count)
        for index in attachments.indices {
            let result = try result(index)
            try children.append(
                ChildBlock(
                    attachments[index], rowsOfOneParent: result, layout: childStatements[index].layout(of: result),
                    arguments: arguments, connection: connection))
        }
        return Rows(row: row, template: row.layout.objectTemplate(attachments: attachments), children: children)
    }
}
