internal import CLibPQ
import RequestTracing

/// The span of one statement a request runs: started when the statement
/// is sent, ended with its result.
///
/// It holds the statement's prepared text (`db.statement`, with `$1`,
/// `$2`, … where values go), `db.system`, the database, the server and
/// the pool it ran on (`primary`, `replica-1`, …), the rows it returned
/// and, on failure, the SQLSTATE; never a value bound to the statement
/// nor the server's error message, which may quote one.
///
/// A span that records names its trace in the statement's text: the
/// statement is then sent as the unnamed statement, its text followed by
/// a comment in the sqlcommenter form, `/*traceparent='00-…-01'*/`, which
/// `pg_stat_activity.query` and PostgreSQL's log show while it runs. Every
/// other run executes the statement prepared by name, whose text has no
/// comment: the prepared statements stay one per SQL text and connection,
/// whatever the traces.
struct StatementSpan {
    let span: any Span
    /// The text sent instead of the prepared statement: its SQL and the comment.
    let commentedSQL: String?

    /// The span of `sql` (a prepared text) run on `connection` under `trace`.
    init(_ sql: String, trace: RequestTrace, on connection: Connection) {
        span = trace.startSpan(Self.name(of: sql), ofKind: .client)
        guard span.isRecording else {
            commentedSQL = nil
            return
        }
        var attributes = SpanAttributes()
        attributes["db.system"] = "postgresql"
        attributes["db.statement"] = sql
        if let handle = connection.handle {
            attributes["db.namespace"] = String(cString: PQdb(handle))
            let host = String(cString: PQhost(handle))
            attributes["server.address"] = host
            if !host.hasPrefix("/"), let port = Int(String(cString: PQport(handle))) { attributes["server.port"] = port }
        }
        attributes["db.sqlrest.pool"] = connection.poolName
        span.attributes = attributes
        commentedSQL = trace.traceparent(of: span).map { sql + "\n/*traceparent='" + $0 + "'*/" }
    }

    /// The span of `sql` under `connection`'s trace, if it has one.
    static func start(_ sql: String, on connection: Connection) -> StatementSpan? {
        guard let trace = connection.trace else { return nil }
        return StatementSpan(sql, trace: trace, on: connection)
    }

    /// Ends the span with the rows the statement returned, or its failure.
    func end(rows: Int?, failure: DatabaseError? = nil) {
        if span.isRecording {
            if let rows { span.attributes["db.response.returned_rows"] = rows }
            if let failure {
                span.attributes["db.response.status_code"] = failure.code.rawValue
                span.setStatus(SpanStatus(code: .error))
            }
        }
        span.end()
    }

    /// Ends the span with what `result` says.
    func end(_ result: QueryResult?) {
        guard let result else { return end(rows: nil) }
        end(rows: result.error == nil ? Int(result.rowCount) : nil, failure: result.error)
    }

    /// The statement's first word, upper-cased (`SELECT`, `WITH`), as the span's name.
    static func name(of sql: String) -> String {
        let word = sql.utf8.drop { $0 == 0x20 || $0 == 0x0a || $0 == 0x09 || $0 == 0x0d || $0 == UInt8(ascii: "(") }
            .prefix { ($0 | 0x20) >= UInt8(ascii: "a") && ($0 | 0x20) <= UInt8(ascii: "z") }
        return word.isEmpty ? "postgresql" : String(decoding: word, as: UTF8.self).uppercased()
    }
}
