import HTTPServer
import WebService

/// A read request the server cannot run as written: a problem document
/// naming the parameter at fault, with PostgREST's code for the kind of
/// problem, so that its clients (`postgrest-py`'s `APIError`) read it.
///
/// | code | status | problem |
/// | --- | --- | --- |
/// | `PGRST100` | 400 | a parameter that does not parse, past a ``ReadLimits`` limit, or a filter or order on a column that takes none |
/// | `PGRST108` | 400 | a filter, order or page on an embedded resource that `select` does not embed |
/// | `PGRST118` | 400 | an order by an embedded resource that is not to-one |
/// | `PGRST200` | 400 | no relationship by that name |
/// | `PGRST201` | 300 | several relationships by that name: a hint (`!fk` or `!column`) must choose |
/// | `42703` | 400 | no column by that name |
/// | `PGRST103` | 416 | a range past the rows there are |
/// | `PGRST116` | 406 | a singular object asked for, and not exactly one row |
/// | `PGRST107` | 406 | an `Accept` the server cannot produce |
///
/// ```swift
/// throw ReadError.malformed("select", "unexpected \")\" at character 5")
/// ```
public struct ReadError: Error, Sendable, HTTPErrorConvertible {
    public let httpError: HTTPError?

    init(_ error: HTTPError) {
        self.httpError = error
    }

    /// `parameter` does not parse: `reason` says where.
    static func malformed(_ parameter: String, _ reason: String) -> ReadError {
        ReadError(
            HTTPError(
                .badRequest, detail: "The parameter \"\(parameter)\" cannot be read: \(reason).", parameter: parameter,
                code: "PGRST100"))
    }

    /// `parameter` takes the request past a limit.
    static func tooMany(_ parameter: String, _ what: String, _ limit: Int) -> ReadError {
        ReadError(
            HTTPError(
                .badRequest, detail: "The request holds more \(what) than the limit of \(limit) (at the parameter \"\(parameter)\").",
                parameter: parameter, code: "PGRST100"))
    }

    /// `parameter` names a column `resource` does not have.
    static func unknownColumn(_ name: String, in resource: Resource, parameter: String) -> ReadError {
        let known = resource.columns.map(\.label) + resource.computedColumns.map(\.name)
        return ReadError(
            HTTPError(
                .badRequest, detail: "The column \"\(name)\" does not exist in \(resource.name) (parameter \"\(parameter)\").",
                parameter: parameter, code: "42703", hint: "Its columns: \(known.joined(separator: ", ")).",
                extensions: [("allowedValues", .strings(known))]))
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
    static func unknownRelationship(_ name: String, from resource: Resource, parameter: String) -> ReadError {
        let known = Array(Set(resource.relationships.map(\.name))).sorted()
        return ReadError(
            HTTPError(
                .badRequest,
                detail: "Could not find a relationship between \"\(resource.name)\" and \"\(name)\" (parameter \"\(parameter)\").",
                parameter: parameter, code: "PGRST200",
                hint: known.isEmpty ? "It has no relationships." : "Its relationships: \(known.joined(separator: ", ")).",
                extensions: [("allowedValues", .strings(known))]))
    }

    /// `parameter` embeds a name that several relationships of `resource` answer to.
    static func ambiguousRelationship(_ name: String, from resource: Resource, candidates: [Relationship], parameter: String)
        -> ReadError
    {
        let hints = candidates.map { $0.constraint ?? $0.columns.joined(separator: ",") }
        return ReadError(
            HTTPError(
                .multipleChoices,
                detail: "More than one relationship was found for \"\(resource.name)\" and \"\(name)\" (parameter \"\(parameter)\").",
                parameter: parameter, code: "PGRST201",
                details: hints.map { "\(name)!\($0)" }.joined(separator: ", "),
                hint: "Choose one by its foreign key or column: \(name)!\(hints[0])(*).",
                extensions: [("allowedValues", .strings(hints))]))
    }

    /// `parameter` filters, orders or pages along a path `select` does not embed.
    static func notEmbedded(_ path: [String], parameter: String) -> ReadError {
        ReadError(
            HTTPError(
                .badRequest,
                detail: "\"\(path.joined(separator: "."))\" is not an embedded resource of this request (parameter \"\(parameter)\"): "
                    + "embed it in select first.", parameter: parameter, code: "PGRST108"))
    }

    /// `parameter` is not valid for its column's type.
    static func invalidValue(_ value: String, for column: Resource.Column, parameter: String) -> ReadError {
        ReadError(
            HTTPError(
                .badRequest,
                detail: "The parameter \"\(parameter)\" compares \(column.label) (\(column.valueType.name)) with \"\(value)\", "
                    + "which is not \(column.valueType.name == "integer" ? "an" : "a") \(column.valueType.name).",
                parameter: parameter, code: "22P02"))
    }

    /// Anything else wrong with `parameter`, in `reason`.
    static func invalid(_ parameter: String, _ reason: String, code: String = "PGRST100") -> ReadError {
        ReadError(HTTPError(.badRequest, detail: reason, parameter: parameter, code: code))
    }
}
