import HTTPServer
import PostgreSQL
import WebService

// MARK: - A table's write, answered as PostgREST answers it

/// How a ``TableWrite``'s rows answer: its preferences, the representation
/// `Accept` asks for (JSON, CSV or one object), and where a created row is
/// read again (`/items?id=eq.1`).
struct TableWriteAnswer: Sendable {
    let preferences: WritePreferences
    let representation: ReadPreferences.Representation
    /// The primary key's labels, in order, for `Location`.
    let keyLabels: [String]
    let path: String
    /// An upsert (`POST` with `resolution`, or `PUT`): 201 when it inserted a row, else 200 (204 without rows asked for).
    var isUpsert = false
    /// A JSON array body the server holds in a file, whose objects the
    /// statement reads from the temporary table `pgrst_body`: copied there,
    /// an object at a time, in the write's transaction.
    var stagedBody: StagedBody?
}

/// A JSON array body held in a file (``SpooledBody``), as a write's
/// transaction copies it into the temporary table `pgrst_body`: into
/// `columns`, of their own types, each from its `member` of each object,
/// read as `json_populate_record` reads it; without columns, each object
/// whole into one `json` column, `element`.
struct StagedBody: Sendable {
    let body: SpooledBody
    var columns: [(column: TableWrite.Column, member: String)]?
}

extension Query {
    /// Runs the statement in one transaction as the request's role: `POST`
    /// answers 201, `PATCH` and `DELETE` 204 (200 with the rows for
    /// `return=representation`, as JSON, CSV or, asked for one object, the
    /// object: 406 and rolled back unless one row was written); more rows
    /// than `max-affected` roll it back with a 400, as does `tx=rollback`
    /// after answering.
    func tableWrite(_ answer: TableWriteAnswer, on connection: Connection, access: Access, runner: QueryRunner, request: RoutedRequest)
        throws -> HTTPResponse
    {
        let preferences = answer.preferences
        let represents = preferences.returning == .representation
        var body: [UInt8] = answer.representation == .json ? [UInt8(ascii: "[")] : []
        var rowCount = 0
        var inserted = 0
        var location: String?
        do {
            try connection.transaction(readOnly: false, role: access.role) { connection in
                if let staged = answer.stagedBody { try Self.stage(staged, on: connection) }
                if !embeds.isEmpty {
                    (rowCount, inserted) = try writeEmbedding(answer, on: connection, options: runner.options, into: &body)
                    try Self.check(rowCount, answer)
                    if preferences.rollsBack { throw RolledBack() }
                    return
                }
                let rows = try connection.query(sql, arguments)
                defer { rows.close() }
                // Every row is read: a statement stopped halfway would fail the transaction.
                while let row = try rows.next() {
                    rowCount += 1
                    if rowCount == 1, answer.isUpsert { inserted = row[TableWrite.insertedCount].flatMap { Int($0) } ?? 0 }
                    if represents {
                        switch answer.representation {
                        case .csv:
                            if rowCount == 1 { CSVWriter.appendHeader(row.layout.columns, to: &body) }
                            CSVWriter.appendRow(row, to: &body)
                        case .singular where rowCount > 1: break
                        default:
                            if rowCount > 1 { body.append(UInt8(ascii: ",")) }
                            row.appendJSON(options: runner.options, to: &body)
                        }
                    } else if rowCount == 1, preferences.returning == .headersOnly {
                        location = Self.location(of: row, answer)
                    }
                }
                if represents, answer.representation == .csv, rowCount == 0 { CSVWriter.appendHeader(rows.columns, to: &body) }
                try Self.check(rowCount, answer)
                if preferences.rollsBack { throw RolledBack() }
            }
        } catch is RolledBack {
            // Run and rolled back, as asked: answered as if committed.
        }
        if answer.representation == .json { body.append(UInt8(ascii: "]")) }
        let isPost = request.method == .post
        // A POST creates (201) unless it is an upsert that inserted nothing; a PUT that inserted its row creates too.
        let created = answer.isUpsert ? inserted > 0 : isPost
        var response: HTTPResponse
        if represents {
            response = HTTPResponse(status: created ? .created : .ok, json: body)
            switch answer.representation {
            case .csv: response.headers["Content-Type"] = "text/csv; charset=utf-8"
            case .singular: response.headers["Content-Type"] = ReadPreferences.singularType + "; charset=utf-8"
            default: break
            }
        } else {
            response = HTTPResponse(status: created ? .created : isPost ? .ok : .noContent)
        }
        if isPost, rowCount == 1, let location { response.headers["Location"] = location }
        let total = preferences.countsExactly ? String(rowCount) : "*"
        response.headers["Content-Range"] = request.method == .patch && rowCount > 0 ? "0-\(rowCount - 1)/\(total)" : "*/\(total)"
        if let applied = preferences.applied { response.headers["Preference-Applied"] = applied }
        return response
    }

    private struct RolledBack: Error {}

    /// Copies the objects of `body`, a JSON array, into a temporary table
    /// `pgrst_body` that the transaction drops: one `COPY` streamed in
    /// pieces of 64 KiB, so the server holds one piece, never the body.
    /// The caller's role creates the table (PostgreSQL's `TEMPORARY`
    /// privilege, which every role has unless revoked: without it, 403).
    private static func stage(_ staged: StagedBody, on connection: Connection) throws {
        let columns = staged.columns ?? []
        let definitions =
            staged.columns == nil
            ? "\"element\" json"
            : columns.map { quoted($0.column.name) + " " + ($0.column.typeName ?? "json") }.joined(separator: ", ")
        do {
            try connection.runSimple("CREATE TEMPORARY TABLE \"pgrst_body\" (" + definitions + ") ON COMMIT DROP")
        } catch let error as DatabaseError where error.code == .insufficientPrivilege {
            throw HTTPError(
                .forbidden,
                detail: "A large JSON array is copied through a temporary table, which this role may not create "
                    + "(PostgreSQL's TEMPORARY privilege on the database): grant it, or send the rows in smaller bodies.",
                code: error.code.rawValue)
        }
        try connection.copyIn("COPY pg_temp.\"pgrst_body\" FROM STDIN") { send in
            var data: [UInt8] = []
            _ = try SpooledJSONArray.forEachElement(of: staged.body) { element in
                if columns.isEmpty {
                    SpooledJSONArray.appendCopyRow(element, to: &data)
                } else {
                    try SpooledJSONArray.appendCopyRow(element, columns: columns, to: &data)
                }
                if data.count >= 64 << 10 {
                    try send(data)
                    data.removeAll(keepingCapacity: true)
                }
            }
            try send(data)
        }
    }

    /// What the number of rows written refuses, rolling the write back:
    /// more than `max-affected`, or other than one for a singular answer.
    private static func check(_ rowCount: Int, _ answer: TableWriteAnswer) throws {
        if let maximum = answer.preferences.maxAffected, rowCount > maximum {
            throw HTTPError(
                .badRequest, detail: "Query result exceeds max-affected preference constraint", code: "PGRST124",
                details: .string("The query affects \(rowCount) rows"))
        }
        if answer.representation == .singular, rowCount != 1 {
            throw HTTPError(
                .notAcceptable, detail: "JSON object requested, multiple (or no) rows returned", code: "PGRST116",
                details: .string("The result contains \(rowCount) rows"))
        }
    }

    /// The written rows with the resources `select` embeds: the write's
    /// rows read whole, then each embed's rows for all of them in one
    /// pipeline, in the same transaction (so they see what was written),
    /// each row written into `body` with its embeds. Returns the rows
    /// written and, for an upsert, how many were inserted.
    private func writeEmbedding(
        _ answer: TableWriteAnswer, on connection: Connection, options: JSONRenderingOptions, into body: inout [UInt8]
    ) throws -> (rows: Int, inserted: Int) {
        let statement = try connection.preparedStatement(for: sql)
        let result = try connection.run(statement, values: arguments.textValues(for: statement.parameters))
        let layout = ColumnLayout(result.columns)
        let children = try ChildBlock.blocks(
            embeds, parents: result, parentLayout: layout, firstColumn: 0, arguments: arguments, connection: connection)
        let template = layout.objectTemplate(embedKeys: embeds.map(\.key))
        let written = answer.representation == .singular ? min(result.rowCount, 1) : result.rowCount
        for row in 0..<written {
            if row > 0 { body.append(UInt8(ascii: ",")) }
            template.write(row: row, of: result, options: options, to: &body) { index, output in
                children[index].write(forParent: row, options: options, to: &output)
            }
        }
        let inserted =
            layout.index(of: TableWrite.insertedCount).flatMap { column in
                result.rowCount > 0 ? result.string(row: 0, column: Int32(column)).flatMap { Int($0) } : nil
            } ?? 0
        return (Int(result.rowCount), inserted)
    }

    /// `/items?id=eq.1`: where PostgREST's clients read the row again; `nil` when a key column is missing.
    private static func location(of row: Row, _ answer: TableWriteAnswer) -> String? {
        guard !answer.keyLabels.isEmpty else { return nil }
        var query: [String] = []
        for label in answer.keyLabels {
            let value = row[label].map { "eq." + percentEncodedSegment($0) } ?? "is.null"
            query.append(percentEncodedSegment(label) + "=" + value)
        }
        return answer.path + "?" + query.joined(separator: "&")
    }
}
