import HTTPServer
import WebService

/// A read request the server cannot run as written: a problem document
/// naming the parameter at fault, with PostgREST's code and message for
/// the kind of problem, so that its clients (`postgrest-py`'s `APIError`)
/// read it as PostgREST's.
///
/// | code | status | problem |
/// | --- | --- | --- |
/// | `PGRST100` | 400 | a parameter that does not parse, past a ``ReadLimits`` limit, or a filter or order on a column that takes none |
/// | `PGRST103` | 416 | a range past the rows counted, a negative `limit`, a `Range` that ends before it begins |
/// | `PGRST107` | 406 | an `Accept` the server cannot produce |
/// | `PGRST108` | 400 | a filter, order or page on an embedded resource that `select` does not embed |
/// | `PGRST116` | 406 | a singular object asked for, and not exactly one row |
/// | `PGRST118` | 400 | an order by an embedded resource that is not to-one |
/// | `PGRST120` | 400 | an embedded resource filtered otherwise than by `is.null` |
/// | `PGRST123` | 400 | an aggregate function (not allowed) |
/// | `PGRST200` | 400 | no relationship by that name |
/// | `PGRST201` | 300 | several relationships by that name: a hint (`!fk` or `!column`) must choose |
/// | `42703` | 400 | no column by that name |
///
/// ```swift
/// throw ReadError.malformed("order", what: "order", value: "id.asc.nullslasttt", at: 17, "unexpected \"t\"")
/// ```
public struct ReadError: Error, Sendable, HTTPErrorConvertible {
    public let httpError: HTTPError?

    init(_ error: HTTPError) {
        self.httpError = error
    }

    /// `parameter`'s `value` does not parse as a `what` (`select`, `order`,
    /// `filter`, `logic tree`): `reason` says why, at 1-based `column`.
    static func malformed(_ parameter: String, what: String, value: String, at column: Int, _ reason: String) -> ReadError {
        ReadError(
            HTTPError(
                .badRequest, detail: "\"failed to parse \(what) (\(value))\" (line 1, column \(column))", parameter: parameter,
                code: "PGRST100", details: .string(reason)))
    }

    /// `parameter` takes the request past a limit.
    /// `parameter` takes the request past `limit`, named `name` in the
    /// problem's `limit` member as ``RequestLimits`` names its own.
    static func tooMany(_ parameter: String, _ what: String, _ limit: Int, name: String) -> ReadError {
        ReadError(
            HTTPError(
                .badRequest, detail: "The request holds more \(what) than the limit of \(limit) (at the parameter \"\(parameter)\").",
                parameter: parameter, code: "PGRST100", extensions: [("limit", .string(name)), ("maximum", .integer(limit))]))
    }

    /// `parameter` names a column `resource` does not have.
    static func unknownColumn(_ name: String, in resource: Resource, parameter: String) -> ReadError {
        let known = resource.columns.map(\.label) + resource.computedColumns.map(\.name)
        return ReadError(
            HTTPError(
                .badRequest, detail: "column \(resource.name).\(name) does not exist", parameter: parameter, code: "42703",
                hint: "Its columns: \(known.joined(separator: ", ")).", extensions: [("allowedValues", .strings(known))]))
    }

    /// `parameter` filters on (`filtering`) or orders by a column of `resource` that may not be.
    static func notChosen(_ column: Resource.Column, in resource: Resource, filtering: Bool, parameter: String) -> ReadError {
        let allowed = resource.columns.filter { filtering ? $0.isFilterable : $0.isOrderable }.map(\.label)
        let what = filtering ? "filtered on" : "ordered by"
        return ReadError(
            HTTPError(
                .badRequest,
                detail: "The column \"\(column.label)\" of \(resource.name) cannot be \(what) (parameter \"\(parameter)\").",
                parameter: parameter, code: "PGRST100",
                hint: allowed.isEmpty ? "None of its columns can be." : "Its columns that can: \(allowed.joined(separator: ", ")).",
                extensions: [("allowedValues", .strings(allowed))]))
    }

    /// `parameter` embeds a name `resource` has no relationship for.
    static func unknownRelationship(_ name: String, hints: [String], from resource: Resource, parameter: String) -> ReadError {
        let known = Array(Set(resource.relationships.map(\.name))).sorted()
        let schema = resource.schema.map { " in the schema '\($0)'" } ?? ""
        let hint = hints.first.map { " using the hint '\($0)'" } ?? ""
        return ReadError(
            HTTPError(
                .badRequest, detail: "Could not find a relationship between '\(resource.name)' and '\(name)' in the schema cache",
                parameter: parameter, code: "PGRST200",
                details: .string(
                    "Searched for a foreign key relationship between '\(resource.name)' and '\(name)'\(hint)\(schema), but no matches were found."
                ),
                hint: known.isEmpty ? nil : "Its relationships: \(known.joined(separator: ", ")).",
                extensions: [("allowedValues", .strings(known))]))
    }

    /// `parameter` embeds a name that several relationships of `resource` answer to.
    static func ambiguousRelationship(_ name: String, from resource: Resource, candidates: [Relationship], parameter: String)
        -> ReadError
    {
        let choices = candidates.map { "'\(name)!\($0.hintName)'" }.joined(separator: ", ")
        let details: [ProblemValue] = candidates.map { relationship in
            .object([
                ("cardinality", .string(relationship.cardinalityName)),
                ("embedding", .string("\(resource.name) with \(name)")),
                ("relationship", .string(relationship.summary ?? relationship.hintName)),
            ])
        }
        return ReadError(
            HTTPError(
                .multipleChoices,
                detail: "Could not embed because more than one relationship was found for '\(resource.name)' and '\(name)'",
                parameter: parameter, code: "PGRST201", details: .array(details),
                hint: "Try changing '\(name)' to one of the following: \(choices). Find the desired relationship in the 'details' key.",
                extensions: [("allowedValues", .strings(candidates.map { "\(name)!\($0.hintName)" }))]))
    }

    /// `parameter` filters, orders or pages along a path `select` does not embed.
    static func notEmbedded(_ path: [String], parameter: String) -> ReadError {
        let name = path.last ?? ""
        return ReadError(
            HTTPError(
                .badRequest, detail: "'\(name)' is not an embedded resource in this request", parameter: parameter, code: "PGRST108",
                hint: "Verify that '\(name)' is included in the 'select' query parameter."))
    }

    /// `parameter` orders by a column of `embed`, which is not to-one from `resource`.
    static func relatedOrder(_ embed: String, from resource: Resource, parameter: String) -> ReadError {
        ReadError(
            HTTPError(
                .badRequest, detail: "A related order on '\(embed)' is not possible", parameter: parameter, code: "PGRST118",
                details: .string("'\(resource.name)' and '\(embed)' do not form a many-to-one or one-to-one relationship")))
    }

    /// `parameter` is not valid for its column's type.
    static func invalidValue(_ value: String, for column: Resource.Column, parameter: String) -> ReadError {
        let type = column.valueType.name
        return ReadError(
            HTTPError(
                .badRequest,
                detail: "The parameter \"\(parameter)\" compares \(column.label) (\(type)) with \"\(value)\", "
                    + "which is not \(type == "integer" ? "an" : "a") \(type).", parameter: parameter, code: "22P02"))
    }

    /// Anything else wrong with `parameter`, in `reason`.
    static func invalid(_ parameter: String, _ reason: String, code: String = "PGRST100", details: ProblemValue? = nil) -> ReadError {
        ReadError(HTTPError(.badRequest, detail: reason, parameter: parameter, code: code, details: details))
    }
}

extension Relationship {
    /// What a hint names to choose this relationship: its foreign key, else
    /// its junction table, else its column.
    var hintName: String {
        if case .junction(let table, _, _) = link, let name = table.split(separator: ".").last {
            return String(name.dropFirst().dropLast())
        }
        return constraint ?? columns.first ?? name
    }

    /// `many-to-one`, `one-to-many`, `one-to-one` or `many-to-many`, as PostgREST names them.
    var cardinalityName: String {
        if let kind { return kind }
        if case .junction = link { return "many-to-many" }
        return cardinality == .one ? "many-to-one" : "one-to-many"
    }
}
