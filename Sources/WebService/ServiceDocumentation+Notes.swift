// MARK: - What every page and every list says once

/// A remark of `?api` about an operation or a service (how lists page,
/// CSV, the errors), with an example request when one shows it.
struct DocumentationNote: Sendable {
    /// The text, with `code` between backticks.
    let text: String
    /// A `curl` command line on the page's host, or `nil`.
    let example: String?
}

extension DocumentationNote: Encodable {
    private enum CodingKeys: String, CodingKey { case text, example }
}

extension OperationDocumentation {
    /// How a filter is written, said once per operation that takes filters
    /// (each filter parameter names its column and the column's type).
    public static let filterSyntax =
        "A filter is `COLUMN=OPERATOR.VALUE`, as PostgREST takes it, for a column listed below: `eq`, `neq`, `gt`, `gte`, "
        + "`lt` and `lte` compare with the VALUE, read as the column's type; `like` and `ilike` (case-insensitive) match the "
        + "column as text against a pattern where `*` matches any run of characters; `in.(A,B,\"C,D\")` matches any of the "
        + "values (double quotes around one that holds a comma); `is.null`, and `is.true`, `is.false` and `is.unknown` on a "
        + "boolean, test the value itself. `not.` before any of them negates it (`not.eq.VALUE`). Several filters, the same "
        + "column repeated too, must all hold."

    /// What a list operation's page says about its answer besides the rows:
    /// paging (`Link`, `Content-Range`) and CSV, each with an example request
    /// built on `example`, and event streams (whose request never ends, so
    /// no example a reader runs and waits for).
    var notes: [DocumentationNote] {
        guard isRunnableList, method == "GET", example.hasPrefix("curl '") else { return [] }
        let target = String(example.dropFirst("curl ".count))
        let names = Set(parameters.map(\.name))
        var notes: [DocumentationNote] = []
        if names.contains("limit"), names.contains("offset") {
            notes.append(
                DocumentationNote(
                    text: "Paging: `limit` and `offset` choose a page, and the answer's `Link` header links the next and the "
                        + "previous one (`rel=\"next\"`, `rel=\"prev\"`). With `Prefer: count=exact`, `Content-Range` tells which "
                        + "rows these are and how many there are in all (`0-9/1200`: the first ten of 1200); `-i` shows the headers.",
                    example: "curl -i -H 'Prefer: count=exact' " + target))
        } else {
            notes.append(
                DocumentationNote(
                    text: "With `Prefer: count=exact`, the answer's `Content-Range` header tells how many rows there are "
                        + "(`0-8/9`); `-i` shows the headers.",
                    example: "curl -i -H 'Prefer: count=exact' " + target))
        }
        notes.append(
            DocumentationNote(
                text: "CSV: with `Accept: text/csv`, the rows come as CSV (RFC 4180), a line of column names first "
                    + "(a request for nested details cannot be CSV: 406).",
                example: "curl -H 'Accept: text/csv' " + target))
        notes.append(
            DocumentationNote(
                text: "Live: with `Accept: text/event-stream`, the rows come as Server-Sent Events (`snapshot` pages, then "
                    + "`ready`), followed by `insert`, `update` and `delete` for each committed change to them, as long as the "
                    + "connection stays open; `Last-Event-ID` resumes where it left off. A list whose rows have no known key "
                    + "answers 406, a page (`limit`, `offset`) 400.",
                example: nil))
        return notes
    }
}

extension ServiceDocumentation {
    /// What every page says about errors.
    static let errorNote = DocumentationNote(
        text: "Errors are RFC 9457 problem documents (`application/problem+json`): `status`, `title`, `detail`, "
            + "`parameter` naming the argument at fault, and `requestId`, the request's id as the server's log gives it. "
            + "A client that asks for `Accept: text/plain` gets the `detail` alone, as plain text, with the same status.",
        example: nil)
}
