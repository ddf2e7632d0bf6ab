/// A route's path split into segments, literal or variable.
struct RoutePattern: Sendable {
    enum Segment: Sendable, Hashable {
        case literal(String)
        /// `?:name`
        case named(String)
        /// `?`
        case positional
    }

    let segments: [Segment]

    /// Parses `/sum`, `/?:employeeNumber/titles`, `/?`, or `/` (no segments).
    init(_ path: String) {
        segments = path.split(separator: "/").map { part in
            if part == "?" { return .positional }
            if part.hasPrefix("?:") { return .named(String(part.dropFirst(2))) }
            return .literal(String(part))
        }
    }

    /// The shape routes are grouped by: literals and variable positions.
    var shape: [String?] {
        segments.map { if case .literal(let text) = $0 { text } else { nil } }
    }

    /// Whether `path` (decoded segments) fits this pattern.
    func matches(_ path: ArraySlice<String>) -> Bool {
        guard path.count == segments.count else { return false }
        return zip(segments, path).allSatisfy { segment, value in
            if case .literal(let text) = segment { return text == value }
            return true
        }
    }

    /// Whether this pattern should win over `other` when both match: the
    /// first position where one has a literal and the other a variable
    /// decides for the literal.
    func precedes(_ other: RoutePattern) -> Bool {
        for (mine, theirs) in zip(shape, other.shape) {
            if (mine != nil) != (theirs != nil) { return mine != nil }
        }
        return false
    }

    /// Values of the variables in `path`: by name, and all in order.
    /// (A path has a few variables: a list is searched faster than a
    /// dictionary is built.)
    func variables(in path: ArraySlice<String>) -> (named: [(name: String, value: String)], positional: [String]) {
        var named: [(name: String, value: String)] = []
        var positional: [String] = []
        for (segment, value) in zip(segments, path) {
            switch segment {
            case .literal: continue
            case .named(let name): named.append((name, value)); positional.append(value)
            case .positional: positional.append(value)
            }
        }
        return (named, positional)
    }

    /// The names of the named variables.
    var variableNames: Set<String> {
        Set(segments.compactMap { if case .named(let name) = $0 { name } else { nil } })
    }
}
