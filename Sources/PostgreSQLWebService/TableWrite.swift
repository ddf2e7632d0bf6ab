import HTTPServer
import PostgreSQL
import WebService

/// Writes on one table as PostgREST's clients send them: `POST` of a JSON
/// object or array (one statement for the whole array), `PATCH` and
/// `DELETE` of the rows the read language's filters select, the answer
/// chosen by `Prefer: return=…`. The columns written are the body's
/// members (by label or by column name), or those `columns=` names: a
/// member sent as `null` is stored as NULL, a member left out keeps the
/// column's default (insert) or value (update).
///
/// The statement is built per request from the names the table declared
/// at load and the request's members, filters and preferences; every
/// value is bound (the body as one `json` argument), every name quoted.
///
/// ```swift
/// let write = TableWrite(table: "\"public\".\"item\"", path: "/items", columns: [.init(name: "id", label: "id")],
///                        key: ["id"], graph: graph, resource: 0)
/// Route(.post, "/", parameters: [write.parameter()]) { values in values[0] }
/// ```
public struct TableWrite: Sendable {
    /// A column of the table: its name, and the label its rows carry.
    public struct Column: Sendable {
        public var name: String
        public var label: String
        /// The SQL of its default as the catalog states it (`nextval(…)`,
        /// `'open'::text`), for `Prefer: missing=default`; `nil` for none.
        public var defaultExpression: String?
        /// Its type, schema-qualified and quoted, without modifiers
        /// (`"pg_catalog"."numeric"`, `"pg_catalog"."_text"`): a large
        /// body's rows are copied into columns of these types. `nil` when
        /// not known, and for a type of another schema than `pg_catalog`
        /// (an enum, a domain: a role may write a column whose type's
        /// schema it may not name, and a domain over JSON reads a string
        /// as JSON): they are copied as JSON.
        public var typeName: String?
        /// Whether its type is `json` or `jsonb`, which take any JSON value as it is written.
        public var isJSON = false

        public init(name: String, label: String, defaultExpression: String? = nil, typeName: String? = nil, isJSON: Bool = false) {
            self.name = name
            self.label = label
            self.defaultExpression = defaultExpression
            self.typeName = typeName
            self.isJSON = isJSON
        }
    }

    /// The table, schema-qualified and quoted (`"public"."item"`).
    public let table: String
    /// Where its rows are listed, for `Location` (`/items`).
    public let path: String
    public let columns: [Column]
    /// The primary key's column names; a `PATCH` or `DELETE` by filter needs one.
    public let key: [String]
    /// The graph whose resource `resource` reads the table, for filters and `select`.
    public let graph: ResourceGraph
    public let resource: Int
    /// Whether it is a table (plain or partitioned), whose rows have an
    /// address (`tableoid`, `ctid`: a `PATCH` or `DELETE` of a table without
    /// a primary key selects its rows by it) and a version (`xmax`: whether
    /// an upsert inserted); a view's or a foreign table's have neither.
    public let isTable: Bool
    /// Whether a `PATCH` or `DELETE` without a filter writes every row
    /// (the file says `@unfiltered`); otherwise it is refused.
    public var writesEveryRowUnfiltered = false

    public init(
        table: String, path: String, columns: [Column], key: [String], graph: ResourceGraph, resource: Int, isTable: Bool = false
    ) {
        self.table = table
        self.path = path
        self.columns = columns
        self.key = key
        self.graph = graph
        self.resource = resource
        self.isTable = isTable
    }

    /// The column a member or argument names, by label or by name.
    func column(named name: String) -> Column? {
        columns.first { $0.label == name } ?? columns.first { $0.name == name }
    }

    /// The arguments of the query string a write reads itself, not as filters.
    static let ownArguments: Set<String> = ["select", "columns", "on_conflict"]
    /// The read language's arguments that order and page the rows a `PATCH` or `DELETE` selects.
    static let pageArguments: Set<String> = ["order", "limit", "offset"]

    // MARK: - The request

    /// The query a request runs: `method` on the rows the body holds
    /// (`POST`) or those the filters (and `keyFilters`, from the path)
    /// select (`PATCH`, `DELETE`).
    public func query(_ request: RoutedRequest, keyFilters: [(name: String, values: [String])], limits: ReadLimits) throws(HTTPError)
        -> Query
    {
        var preferences = try WritePreferences(request.headers)
        let representation = try ReadPreferences.representation(request.headers.values(for: "Accept"))
        guard representation != .events else {
            throw HTTPError(
                .notAcceptable, detail: "A write answers application/json, text/csv or \(ReadPreferences.singularType).",
                code: "PGRST107")
        }
        var own: [String: String] = [:]
        var filters = keyFilters
        var embedded: [(name: String, values: [String])] = []
        for (name, values) in request.otherArguments {
            if Self.ownArguments.contains(name) {
                guard values.count == 1 else {
                    throw HTTPError(
                        .badRequest, detail: "The argument \"\(name)\" is given more than once.", parameter: name, code: "PGRST100")
                }
                own[name] = values[0]
            } else if name.contains(".") {
                // An embedded resource's filter, order or page shapes the rows returned, not those written.
                embedded.append((name, values))
            } else {
                filters.append((name, values))
            }
        }
        // As PostgREST: a resolution on a table without a key and without on_conflict is no upsert (nor applied).
        if key.isEmpty, own["on_conflict"] == nil { preferences.resolution = nil }
        var arguments = SQLArguments()
        let write: String
        var staged: StagedBody?
        switch request.method {
        case .post:
            guard filters.isEmpty else {
                throw HTTPError(
                    .badRequest, detail: "A POST writes the rows of its body; it takes no filter (\(filters[0].name)).",
                    parameter: filters[0].name)
            }
            write = try insert(request, own: own, preferences: preferences, arguments: &arguments, staged: &staged)
        case .patch:
            var body = try Self.body(of: request, oneRow: true)
            // An array, as PostgREST takes it: its first object sets the columns
            // (read from the text as sent, so that numbers keep every digit).
            var firstOfArray = false
            if case .array(let elements) = body.document {
                body.document = elements.first ?? .object(JSONValue.Members())
                firstOfArray = true
            }
            guard case .object(let members) = body.document else {
                throw HTTPError(.badRequest, detail: "A PATCH body is one JSON object: the columns to change.", code: "PGRST102")
            }
            var assigned: [Column] = []
            if let text = own["columns"] {
                assigned = try chosenColumns(text)
            } else {
                for (name, _) in members.members { assigned.append(try knownColumn(name)) }
            }
            if assigned.isEmpty {
                // Nothing to change (`{}`): nothing written, nothing answered, as PostgREST answers it.
                write = "SELECT (CAST(NULL AS \(table))).* WHERE false"
            } else {
                let source = try rows(of: body, named: assigned, arguments: &arguments, single: true, firstOfArray: firstOfArray)
                let target = try selected(filters, method: "PATCH", limits: limits, arguments: &arguments)
                let set = assigned.map { quoted($0.name) + " = \"pgrst_body\"." + quoted($0.name) }.joined(separator: ", ")
                write = "UPDATE \(table) SET \(set) FROM (\(source)) AS \"pgrst_body\" WHERE \(target) RETURNING " + returned(preferences)
            }
        case .put:
            write = try replace(request, filters: filters, preferences: preferences, arguments: &arguments)
        case .delete:
            let target = try selected(filters, method: "DELETE", limits: limits, arguments: &arguments)
            write = "DELETE FROM \(table) WHERE \(target) RETURNING " + returned(preferences)
        default:
            throw HTTPError(.methodNotAllowed, detail: "A table is written by POST, PUT, PATCH or DELETE.")
        }
        let answered = answeredColumns(preferences)
        let answer =
            answered.isEmpty
            ? "SELECT 1 AS \"pgrst_row\" FROM \"pgrst_source\""
            : "SELECT " + answered.map { quoted($0.name) + " AS " + quoted($0.label) }.joined(separator: ", ") + " FROM \"pgrst_source\""
        var shaped = Query.list(answer, arguments)
        if preferences.returning == .representation, own["select"] != nil || !embedded.isEmpty {
            do throws(ReadError) {
                let reading = try ReadRequest(
                    graph: graph, resource: resource, arguments: [("select", [own["select"] ?? "*"])] + embedded, limits: limits)
                shaped = reading.apply(to: shaped, taken: Set(StatementShape.of(write).parameters.names))
            } catch {
                throw error.httpError ?? HTTPError(.badRequest, detail: "The select cannot be read.", parameter: "select")
            }
            if !shaped.embeds.isEmpty, representation == .csv {
                throw HTTPError(
                    .notAcceptable, detail: "CSV cannot hold the embedded resources: ask for application/json.", parameter: "select",
                    code: "PGRST107")
            }
        }
        var sql = "WITH \"pgrst_source\" AS (" + write + ")\n" + shaped.sql
        let isUpsert = isTable && (request.method == .put || (request.method == .post && preferences.resolution != nil))
        if isUpsert {
            // How many rows were inserted, after the hidden marker: 201 when some were, 200 (or 204) when all were updated.
            sql =
                "WITH \"pgrst_source\" AS (" + write + ")\nSELECT \"pgrst_shaped\".*, NULL AS " + quoted(ObjectTemplate.hiddenColumnsMarker)
                + ", (SELECT count(*) FROM \"pgrst_source\" WHERE \"pgrst_inserted\") AS " + quoted(Self.insertedCount)
                + " FROM (" + shaped.sql + "\n) AS \"pgrst_shaped\""
        }
        return Query.tableWrite(
            sql, shaped.arguments, embeds: shaped.embeds,
            answer: .init(
                preferences: preferences, representation: representation,
                keyLabels: key.compactMap { name in columns.first { $0.name == name }?.label }, path: path, isUpsert: isUpsert,
                stagedBody: staged))
    }

    // MARK: - Insert

    private func insert(
        _ request: RoutedRequest, own: [String: String], preferences: WritePreferences, arguments: inout SQLArguments,
        staged: inout StagedBody?
    ) throws(HTTPError) -> String {
        // The body is scanned for its objects' member names, not parsed into
        // values: a bulk insert is held once, as the text PostgreSQL reads,
        // or, past the server's memory limit for a body, not at all (staged).
        var memberNames: [String] = []
        var expected: Set<String> = []
        var firstKeys: [String]?
        let takeKeys = { (keys: [String]) throws(HTTPError) in
            guard firstKeys != nil else {
                firstKeys = keys
                memberNames = keys
                expected = Set(keys)
                return
            }
            guard keys != firstKeys, Set(keys) != expected else { return }
            // With missing=default, an object may leave out what another gives; with
            // columns=, the columns are those it names, whatever the objects hold.
            guard preferences.missingDefault || own["columns"] != nil else {
                throw HTTPError(.badRequest, detail: "All object keys must match.", code: "PGRST102")
            }
            for name in keys where expected.insert(name).inserted { memberNames.append(name) }
        }
        var text = ""
        var shape: JSONObjectKeys.Shape?
        // Members whose value is an object or an array somewhere in a spooled body.
        var composite: Set<String> = []
        if let spooled = request.request.spooledBody, try Self.bodyKind(of: request) == .json,
            try Self.scanElements(of: spooled, takeKeys, composite: &composite)
        {
            // A JSON array the server holds in a file: copied into a temporary table, an object at a time, when the write runs.
            shape = .array
            staged = StagedBody(body: spooled, columns: nil)
        } else {
            text = try Self.bodyText(of: request)
            do {
                let isConverted = request.request.contentType == "text/csv" || request.request.contentType == FormBody.contentType
                let bytes = isConverted ? Array(text.utf8) : request.request.body
                shape = try JSONObjectKeys.scan(bytes) { keys throws(HTTPError) in try takeKeys(keys) }
            } catch {
                throw error as? HTTPError ?? HTTPError(.badRequest, detail: "Empty or invalid json.", code: "PGRST102")
            }
        }
        guard let shape else {
            throw HTTPError(.badRequest, detail: "Empty or invalid json: the body is an object or an array of objects.", code: "PGRST102")
        }
        let written: [Column]
        if let chosen = own["columns"] {
            written = try chosenColumns(chosen)
        } else {
            var columns: [Column] = []
            for name in memberNames { columns.append(try knownColumn(name)) }
            written = columns
        }
        // Copied as the columns' own types, each from the member the statement below would read (its name when an
        // object spells it so, else its label), unless an object leaves a column to its default (missing=default), a
        // column's type is not built in, an object or array goes to a column that is not JSON, or a member is read
        // by no column (columns=): those copy each object as JSON, for PostgreSQL to read whole as it reads a body.
        let members = written.map { expected.contains($0.name) ? $0.name : $0.label }
        if staged != nil, !preferences.missingDefault, !written.isEmpty, expected.isSubset(of: members),
            zip(written, members).allSatisfy({ column, member in
                column.typeName != nil && (column.isJSON || !composite.contains(member))
            })
        {
            staged?.columns = Array(zip(written, members))
        }
        // What `rows(of:)` reads of the document: its shape, and the names its objects use
        // (each column's member is its name when an object spells it so, else its label).
        let first = JSONValue.object(JSONValue.Members(memberNames.map { (key: $0, value: JSONValue.null) }))
        let body = (text: text, document: shape == .object ? first : JSONValue.array(firstKeys == nil ? [] : [first]))
        let source =
            staged?.columns != nil
            ? "SELECT * FROM pg_temp.\"pgrst_body\""
            : try rows(
                of: body, named: written, arguments: &arguments, single: false, missingDefault: preferences.missingDefault,
                staged: staged != nil)
        let names = written.map { quoted($0.name) }.joined(separator: ", ")
        var sql = "INSERT INTO \(table) (\(names)) SELECT \(names) FROM (\(source)) AS \"pgrst_body\""
        if written.isEmpty {
            sql = "INSERT INTO \(table) SELECT FROM (\(source)) AS \"pgrst_body\""
        }
        if let resolution = preferences.resolution {
            var target = key
            if let text = own["on_conflict"] { target = try chosenColumns(text, parameter: "on_conflict").map(\.name) }
            guard !target.isEmpty else {
                throw HTTPError(
                    .badRequest, detail: "An upsert needs on_conflict: the table has no primary key.", parameter: "on_conflict")
            }
            sql += " ON CONFLICT (" + target.map(quoted).joined(separator: ", ") + ")"
            let updated = written.filter { !target.contains($0.name) }
            if resolution == .ignoreDuplicates || updated.isEmpty {
                sql += " DO NOTHING"
            } else {
                sql += " DO UPDATE SET " + updated.map { quoted($0.name) + " = EXCLUDED." + quoted($0.name) }.joined(separator: ", ")
            }
            return sql + " RETURNING " + returned(preferences) + (isTable ? ", " + Self.inserted(table) : "")
        }
        return sql + " RETURNING " + returned(preferences)
    }

    /// The columns the answer reads of the rows written: all of them for
    /// `return=representation`, the key for `headers-only` (`Location`),
    /// none otherwise, so that a role that may write a table without
    /// reading it back (an insert-only table, column privileges) can.
    private func answeredColumns(_ preferences: WritePreferences) -> [Column] {
        switch preferences.returning {
        case .representation: columns
        case .headersOnly: columns.filter { key.contains($0.name) }
        case .minimal: []
        }
    }

    /// The `RETURNING` list of the write: the columns the answer reads, or a constant.
    private func returned(_ preferences: WritePreferences) -> String {
        let answered = answeredColumns(preferences)
        if answered.count == columns.count, !columns.isEmpty { return "\(table).*" }
        return answered.isEmpty ? "1" : answered.map { table + "." + quoted($0.name) }.joined(separator: ", ")
    }

    /// Whether an upsert's row was inserted rather than updated: a row
    /// version a transaction just inserted has no deleting transaction yet.
    static func inserted(_ table: String) -> String {
        "(\(table).xmax = 0) AS \"pgrst_inserted\""
    }

    /// The label of the answer's column (after the hidden ones) that counts the rows an upsert inserted.
    static let insertedCount = "pgrst_inserted_count"

    // MARK: - Replace

    /// `PUT /t?id=eq.1` with one object: the row of that key inserted, or
    /// replaced by the members given. The filters are `eq` on every key
    /// column and nothing else (405, `PGRST105`); the body's key members
    /// must say the same values (400, `PGRST115`).
    private func replace(
        _ request: RoutedRequest, filters: [(name: String, values: [String])], preferences: WritePreferences, arguments: inout SQLArguments
    ) throws(HTTPError) -> String {
        if let paged = filters.first(where: { $0.name == "limit" || $0.name == "offset" }) {
            throw HTTPError(
                .badRequest, detail: "limit/offset querystring parameters are not allowed for PUT", parameter: paged.name, code: "PGRST114")
        }
        var keyValues: [String: String] = [:]
        for (name, values) in filters {
            guard let column = column(named: name), key.contains(column.name), values.count == 1, values[0].hasPrefix("eq."),
                keyValues[column.name] == nil
            else { throw Self.notByKey }
            keyValues[column.name] = String(values[0].dropFirst(3))
        }
        guard !key.isEmpty, keyValues.count == key.count else { throw Self.notByKey }
        let body = try Self.body(of: request, oneRow: true)
        // One object, or an array of one, as PostgREST takes it.
        var document = body.document
        if case .array(let elements) = document, elements.count == 1 { document = elements[0] }
        guard case .object(let members) = document else {
            throw HTTPError(.badRequest, detail: "A PUT body is one JSON object: the row.", code: "PGRST102")
        }
        var written: [Column] = []
        var given: [String: String] = [:]
        for (name, value) in members.members {
            let column = try knownColumn(name)
            written.append(column)
            switch value {
            case .string(let text): given[column.name] = text
            case .integer(let number): given[column.name] = String(number)
            case .bool(let flag): given[column.name] = String(flag)
            default: given[column.name] = nil
            }
        }
        guard key.allSatisfy({ given[$0] != nil && given[$0] == keyValues[$0] }) else {
            throw HTTPError(.badRequest, detail: "Payload values do not match URL in primary key column(s)", code: "PGRST115")
        }
        let source = try rows(of: body, named: written, arguments: &arguments, single: false)
        let names = written.map { quoted($0.name) }.joined(separator: ", ")
        let updated = written.filter { !key.contains($0.name) }.map(\.name)
        let set = (updated.isEmpty ? [key[0]] : updated).map { quoted($0) + " = EXCLUDED." + quoted($0) }.joined(separator: ", ")
        return "INSERT INTO \(table) (\(names)) SELECT \(names) FROM (\(source)) AS \"pgrst_body\" ON CONFLICT ("
            + key.map(quoted).joined(separator: ", ") + ") DO UPDATE SET \(set) RETURNING \(table).*"
            + (isTable ? ", " + Self.inserted(table) : "")
    }

    private static let notByKey = HTTPError(
        .methodNotAllowed, detail: "Filters must include all and only primary key columns with 'eq' operators", code: "PGRST105")

    // MARK: - Parts

    /// How a body reads.
    enum BodyKind { case json, csv, form }

    /// How the body reads by its `Content-Type`: JSON, a form, or, `takesCSV`,
    /// CSV; a body without `Content-Type` is JSON, as PostgREST reads it
    /// (and refused when it is not). Anything else is 415.
    static func bodyKind(of request: RoutedRequest, takesCSV: Bool = true) throws(HTTPError) -> BodyKind {
        let contentType = request.request.contentType
        if contentType == FormBody.contentType { return .form }
        if takesCSV, contentType == "text/csv" { return .csv }
        guard contentType == nil || contentType == "application/json" || contentType?.hasSuffix("+json") == true else {
            throw HTTPError(
                .unsupportedMediaType,
                detail: "The body must be application/json\(takesCSV ? ", text/csv" : "") or a form, not \(contentType ?? "").")
        }
        return .json
    }

    /// The body's text as JSON: JSON, a form's fields (``FormBody``), or,
    /// `takesCSV`, CSV (``CSVBody``), by ``bodyKind(of:takesCSV:)``; an
    /// empty body is 400. A function's call reads its body by the same rule.
    static func bodyText(of request: RoutedRequest, takesCSV: Bool = true) throws(HTTPError) -> String {
        let kind = try bodyKind(of: request, takesCSV: takesCSV)
        // A form is one row of its fields, as PostgREST reads it.
        if kind == .form { return try FormBody.json(request.request.formFields) }
        let body = request.request.body
        let isCSV = kind == .csv
        guard isCSV || !body.isEmpty else { throw HTTPError(.badRequest, detail: "Empty or invalid json.", code: "PGRST102") }
        // Text that is not UTF-8 is refused, not stored with its bytes replaced.
        guard let text = String(validating: body, as: UTF8.self) else {
            throw HTTPError(.badRequest, detail: "The body is not UTF-8 text.", code: "PGRST102")
        }
        return isCSV ? try CSVBody.json(body) : text
    }

    /// The body, JSON or CSV (``CSVBody``), as JSON text and its value;
    /// anything else is 415. With `oneRow` (PATCH and PUT), a CSV body of
    /// one line is that row's object rather than an array.
    private static func body(of request: RoutedRequest, oneRow: Bool = false) throws(HTTPError) -> (
        text: String, document: JSONValue
    ) {
        var text = try bodyText(of: request)
        guard var document = try? JSONValue.parse(Array(text.utf8)) else {
            throw HTTPError(.badRequest, detail: "Empty or invalid json.", code: "PGRST102")
        }
        if oneRow, request.request.contentType == "text/csv", case .array(let rows) = document, rows.count == 1 {
            document = rows[0]
            text = String(text.dropFirst().dropLast())
        }
        return (text, document)
    }

    /// The rows of the body as a `SELECT` of the table's row type: each
    /// member read as its column's type by PostgreSQL (`json_populate_record`),
    /// a member left out NULL (and not written: only `written` columns are).
    /// With `missingDefault`, a member an object leaves out is the
    /// column's default there (`Prefer: missing=default`), not NULL.
    private func rows(
        of body: (text: String, document: JSONValue), named written: [Column], arguments: inout SQLArguments, single: Bool,
        missingDefault: Bool = false, firstOfArray: Bool = false, staged: Bool = false
    ) throws(HTTPError) -> String {
        // With `firstOfArray` (a PATCH's array), the text is the array and the row its first element.
        let value = firstOfArray ? "(CAST(:writeBody AS json)->0)" : "CAST(:writeBody AS json)"
        // A staged body's objects are the rows of the temporary table the write copies them into first
        // (Query.stageBody), read back in the order written: a table new in this transaction, local to it.
        let arrayElements = staged ? "pg_temp.\"pgrst_body\"" : "json_array_elements(CAST(:writeBody AS json))"
        if !staged {
            var text = body.text
            if case .object = body.document, !single { text = "[" + text + "]" }
            arguments[value: "writeBody"] = .text(text)
        }
        // Members named by label are renamed to their columns' names, in SQL.
        let renamed = written.filter { column in !Self.names(in: body.document).contains(column.name) && column.label != column.name }
        let function = single ? "json_populate_record" : "json_populate_recordset"
        if missingDefault, !single {
            let values = written.map { column in
                let member = Self.names(in: body.document).contains(column.name) ? column.name : column.label
                return "CASE WHEN \"pgrst_element\"::jsonb ? " + quotedLiteral(member) + " THEN (json_populate_record(NULL::\(table), "
                    + "json_build_object(" + quotedLiteral(column.name) + ", \"pgrst_element\"->" + quotedLiteral(member) + ")))."
                    + quoted(column.name) + " ELSE " + (column.defaultExpression ?? "NULL") + " END AS " + quoted(column.name)
            }
            return "SELECT " + (values.isEmpty ? "" : values.joined(separator: ", "))
                + " FROM \(arrayElements) AS \"pgrst_elements\"(\"pgrst_element\")"
        }
        guard !renamed.isEmpty else {
            if staged {
                return "SELECT \"pgrst_row\".* FROM \(arrayElements) AS \"pgrst_elements\"(\"pgrst_element\"), "
                    + "json_populate_record(NULL::\(table), \"pgrst_element\") AS \"pgrst_row\""
            }
            return "SELECT * FROM \(function)(NULL::\(table), \(value))"
        }
        let pairs = written.map { column in
            let member = Self.names(in: body.document).contains(column.name) ? column.name : column.label
            return quotedLiteral(column.name) + ", \"pgrst_element\"->" + quotedLiteral(member)
        }.joined(separator: ", ")
        let elements = single ? "(SELECT \(value) AS \"pgrst_element\")" : arrayElements
        return "SELECT \"pgrst_row\".* FROM \(elements) AS \"pgrst_elements\"(\"pgrst_element\"), "
            + "json_populate_record(NULL::\(table), json_build_object(\(pairs))) AS \"pgrst_row\""
    }

    /// Calls `takeKeys` with the member names of each object of a spooled
    /// JSON array; `false` when the body is no array (an object is read as
    /// other bodies are). An element that is not an object is 400.
    private static func scanElements(
        of spooled: SpooledBody, _ takeKeys: ([String]) throws(HTTPError) -> Void, composite: inout Set<String>
    ) throws(HTTPError) -> Bool {
        do {
            return try SpooledJSONArray.forEachElement(of: spooled) { element in
                guard let members = JSONObjectKeys.members(element) else {
                    throw HTTPError(
                        .badRequest, detail: "Empty or invalid json: the body is an object or an array of objects.", code: "PGRST102")
                }
                try takeKeys(members.map(\.name))
                for member in members {
                    let first = element[member.value.lowerBound]
                    if first == UInt8(ascii: "{") || first == UInt8(ascii: "[") { composite.insert(member.name) }
                }
            }
        } catch let error as HTTPError {
            throw error
        } catch {
            throw HTTPError(.serviceUnavailable, detail: "The server cannot read the request body back now; send again shortly.")
        }
    }

    /// The member names of the body's first object.
    private static func names(in document: JSONValue) -> Set<String> {
        switch document {
        case .object(let object): return Set(object.members.map(\.key))
        case .array(let elements):
            if case .object(let object) = elements.first { return Set(object.members.map(\.key)) }
            return []
        default: return []
        }
    }

    private func knownColumn(_ name: String, parameter: String? = nil) throws(HTTPError) -> Column {
        guard let column = column(named: name) else {
            throw HTTPError(
                .badRequest, detail: "Could not find the '\(name)' column of '\(path.dropFirst())' in the schema cache",
                parameter: parameter, code: "PGRST204")
        }
        return column
    }

    /// `columns=a,b` (or `on_conflict=`): the columns named, each known.
    private func chosenColumns(_ text: String, parameter: String = "columns") throws(HTTPError) -> [Column] {
        let names = text.split(separator: ",", omittingEmptySubsequences: false).map {
            String($0.filter { $0 != " " && $0 != "\"" })
        }
        guard !names.contains(where: \.isEmpty) else {
            throw HTTPError(.badRequest, detail: "\"failed to parse \(parameter) (\(text))\"", parameter: parameter, code: "PGRST100")
        }
        var chosen: [Column] = []
        for name in names where !chosen.contains(where: { $0.name == column(named: name)?.name }) {
            chosen.append(try knownColumn(name, parameter: parameter))
        }
        return chosen
    }

    /// The condition that selects the rows `filters` select, by the
    /// table's key; no filter is a 400 (a write of every row is not a
    /// request's to make by leaving the filters out).
    private func selected(_ filters: [(name: String, values: [String])], method: String, limits: ReadLimits, arguments: inout SQLArguments)
        throws(HTTPError) -> String
    {
        // `order`, `limit` and `offset` choose among the rows the filters select; they select none themselves.
        guard writesEveryRowUnfiltered || filters.contains(where: { !Self.pageArguments.contains($0.name) }) else {
            throw HTTPError(
                .badRequest,
                detail: "A \(method) without a filter would write every row of \(path.dropFirst()); name the rows (?id=eq.1), "
                    + "or select them all on purpose with a filter every row passes.")
        }
        let byAddress = key.isEmpty && isTable && !columns.isEmpty
        guard !key.isEmpty || byAddress else {
            throw HTTPError(.methodNotAllowed, detail: "\(path.dropFirst()) has no primary key: its rows are not written by filter.")
        }
        let reading: ReadRequest
        do throws(ReadError) {
            reading = try ReadRequest(graph: graph, resource: resource, arguments: filters, limits: limits)
        } catch {
            throw error.httpError ?? HTTPError(.badRequest, detail: "The filters cannot be read.")
        }
        var base = graph.resources[resource].sql
        if byAddress {
            // The relation's resource is `SELECT <columns> FROM <table>`: each row's address goes first.
            base = "SELECT tableoid AS \"pgrst_tableoid\", ctid AS \"pgrst_ctid\", " + base.dropFirst("SELECT ".count)
        }
        let filtered = reading.apply(to: Query.list(base, arguments), passing: byAddress ? ["pgrst_tableoid", "pgrst_ctid"] : [])
        arguments = filtered.arguments
        var rows = filtered.sql
        // `limit` and `offset` (after `order`) take that many of the rows selected, as PostgREST's limited writes do.
        if let page = reading.page {
            if let limit = page.limit {
                arguments[value: "writeLimit"] = .text(String(limit))
                rows += "\nLIMIT CAST(:writeLimit AS int8)"
            }
            if page.offset > 0 {
                arguments[value: "writeOffset"] = .text(String(page.offset))
                rows += "\nOFFSET CAST(:writeOffset AS int8)"
            }
        }
        if byAddress {
            return "(\(table).tableoid, \(table).ctid) IN (SELECT \"pgrst_selected\".\"pgrst_tableoid\", \"pgrst_selected\".\"pgrst_ctid\""
                + " FROM (\(rows)) AS \"pgrst_selected\")"
        }
        let labels = key.compactMap { name in columns.first { $0.name == name }?.label }
        let keyList = key.map { table + "." + quoted($0) }.joined(separator: ", ")
        return "(\(keyList)) IN (SELECT " + labels.map { "\"pgrst_selected\"." + quoted($0) }.joined(separator: ", ")
            + " FROM (\(rows)) AS \"pgrst_selected\")"
    }
}

/// `text` as a SQL string literal.
func quotedLiteral(_ text: String) -> String {
    enclosed(text, in: UInt8(ascii: "'"))
}
