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
    /// Where the variables are among the segments, in order, with the
    /// names of the named ones (precomputed: they are looked up per request).
    private let variables: [(name: String?, index: Int)]

    /// Parses `/sum`, `/?:employeeNumber/titles`, `/?`, or `/` (no segments).
    init(_ path: String) {
        self.init(
            segments: path.split(separator: "/").map { part in
                if part == "?" { return .positional }
                if part.hasPrefix("?:") { return .named(String(part.dropFirst(2))) }
                return .literal(String(part))
            })
    }

    private init(segments: [Segment]) {
        self.segments = segments
        variables = segments.indices.compactMap { index in
            switch segments[index] {
            case .literal: nil
            case .named(let name): (name, index)
            case .positional: (nil, index)
            }
        }
    }

    /// The pattern without its last segment (`/items` for `/items/?:id`).
    func droppingLast() -> RoutePattern {
        RoutePattern(segments: Array(segments.dropLast()))
    }

    /// The pattern as routes write it, below the service: `items/?:id`, or
    /// the empty string for the service's own path.
    var text: String {
        segments.map { segment in
            switch segment {
            case .literal(let text): text
            case .named(let name): "?:" + name
            case .positional: "?"
            }
        }.joined(separator: "/")
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

    /// The value of the named variable `?:name` in `path`, which fits the
    /// pattern (the last one, should the name appear twice), or `nil`.
    ///
    /// Values are read from the request's own path segments when a
    /// handler asks for them, so that routing allocates nothing for them.
    func value(named name: String, in path: ArraySlice<String>) -> String? {
        for variable in variables.reversed() where variable.name == name {
            return path[path.startIndex + variable.index]
        }
        return nil
    }

    /// The value of the variable at `index` among all of the pattern's
    /// variables, named or not, in `path` (which fits the pattern); `nil`
    /// past the last one.
    func value(at index: Int, in path: ArraySlice<String>) -> String? {
        index < variables.count ? path[path.startIndex + variables[index].index] : nil
    }

    /// The names of the named variables.
    var variableNames: Set<String> {
        Set(segments.compactMap { if case .named(let name) = $0 { name } else { nil } })
    }
}
