import JSONStreaming
import PostgreSQL

// MARK: - Batch SQL

/// An embedded query rewritten to run for a whole block of parent rows.
///
/// Each parameter `$k` of the subquery becomes a column of an `unnest` of
/// text arrays (one element per parent row, cast to the type the server
/// inferred for `$k`), and the subquery is joined laterally to it:
///
/// ```sql
/// SELECT p."__ord", c.* FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS p(a0, a1, "__ord")
/// CROSS JOIN LATERAL (SELECT * FROM (SELECT title FROM titles WHERE emp_no = (p.a1::pg_catalog.int4)) AS c0
///                     OFFSET 0) AS c
/// ```
///
/// `__ord` says which parent a row belongs to. `OFFSET 0` keeps the planner
/// from flattening the subquery into a join, so it runs once per parent, as
/// written, and its rows keep its own order. The statement asks for no order
/// of its own: a sort of the whole block would cost PostgreSQL more than the
/// subqueries. Rows come grouped by parent all the same (a nested loop over
/// the parents, in order); ``ChildBlock`` groups them when they do not.
/// `a0` is a column of NULLs that gives `unnest` one row per parent even
/// without parameters.
struct BatchSQL {
    var sql: String
    /// The subquery's parameter names: `names[k - 1]` fills array `$(k + 1)`.
    var names: [String]
    /// Lower-cased aliases of the subquery → their spelling.
    var labelSpelling: [String: String]
}

/// The batch forms of a connection's embedded queries.
private final class BatchSQLCache {
    var bySubquery: [String: BatchSQL] = [:]
}

/// Where a connection keeps its ``BatchSQLCache``.
private enum BatchSQLKey: LayerCacheKey {
    static func makeValue(for connection: Connection) -> BatchSQLCache { BatchSQLCache() }
}

extension Connection {
    /// The batch form of an embedded query, built once per connection.
    func batchSQL(for subquery: String) throws -> BatchSQL {
        let cache = self[cache: BatchSQLKey.self]
        if let batch = cache.bySubquery[subquery] { return batch }
        let statement = try preparedStatement(for: subquery)
        let typeNames = try typeNames(of: parameterTypes(of: statement))

        var pieces: [(token: SQLTokens.Token, text: String)] = []
        SQLTokens.scan(statement.parameters.sql) { token, bytes in
            if case .positionalParameter(let number) = token, number >= 1, number <= typeNames.count {
                pieces.append((token, "(p.a\(number)::\(typeNames[number - 1]))"))
            } else {
                pieces.append((token, String(decoding: bytes, as: UTF8.self)))
            }
        }
        // A trailing semicolon would end the statement inside the parentheses.
        func isTrailing(_ piece: (token: SQLTokens.Token, text: String)) -> Bool {
            switch piece.token {
            case .space, .comment: true
            case .other: piece.text == ";"
            case .word, .positionalParameter: false
            }
        }
        while let last = pieces.last, isTrailing(last) { pieces.removeLast() }
        let body = pieces.map(\.text).joined()

        let arrays = (0...typeNames.count).map { "$\($0 + 1)::text[]" }.joined(separator: ", ")
        let columns = (0...typeNames.count).map { "a\($0)" }.joined(separator: ", ")
        let sql = """
            SELECT p."__ord", c.* FROM unnest(\(arrays)) WITH ORDINALITY AS p(\(columns), "__ord") \
            CROSS JOIN LATERAL (SELECT * FROM (\(body)
            ) AS c0 OFFSET 0) AS c
            """
        let batch = BatchSQL(sql: sql, names: statement.parameters.names, labelSpelling: statement.labelSpelling)
        cache.bySubquery[subquery] = batch
        return batch
    }

    /// Schema-qualified type names by OID (`23` → `pg_catalog.int4`) to cast
    /// to; unknown types become `text`. Not `format_type`: its `character`
    /// means `char(1)` in a cast, which would cut `'d001'` to `'d'`.
    private func typeNames(of oids: [UInt32]) throws -> [String] {
        guard !oids.isEmpty else { return [] }
        let statement = try preparedStatement(
            for: """
                SELECT quote_ident(n.nspname) || '.' || quote_ident(t.typname)
                FROM unnest($1::oid[]) WITH ORDINALITY AS u(oid, position)
                JOIN pg_type t ON t.oid = u.oid JOIN pg_namespace n ON n.oid = t.typnamespace
                ORDER BY u.position
                """)
        let list = "{" + oids.map { String($0 == 0 || $0 == 705 ? 25 : $0) }.joined(separator: ",") + "}"
        let result = try run(statement, values: [list])
        return (0..<result.rowCount).map { result.string(row: $0, column: 0) ?? "text" }
    }
}

// MARK: - Child rows of a block

/// The rows of one embed for a block of parent rows, grouped by parent,
/// with the rows of its own embeds for this block.
final class ChildBlock {
    /// How the rows are written: an array, the first row or `null`, or its members.
    private let kind: Query.Embed.Kind
    private let result: QueryResult?
    private let template: ObjectTemplate
    /// Rows of parent `i` are `starts[i] ..< starts[i + 1]`; empty when
    /// all the rows belong to the one parent (no array to allocate).
    private let starts: [Int32]
    /// The result's rows in parent order, when they did not come in it;
    /// empty when they did (the batch statement asks for no order).
    private let order: [Int32]
    private let children: [ChildBlock]

    /// Runs `embeds` (and, recursively, their embeds) for every row of
    /// `parents`, all in one pipeline, one round trip: a block of rows for
    /// each embed, in order.
    ///
    /// - Parameters:
    ///   - parentLayout: the parents' columns, to bind parameters by label.
    ///   - firstColumn: the result column of `parentLayout.columns[0]`.
    ///   - arguments: the root query's arguments, for names no parent column and no embed's own arguments have.
    static func blocks(
        _ embeds: [Query.Embed], parents: QueryResult, parentLayout: ColumnLayout, firstColumn: Int32,
        arguments: SQLArguments, connection: Connection
    ) throws -> [ChildBlock] {
        guard !embeds.isEmpty else { return [] }
        let statements = try Self.statements(
            for: embeds, parents: parents, parentLayout: parentLayout, firstColumn: firstColumn,
            arguments: arguments, connection: connection)
        let results = statements.isEmpty ? nil : try connection.runPipeline(statements)
        return try embeds.indices.map { index in
            try ChildBlock(
                embeds[index], parentCount: parents.rowCount, result: results?[index], arguments: arguments,
                connection: connection)
        }
    }

    /// The statements that read the rows of `embeds` for every row of
    /// `parents` (their batch forms, prepared), one per embed, in
    /// order, with their values; none when there are no parents. Sent in
    /// one pipeline (``blocks(_:parents:parentLayout:firstColumn:arguments:connection:)``,
    /// or ahead of the block before, by ``BlockRows``).
    static func statements(
        for embeds: [Query.Embed], parents: QueryResult, parentLayout: ColumnLayout, firstColumn: Int32,
        arguments: SQLArguments, connection: Connection
    ) throws -> [PipelinedStatement] {
        guard parents.rowCount > 0 else { return [] }
        func make() throws -> [PipelinedStatement] {
            try embeds.map { embed in
                try statement(
                    for: embed, parents: parents, parentLayout: parentLayout, firstColumn: firstColumn,
                    arguments: arguments, connection: connection)
            }
        }
        let statements = try make()
        guard statements.contains(where: { $0.prepared?.isPrepared == false }) else { return statements }
        // A look-up found the cache full and emptied it, deallocating the
        // statements looked up before it: once more, with room.
        return try make()
    }

    /// The statement that reads `embed`'s rows for every row of
    /// `parents`, at least one.
    private static func statement(
        for embed: Query.Embed, parents: QueryResult, parentLayout: ColumnLayout, firstColumn: Int32,
        arguments: SQLArguments, connection: Connection
    ) throws -> PipelinedStatement {
        let batch = try connection.batchSQL(for: embed.query.sql)
        let own = embed.query.arguments
        let parentCount = parents.rowCount
        var values: [String?] = ["{" + Array(repeating: "NULL", count: Int(parentCount)).joined(separator: ",") + "}"]
        for name in batch.names {
            if let column = parentLayout.index(of: name) {
                values.append(
                    ArrayLiteral.text((0..<parentCount).map { parents.string(row: $0, column: firstColumn + Int32(column)) }))
            } else {
                let value: String? =
                    switch own[value: name] ?? arguments[value: name] {
                    case .text(let text): text
                    case .null: nil
                    case nil: throw ParameterError(.missing, name: name)
                    }
                values.append(ArrayLiteral.text(Array(repeating: value, count: Int(parentCount))))
            }
        }
        return PipelinedStatement(try connection.preparedStatement(for: batch.sql), values: values)
    }

    /// The rows `result` holds, what a statement of
    /// ``statements(for:parents:parentLayout:firstColumn:arguments:connection:)``
    /// read for `parentCount` parents (`nil` for none), grouped by parent;
    /// the embed's own embeds run here, as batches over them.
    init(
        _ embed: Query.Embed, parentCount: Int32, result: QueryResult?, arguments: SQLArguments,
        connection: Connection
    ) throws {
        kind = embed.kind
        guard let result, parentCount > 0 else {
            self.result = nil
            self.template = ObjectTemplate(columns: [])
            self.starts = [0]
            self.order = []
            self.children = []
            return
        }
        let batch = try connection.batchSQL(for: embed.query.sql)
        let columns = result.columns.dropFirst().map { $0.respelled(batch.labelSpelling) }

        // Count the rows of parent i (ordinal i + 1) into starts[i + 1], then
        // sum up: starts[i] becomes the number of rows of parents before i.
        var starts = [Int32](repeating: 0, count: Int(parentCount) + 1)
        var isInParentOrder = true
        var previous = 0
        for row in 0..<result.rowCount {
            let ordinal = try Self.ordinal(row: row, of: result, parentCount: parentCount)
            if ordinal < previous { isInParentOrder = false }
            previous = ordinal
            starts[ordinal] += 1
        }
        for index in 0..<Int(parentCount) { starts[index + 1] += starts[index] }
        // Rows that came out of parent order are put in it, each parent's
        // in the order they came (the subquery's own).
        var order: [Int32] = []
        if !isInParentOrder {
            var next = starts
            order = [Int32](repeating: 0, count: Int(result.rowCount))
            for row in 0..<result.rowCount {
                let parent = try Self.ordinal(row: row, of: result, parentCount: parentCount) - 1
                order[Int(next[parent])] = row
                next[parent] += 1
            }
        }

        let layout = ColumnLayout(Array(columns))
        self.result = result
        self.starts = starts
        self.order = order
        self.template = ObjectTemplate(
            columns: Array(columns), firstColumn: 1, embedKeys: embed.query.embeds.map(\.key))
        self.children = try Self.blocks(
            embed.query.embeds, parents: result, parentLayout: layout, firstColumn: 1, arguments: arguments,
            connection: connection)
    }

    /// The parent ordinal (1-based) in the first column of a batch result's row.
    private static func ordinal(row: Int32, of result: QueryResult, parentCount: Int32) throws -> Int {
        guard let ordinal = Int(result.string(row: row, column: 0) ?? ""), (1...Int(parentCount)).contains(ordinal)
        else { throw DatabaseError(code: .internalError, message: "embedded rows came back without their parent") }
        return ordinal
    }

    /// The rows of `embed` for one parent row, already read in full by
    /// the embed's own prepared statement; its embeds run as batches over
    /// them.
    ///
    /// Without a connection (on a batcher's loop), `embed` must have no
    /// embeds of its own.
    init(
        _ embed: Query.Embed, rowsOfOneParent result: QueryResult, layout: ColumnLayout, arguments: SQLArguments,
        connection: Connection?
    ) throws {
        self.kind = embed.kind
        self.result = result
        self.starts = []
        self.order = []
        self.template = layout.objectTemplate(embedKeys: embed.query.embeds.map(\.key))
        guard !embed.query.embeds.isEmpty else {
            self.children = []
            return
        }
        guard let connection else {
            throw DatabaseError(code: .internalError, message: "nested embeds need a connection of their own")
        }
        self.children = try Self.blocks(
            embed.query.embeds, parents: result, parentLayout: layout, firstColumn: 0, arguments: arguments,
            connection: connection)
    }

    /// Writes the rows that belong to parent `parent`, as the embed's kind
    /// says: a JSON array of them, or the first as an object (`null`
    /// without one), or its members alone (each `null` without one).
    func write<Output: JSONOutput>(forParent parent: Int32, options: JSONRenderingOptions, to output: inout Output) {
        let rows: Range<Int32> =
            if let result { starts.isEmpty ? 0..<result.rowCount : starts[Int(parent)]..<starts[Int(parent) + 1] } else { 0..<0 }
        switch kind {
        case .many:
            output.append(UInt8(ascii: "["))
            for index in rows {
                if index != rows.lowerBound { output.append(UInt8(ascii: ",")) }
                writeRow(index, options: options, to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .one:
            if let first = rows.first { writeRow(first, options: options, to: &output) } else { JSONWriter.appendNull(to: &output) }
        case .spread:
            let row = rows.first.map { order.isEmpty ? $0 : order[Int($0)] }
            template.writeMembers(row: row, of: result, options: options, to: &output) { index, output in
                if let row {
                    children[index].write(forParent: row, options: options, to: &output)
                } else {
                    JSONWriter.appendNull(to: &output)
                }
            }
        case .spreadMany:
            let rows = rows.map { order.isEmpty ? $0 : order[Int($0)] }
            template.writeArrays(rows: rows, of: result, options: options, to: &output) { index, row, output in
                children[index].write(forParent: row, options: options, to: &output)
            }
        }
    }

    private func writeRow<Output: JSONOutput>(_ index: Int32, options: JSONRenderingOptions, to output: inout Output) {
        guard let result else { return }
        let row = order.isEmpty ? index : order[Int(index)]
        template.write(row: row, of: result, options: options, to: &output) { index, output in
            children[index].write(forParent: row, options: options, to: &output)
        }
    }
}

/// PostgreSQL array literals of text elements.
enum ArrayLiteral {
    /// `{"a","b\"c",NULL}`: every element quoted, `"` and `\` escaped.
    static func text(_ elements: [String?]) -> String {
        var literal = "{"
        for (index, element) in elements.enumerated() {
            if index > 0 { literal += "," }
            guard let element else {
                literal += "NULL"
                continue
            }
            literal += "\""
            for character in element.unicodeScalars {
                if character == "\"" || character == "\\" { literal += "\\" }
                literal.unicodeScalars.append(character)
            }
            literal += "\""
        }
        return literal + "}"
    }
}
