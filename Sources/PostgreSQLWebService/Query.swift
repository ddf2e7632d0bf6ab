import HTTPServer
import PostgreSQL
import WebService

/// What a route runs against the database, as a value: the SQL with its
/// `:name` parameters, their arguments, the shape of the JSON answer and
/// the subqueries nested in it. A handler returns a query; the router's
/// ``QueryRunner`` runs it, and chooses how.
///
/// Each row becomes a JSON object keyed by column label (`AS "firstName"`;
/// a dotted label such as `"name.first"` nests an object). Values are always
/// bound as parameters, never spliced into the SQL.
///
/// ```swift
/// Route(.get, "/?:id", returns: Product.self, Parameter<Int>("id"), Parameter<CommaList<ProductDetail>>("details")) { id, details in
///     Query.object(Self.byID, ["id": id], notFound: "No product \(id).")
///         .attaching(details.map { ($0.rawValue, $0.sql) })
/// }
/// Route(.get, "/", returns: [Product].self) {
///     Query.list("SELECT id, name FROM products ORDER BY id")
/// }
/// ```
public struct Query: Sendable {
    /// The JSON answer's shape.
    enum Shape: Sendable {
        /// `[{…},{…}]`, streamed: every row.
        case list
        /// `{…}`: the first row; the error when there is none.
        case object(notFound: @Sendable () -> HTTPError)
        /// No rows: `204 No Content` once the statement ran.
        case execute
        /// Statements run in one transaction before `sql`, whose rows answer.
        case write(earlier: [String], returning: Returning, location: String?)
        /// A ``TableWrite``'s statement, answered as its preferences ask.
        case tableWrite(TableWriteAnswer)
    }

    /// A query nested in each row of its parent under `key`, as an array
    /// of its rows. Its `:name` parameters bind from the parent row's
    /// columns of that label, else from its own arguments, else from the
    /// root query's. It has embeds of its own for deeper nesting.
    struct Embed: Sendable {
        /// How an embed's rows are written in its parent's row.
        enum Kind: Sendable {
            /// An array of the rows (`"titles":[…]`).
            case many
            /// The first row as an object, or `null` (a to-one relationship).
            case one
            /// The first row's members written among the parent's own (`...album(title)`), `null` each without a row.
            case spread
            /// Each member written among the parent's own as the array of its
            /// values in the rows (`...tracks(name)` → `"name":["a","b"]`), `[]` without rows.
            case spreadMany
        }

        let key: String
        let query: Query
        var kind: Kind = .many
    }

    /// What a query holds, in one object: handlers return queries and
    /// runners capture them in the closures of deferred responses, and a
    /// copy then retains one object rather than each string, array and
    /// closure inside. Changed only through ``uniqueStorage()``.
    private final class Storage: @unchecked Sendable {
        // `@unchecked Sendable`: a storage is changed only while a single
        // query holds it, before that query is shared.
        let sql: String
        let arguments: SQLArguments
        let shape: Shape
        var embeds: [Embed] = []
        var members: [(key: String, query: Query)] = []
        var page: Page?
        var reading: ReadRequest?
        /// The statement whose rows a count counts, once ``reading`` was applied.
        var counted: (sql: String, arguments: SQLArguments)?
        var channel: String?
        var readsOnly = false

        init(_ sql: String, _ arguments: SQLArguments, shape: Shape) {
            self.sql = sql
            self.arguments = arguments
            self.shape = shape
        }

        func copy() -> Storage {
            let copy = Storage(sql, arguments, shape: shape)
            copy.embeds = embeds
            copy.members = members
            copy.page = page
            copy.reading = reading
            copy.counted = counted
            copy.channel = channel
            copy.readsOnly = readsOnly
            return copy
        }
    }

    private var storage: Storage

    var sql: String { storage.sql }
    var arguments: SQLArguments { storage.arguments }
    var shape: Shape { storage.shape }
    /// The queries nested in each row, in order.
    private(set) var embeds: [Embed] {
        get { storage.embeds }
        set { uniqueStorage().embeds = newValue }
    }
    /// Lists streamed as members of the object, after its own columns.
    private(set) var members: [(key: String, query: Query)] {
        get { storage.members }
        set { uniqueStorage().members = newValue }
    }
    /// The page of a list, from the request's `limit` and `offset`.
    private(set) var page: Page? {
        get { storage.page }
        set { uniqueStorage().page = newValue }
    }

    /// The statement a count of a read list's rows counts; `nil`: the list's own.
    var counted: (sql: String, arguments: SQLArguments)? {
        get { storage.counted }
        set { uniqueStorage().counted = newValue }
    }

    /// The read request this query answers (``reading(_:)``).
    var reading: ReadRequest? {
        get { storage.reading }
        set { uniqueStorage().reading = newValue }
    }

    /// The channel whose notifications follow the rows of an event stream (``listening(to:)``).
    var channel: String? {
        get { storage.channel }
        set { uniqueStorage().channel = newValue }
    }

    /// Whether it runs read-only whatever the request's method (a call of
    /// a `STABLE` or `IMMUTABLE` function by `POST`); a GET's always does.
    var readsOnly: Bool {
        get { storage.readsOnly }
        set { uniqueStorage().readsOnly = newValue }
    }

    /// This query with its ``reading`` request applied to its statement,
    /// as it runs: the page its own, else the one the request names. A
    /// statement that would bind more parameters than PostgreSQL takes is
    /// a 400 naming the limit, before it is sent.
    func resolvingChoices() throws(HTTPError) -> Query {
        // The statement's rows as they are: nothing to apply (an event stream still follows the request's resource).
        guard let reading, !reading.readsAsIs else { return self }
        var query = reading.apply(to: self)
        guard query.arguments.count <= RequestLimits.postgreSQLParameters else {
            throw RequestLimits.exceeded(
                "postgreSQLParameters", limit: RequestLimits.postgreSQLParameters,
                detail: "The request's filters and the statement's parameters come to more than the "
                    + "\(RequestLimits.postgreSQLParameters) parameters PostgreSQL binds to one statement.")
        }
        query.page = page ?? (isList ? reading.page : nil)
        query.counted = reading.countingStatement(for: self)
        return query
    }

    /// This query with another statement (its page or choices applied):
    /// the same shape, members, and embeds unless others are given.
    func with(sql: String, arguments: SQLArguments, embeds: [Embed]? = nil) -> Query {
        var query = Query(sql, arguments, shape: shape)
        query.embeds = embeds ?? self.embeds
        query.members = members
        if let channel { query.channel = channel }
        return query
    }

    private mutating func uniqueStorage() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }

    /// A page of a list: at most `limit` rows (all when `nil`) after the first `offset`.
    struct Page: Sendable {
        let limit: Int?
        let offset: Int
    }

    private init(_ sql: String, _ arguments: SQLArguments, shape: Shape) {
        storage = Storage(sql, arguments, shape: shape)
    }

    // MARK: - Shapes

    /// Every row, as a JSON array streamed while the client reads it, in
    /// constant memory whatever the number of rows.
    ///
    /// ```swift
    /// Query.list("SELECT id, name FROM products WHERE name ILIKE :pattern ORDER BY id", ["pattern": pattern])
    /// ```
    public static func list(_ sql: String, _ arguments: SQLArguments = [:]) -> Query {
        Query(sql, arguments, shape: .list)
    }

    /// The first row as a JSON object, or `404 Not Found` with `notFound`
    /// as the problem's detail when there is none. `notFound` is only
    /// evaluated then.
    ///
    /// ```swift
    /// Query.object("SELECT id, name FROM products WHERE id = :id", ["id": id], notFound: "No product \(id).")
    /// ```
    public static func object(
        _ sql: String, _ arguments: SQLArguments = [:], notFound: @escaping @autoclosure @Sendable () -> String
    ) -> Query {
        Query(sql, arguments, shape: .object(notFound: { HTTPError(.notFound, detail: notFound()) }))
    }

    /// The first row as a JSON object, or the `notFound` error (evaluated
    /// only then) when there is none.
    ///
    /// ```swift
    /// Query.object(sql, ["id": id], notFound: HTTPError(.notFound, detail: "No product \(id).", parameter: "id"))
    /// ```
    public static func object(
        _ sql: String, _ arguments: SQLArguments = [:], notFound: @escaping @autoclosure @Sendable () -> HTTPError
    ) -> Query {
        Query(sql, arguments, shape: .object(notFound: notFound))
    }

    /// A statement that returns no rows (an `UPDATE`, a `DELETE`):
    /// `204 No Content` once it ran. For a write that answers with what it
    /// wrote, use ``transaction(_:_:returning:)`` with `RETURNING` (and
    /// ``created(at:)`` for a create: `201` with `Location`).
    ///
    /// ```swift
    /// Query.execute("DELETE FROM products WHERE id = :id", ["id": id])
    /// ```
    public static func execute(_ sql: String, _ arguments: SQLArguments = [:]) -> Query {
        Query(sql, arguments, shape: .execute)
    }

    /// Statements that write, run in order in one transaction: committed
    /// when all succeeded, rolled back at the first error (which answers
    /// through the SQLSTATE mapping: a constraint violated is a 409 or 400
    /// naming the constraint). Each statement binds the arguments its
    /// `:name` parameters name. The rows of the last one (`RETURNING ...`)
    /// answer:
    ///
    /// - none: `204 No Content`;
    /// - ``Returning/object``: the first row as a JSON object, `201
    ///   Created` for a `POST` (with `Location` when ``created(at:)`` says
    ///   where the row is found), `200 OK` otherwise;
    /// - ``Returning/list``: every row as a JSON array, `201` for a `POST`, `200` otherwise.
    ///
    /// ```swift
    /// Query.transaction([
    ///     "INSERT INTO products (name) VALUES (:name)",
    ///     "INSERT INTO prices (product_id, amount) VALUES (currval('products_id_seq'), :price) RETURNING product_id AS id",
    /// ], ["name": name, "price": price]).created(at: "/products/{id}")
    /// ```
    public static func transaction(_ statements: [String], _ arguments: SQLArguments = [:], returning: Returning = .object) -> Query {
        // A service's code misusing the API: a service file without a statement is a problem at load.
        precondition(!statements.isEmpty, "transaction(_:_:returning:) runs at least one statement")
        return Query(
            statements[statements.count - 1], arguments, shape: .write(earlier: statements.dropLast(), returning: returning, location: nil))
    }

    /// A ``TableWrite``'s statement (a `WITH` of the write, then the rows
    /// it wrote as the answer selects them).
    static func tableWrite(_ sql: String, _ arguments: SQLArguments, embeds: [Embed] = [], answer: TableWriteAnswer) -> Query {
        let query = Query(sql, arguments, shape: .tableWrite(answer))
        return embeds.isEmpty ? query : query.with(sql: sql, arguments: arguments, embeds: embeds)
    }

    /// How the rows of a ``transaction(_:_:returning:)`` answer.
    public enum Returning: Sendable {
        /// The first row, as a JSON object.
        case object
        /// Every row, as a JSON array.
        case list
    }

    /// Where the row a `POST` transaction returns can be read again: a path
    /// whose `{label}` placeholders are filled, percent-encoded, from the
    /// row's columns of those labels, sent as `Location` with the `201`.
    /// No `Location` when a placeholder's column is missing or NULL.
    ///
    /// ```swift
    /// Query.transaction(["INSERT INTO products (name) VALUES (:name) RETURNING id, name"], ["name": name])
    ///     .created(at: "/products/{id}")
    /// ```
    ///
    /// This is the one form of a create: on an `object` query
    /// or a list, it makes the query a one-statement transaction whose
    /// first row answers.
    public func created(at template: String) -> Query {
        let (earlier, returning): ([String], Returning)
        if case .write(let statements, let answer, _) = shape {
            (earlier, returning) = (statements, answer)
        } else {
            (earlier, returning) = ([], .object)
        }
        var query = Query(sql, arguments, shape: .write(earlier: earlier, returning: returning, location: template))
        query.embeds = embeds
        return query
    }

    /// One page of this list: at most `limit` rows (every row when `nil`)
    /// after skipping `offset`, in the order of the SQL's `ORDER BY`, which
    /// must not have a `LIMIT` or `OFFSET` of its own. The values come from
    /// the request's `limit` and `offset` arguments: a negative one is a 400
    /// naming it, and the response links the next and previous pages
    /// (`Link: <…?limit=10&offset=20>; rel="next"`) by those names. With
    /// `Prefer: count=exact`, the response also counts the rows of the
    /// whole list (`Content-Range: 10-19/300024`).
    ///
    /// ```swift
    /// Route(.get, "/", returns: [Product].self, Parameter<Int?>("limit"), Parameter<Int>("offset", default: 0)) { limit, offset in
    ///     Query.list("SELECT id, name FROM products ORDER BY id").paged(limit: limit, offset: offset)
    /// }
    /// ```
    public func paged(limit: Int?, offset: Int = 0) -> Query {
        // A service's code misusing the API; `@paged` on anything but a GET list is a problem at load.
        precondition(isList, "paged(limit:offset:) pages a Query.list")
        var query = self
        query.page = Page(limit: limit, offset: offset)
        return query
    }

    // MARK: - Nesting

    /// Nests the rows of `sql` in each row, as an array under `key`. Its
    /// `:name` parameters bind from the row's columns of that label, else
    /// from this query's arguments.
    ///
    /// ```swift
    /// Query.list("SELECT id AS \"productID\", name FROM products")
    ///     .attaching("prices", "SELECT amount, since FROM prices WHERE product_id = :productID")
    /// ```
    public func attaching(_ key: String, _ sql: String) -> Query {
        attaching(key, Query.list(sql))
    }

    /// Nests the rows of `child` (its SQL and its own nested subqueries) in
    /// each row, as an array under `key`: nesting as deep as needed.
    ///
    /// ```swift
    /// Query.list(departmentsSQL)
    ///     .attaching("managers", Query.list(managersSQL).attaching("titles", titlesSQL))
    /// ```
    public func attaching(_ key: String, _ child: Query) -> Query {
        var query = self
        query.embeds.append(Embed(key: key, query: child))
        return query
    }

    /// Nests each `(key, sql)` pair in turn; see ``attaching(_:_:)-(String,String)``.
    ///
    /// ```swift
    /// query.attaching(details.map { ($0.rawValue, $0.sql) })
    /// ```
    public func attaching(_ subqueries: some Sequence<(String, String)>) -> Query {
        var query = self
        for (key, sql) in subqueries { query.embeds.append(Embed(key: key, query: Query.list(sql))) }
        return query
    }

    /// Streams the rows of `list` as an array member `key` of this object,
    /// after its columns and attachments: for a member that may hold more
    /// rows than one should hold in memory (a department's employees).
    /// `list` binds its parameters from its own arguments.
    ///
    /// ```swift
    /// Query.object(departmentSQL, ["number": number], notFound: "No department \(number).")
    ///     .streaming("employees", Query.list(employeesSQL, ["number": number]))
    /// ```
    public func streaming(_ key: String, _ list: Query) -> Query {
        // A service's code misusing the API; `@stream` on anything but a GET object is a problem at load.
        precondition(list.isList, "streaming(_:_:) takes a Query.list")
        guard case .object = shape else { preconditionFailure("streaming(_:_:) adds a member to a Query.object") }
        var query = self
        query.members.append((key, list))
        return query
    }

    var isList: Bool {
        if case .list = shape { return true }
        return false
    }
}
