import HTTPServer
import WebService

// MARK: - Reading a request's arguments

extension ReadSyntax {
    /// The read request `arguments` make (each argument's name and values,
    /// in order), in PostgREST's language: `select`, `order`, `limit`,
    /// `offset`, `or`, `and`, `not.or`, `not.and`, and a filter for any
    /// other name, each optionally prefixed by the path of an embedded
    /// resource (`track.order`, `track.milliseconds`). A malformed
    /// argument is a ``ReadError`` naming it; past `limits`, one naming
    /// the limit.
    init(arguments: [(name: String, values: [String])], limits: ReadLimits = .default) throws(ReadError) {
        var budget = Budget(limits: limits)
        for (name, values) in arguments {
            let parameter = name
            guard let segments = Scanner.segments(of: name) else {
                throw ReadError.malformed(
                    parameter, what: "filter", value: name, at: name.unicodeScalars.count, "a double quote is not closed")
            }
            guard let last = segments.last, !last.isEmpty else {
                throw ReadError.malformed(parameter, what: "filter", value: name, at: 1, "a name is empty")
            }
            var path = Array(segments.dropLast())
            let key = last
            // `not.or=(…)`, `track.not.and=(…)`
            var negatedLogic = false
            if let end = path.last, end == "not", key == "or" || key == "and" {
                negatedLogic = true
                path.removeLast()
            }
            if path.isEmpty, key == "select" {
                var scanner = Scanner(values.last ?? "", parameter: parameter, what: "select")
                let items = try scanner.selectList(budget: &budget, depth: 0)
                try scanner.expectEnd()
                // `select=` (nothing) is every column, as `*`.
                select = items.isEmpty ? nil : items
                continue
            }
            for value in values {
                switch key {
                case "order":
                    var scanner = Scanner(value, parameter: parameter, what: "order")
                    order[path, default: []] += try scanner.orderTerms(budget: &budget)
                case "limit", "offset":
                    guard let number = Int(value) else {
                        throw ReadError.malformed(parameter, what: key, value: value, at: 1, "expecting a number")
                    }
                    if key == "limit" {
                        guard number >= 0 else {
                            throw ReadError(
                                HTTPError(
                                    .rangeNotSatisfiable, detail: "Requested range not satisfiable", parameter: parameter,
                                    code: "PGRST103", details: "Limit should be greater than or equal to zero."))
                        }
                        limit[path] = number
                    } else {
                        // A negative offset is no offset, as PostgREST reads it.
                        offset[path] = max(0, number)
                    }
                case "or", "and":
                    try budget.takeCondition(parameter)
                    // Positions count from the name, as PostgREST's do: `or=(…)` is read as `or(…)`.
                    var scanner = Scanner(value, parameter: parameter, what: "logic tree")
                    let operands = try scanner.logicList(budget: &budget, depth: 1)
                    try scanner.expectEnd()
                    let condition: Condition = key == "or" ? .or(operands) : .and(operands)
                    conditions[path, default: []].append(negatedLogic ? .not(condition) : condition)
                default:
                    try budget.takeCondition(parameter)
                    var scanner = Scanner(value, parameter: parameter, what: "filter")
                    let column = try ReadSyntax.ColumnPath(parsing: key, parameter: parameter)
                    let filter = try scanner.filter(column: column, budget: &budget, terminators: [])
                    try scanner.expectEnd()
                    conditions[path, default: []].append(.test(filter))
                }
            }
        }
    }
}

extension ReadSyntax.ColumnPath {
    /// A filter's column as its argument's name writes it: the name as
    /// it is, or with a JSON path when it has an arrow (`data->>a`).
    init(parsing name: String, parameter: String) throws(ReadError) {
        guard name.contains("->") else {
            self.init(name: name)
            return
        }
        var scanner = Scanner(name, parameter: parameter)
        self = try scanner.columnPath(ending: [])
        try scanner.expectEnd()
    }
}

/// Counts what a request holds as it is read, against ``ReadLimits``.
struct Budget {
    let limits: ReadLimits
    var conditions = 0
    var items = 0
    var embeds = 0

    mutating func takeCondition(_ parameter: String) throws(ReadError) {
        conditions += 1
        if conditions > limits.conditions {
            throw ReadError.tooMany(parameter, "filters and conditions", limits.conditions, name: "filters")
        }
    }

    mutating func takeItem(_ parameter: String) throws(ReadError) {
        items += 1
        if items > limits.items { throw ReadError.tooMany(parameter, "items of select and order", limits.items, name: "items") }
    }

    mutating func takeEmbed(_ parameter: String) throws(ReadError) {
        embeds += 1
        if embeds > limits.embeds { throw ReadError.tooMany(parameter, "embedded resources", limits.embeds, name: "embeds") }
    }

    func checkDepth(_ depth: Int, _ parameter: String) throws(ReadError) {
        if depth > limits.depth { throw ReadError.tooMany(parameter, "levels of nesting", limits.depth, name: "depth") }
    }
}

// MARK: - The scanner

/// One argument's text, read by Unicode scalars (a combining mark after a
/// delimiter must not hide it: PostgREST reads bytes), left to right, once.
struct Scanner {
    private let scalars: [Unicode.Scalar]
    private var position = 0
    let parameter: String
    /// What the text is, for messages: `select`, `order`, `filter`, `logic tree`.
    let what: String
    private let text: String

    init(_ text: String, parameter: String, what: String = "filter") {
        scalars = Array(text.unicodeScalars)
        self.parameter = parameter
        self.what = what
        self.text = text
    }

    /// The text does not parse: `reason`, at the current position.
    func failure(_ reason: String) -> ReadError {
        ReadError.malformed(parameter, what: what, value: text, at: min(position, scalars.count) + 1, reason)
    }

    private var isAtEnd: Bool { position >= scalars.count }
    private var current: Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }

    private func peek(_ text: String) -> Bool {
        var index = position
        for scalar in text.unicodeScalars {
            guard index < scalars.count, scalars[index] == scalar else { return false }
            index += 1
        }
        return true
    }

    private mutating func take(_ text: String) -> Bool {
        guard peek(text) else { return false }
        position += text.unicodeScalars.count
        return true
    }

    private mutating func skipSpaces() {
        while let scalar = current, scalar == " " { position += 1 }
    }

    func expectEnd() throws(ReadError) {
        guard isAtEnd else { throw unexpected() }
    }

    private func unexpected() -> ReadError {
        guard let scalar = current else { return failure("unexpected end of input") }
        return failure("unexpected \"\(scalar)\"")
    }

    /// The segments of a parameter's name, split at dots outside double quotes; `nil` for an unclosed quote.
    static func segments(of name: String) -> [String]? {
        var segments: [String] = []
        var current = String.UnicodeScalarView()
        var quoted = false
        var iterator = name.unicodeScalars.makeIterator()
        while let scalar = iterator.next() {
            if quoted {
                if scalar == "\\", let escaped = iterator.next() {
                    current.append(escaped)
                } else if scalar == "\"" {
                    quoted = false
                } else {
                    current.append(scalar)
                }
                continue
            }
            switch scalar {
            case "\"": quoted = true
            case ".":
                segments.append(String(current))
                current = String.UnicodeScalarView()
            default: current.append(scalar)
            }
        }
        if quoted { return nil }
        segments.append(String(current))
        return segments
    }

    // MARK: - Names

    /// A name: double-quoted (`\` escapes the next character), or up to a
    /// delimiter (`,`, `.`, `:`, `(`, `)`, `!`, `->`, or one of `ending`);
    /// surrounding spaces dropped.
    mutating func name(ending extra: Set<Unicode.Scalar> = []) throws(ReadError) -> String {
        skipSpaces()
        if current == "\"" {
            position += 1
            var text = String.UnicodeScalarView()
            while let scalar = current {
                position += 1
                if scalar == "\\", let escaped = current {
                    position += 1
                    text.append(escaped)
                } else if scalar == "\"" {
                    skipSpaces()
                    return String(text)
                } else {
                    text.append(scalar)
                }
            }
            throw failure("a double quote is not closed")
        }
        var text = String.UnicodeScalarView()
        while let scalar = current {
            if scalar == "," || scalar == "." || scalar == ":" || scalar == "(" || scalar == ")" || scalar == "!"
                || extra.contains(scalar) || peek("->")
            {
                break
            }
            text.append(scalar)
            position += 1
        }
        let name = String(text).withoutSurroundingSpaces()
        guard !name.isEmpty else { throw unexpected() }
        return name
    }

    /// A column and its JSON path: `data->a->>b`, `tags->0`.
    mutating func columnPath(ending extra: Set<Unicode.Scalar>) throws(ReadError) -> ReadSyntax.ColumnPath {
        var path = ReadSyntax.ColumnPath(name: try name(ending: extra))
        while take("->") {
            let asText = take(">")
            let key = try name(ending: extra)
            if let index = Int(key) {
                path.json.append(ReadSyntax.JSONStep(asText: asText, key: .index(index)))
            } else {
                path.json.append(ReadSyntax.JSONStep(asText: asText, key: .name(key)))
            }
        }
        return path
    }

    // MARK: - select

    /// The items of a `select` list up to its end or a `)`.
    mutating func selectList(budget: inout Budget, depth: Int) throws(ReadError) -> [ReadSyntax.SelectItem] {
        try budget.checkDepth(depth, parameter)
        var items: [ReadSyntax.SelectItem] = []
        skipSpaces()
        if isAtEnd || current == ")" { return items }
        while true {
            try budget.takeItem(parameter)
            items.append(try selectItem(budget: &budget, depth: depth))
            skipSpaces()
            guard take(",") else { break }
        }
        return items
    }

    private mutating func selectItem(budget: inout Budget, depth: Int) throws(ReadError) -> ReadSyntax.SelectItem {
        skipSpaces()
        if take("*") { return .star }
        if take("...") {
            var embed = try embedBody(name: try name(), budget: &budget, depth: depth)
            embed.isSpread = true
            return .embed(embed)
        }
        var alias: String?
        var first = try name()
        if current == ":", !peek("::") {
            position += 1
            alias = first
            skipSpaces()
            if take("...") {
                throw failure("a spread embed takes no alias")
            }
            first = try name()
        }
        if current == "!" || current == "(" {
            var embed = try embedBody(name: first, budget: &budget, depth: depth)
            embed.alias = alias
            return .embed(embed)
        }
        var path = ReadSyntax.ColumnPath(name: first)
        while take("->") {
            let asText = take(">")
            let key = try name()
            path.json.append(ReadSyntax.JSONStep(asText: asText, key: Int(key).map { .index($0) } ?? .name(key)))
        }
        var cast: String?
        if take("::") {
            cast = try name()
        }
        return .field(ReadSyntax.Field(alias: alias, column: path, cast: cast))
    }

    private mutating func embedBody(name: String, budget: inout Budget, depth: Int) throws(ReadError) -> ReadSyntax.Embed {
        try budget.takeEmbed(parameter)
        var embed = ReadSyntax.Embed(name: name)
        while take("!") {
            let hint = try self.name()
            switch hint {
            case "inner": embed.isInner = true
            case "left": embed.isInner = false
            default: embed.hints.append(hint)
            }
        }
        guard take("(") else {
            throw failure("the embedded resource \"\(name)\" needs its columns in parentheses: \(name)(*)")
        }
        embed.select = try selectList(budget: &budget, depth: depth + 1)
        skipSpaces()
        guard take(")") else { throw unexpected() }
        return embed
    }

    // MARK: - Filters

    /// `[not.]operator[(modifier)].operand` for `column`; the operand ends
    /// at the end of the text, or, in a logic list, at one of `terminators`
    /// outside parentheses, braces and quotes.
    mutating func filter(
        column: ReadSyntax.ColumnPath, budget: inout Budget, terminators: Set<Unicode.Scalar>
    ) throws(ReadError) -> ReadSyntax.Filter {
        let isNegated = take("not.")
        let start = position
        var operatorName = String.UnicodeScalarView()
        while let scalar = current, scalar != ".", scalar != "(" {
            operatorName.append(scalar)
            position += 1
        }
        guard let op = ReadSyntax.Operator(rawValue: String(operatorName)) else {
            position = start
            let known = ReadSyntax.Operator.allCases.map(\.rawValue).joined(separator: ", ")
            throw failure("unexpected \"\(String(operatorName))\" expecting \"not\" or operator (\(known))")
        }
        var quantifier: ReadSyntax.Quantifier?
        var language: String?
        if take("(") {
            var modifier = String.UnicodeScalarView()
            while let scalar = current, scalar != ")" {
                modifier.append(scalar)
                position += 1
            }
            guard take(")") else { throw failure("the operator's parenthesis is not closed") }
            if op.takesQuantifier, let parsed = ReadSyntax.Quantifier(rawValue: String(modifier)) {
                quantifier = parsed
            } else if op.isFullText, !modifier.isEmpty {
                language = String(modifier)
            } else {
                throw failure("\(op.rawValue) does not take (\(String(modifier)))")
            }
        }
        guard take(".") else {
            throw failure("\(op.rawValue) needs a value after a dot: \(op.rawValue).VALUE")
        }
        let operand: ReadSyntax.Operand
        switch op {
        case .in:
            operand = .list(try list(open: "(", close: ")", budget: budget))
        case .is:
            let text = rawOperand(terminators: terminators).lowercased()
            guard let truth = ReadSyntax.Truth(rawValue: text) else {
                throw failure("is takes null, not_null, true, false or unknown; received \"\(text)\"")
            }
            operand = .truth(truth)
        default:
            if quantifier != nil {
                operand = .list(try list(open: "{", close: "}", budget: budget))
            } else {
                operand = .value(rawOperand(terminators: terminators))
            }
        }
        return ReadSyntax.Filter(
            column: column, isNegated: isNegated, operator: op, quantifier: quantifier, language: language, operand: operand)
    }

    /// The operand's text up to one of `terminators` outside `()`, `{}`,
    /// `[]` and double quotes (the whole rest without terminators).
    private mutating func rawOperand(terminators: Set<Unicode.Scalar>) -> String {
        var text = String.UnicodeScalarView()
        var depth = 0
        var quoted = false
        while let scalar = current {
            if quoted {
                if scalar == "\\", position + 1 < scalars.count {
                    text.append(scalar)
                    position += 1
                    text.append(scalars[position])
                    position += 1
                    continue
                }
                if scalar == "\"" { quoted = false }
            } else if !terminators.isEmpty {
                if scalar == "\"" {
                    quoted = true
                } else if scalar == "(" || scalar == "{" || scalar == "[" {
                    depth += 1
                } else if (scalar == ")" || scalar == "}" || scalar == "]") && depth > 0 {
                    depth -= 1
                } else if depth == 0, terminators.contains(scalar) {
                    break
                }
            }
            text.append(scalar)
            position += 1
        }
        // Inside a logic list, a quoted value stands for its text.
        if !terminators.isEmpty, text.first == "\"", text.last == "\"", text.count >= 2 {
            return Self.unquoted(text)
        }
        return String(text)
    }

    private static func unquoted(_ text: String.UnicodeScalarView) -> String {
        var result = String.UnicodeScalarView()
        var iterator = text.dropFirst().dropLast().makeIterator()
        while let scalar = iterator.next() {
            if scalar == "\\", let next = iterator.next() { result.append(next) } else { result.append(scalar) }
        }
        return String(result)
    }

    /// The values of `(a,b,"c,d")` or `{a,b}`: double quotes around a value
    /// holding a delimiter, `\` escaping the next character inside them.
    private mutating func list(open: Unicode.Scalar, close: Unicode.Scalar, budget: Budget) throws(ReadError) -> [String] {
        guard current == open else {
            throw failure("the list must be written \(open)A,B,\"C,D\"\(close)")
        }
        position += 1
        var values: [String] = []
        var value = String.UnicodeScalarView()
        var wasQuoted = false
        var quoted = false
        while let scalar = current {
            position += 1
            if quoted {
                if scalar == "\\", let escaped = current {
                    position += 1
                    value.append(escaped)
                } else if scalar == "\"" {
                    quoted = false
                } else {
                    value.append(scalar)
                }
                continue
            }
            if scalar == "\"", value.isEmpty, !wasQuoted {
                quoted = true
                wasQuoted = true
            } else if scalar == "," || scalar == close {
                // `()` and `(   )`: no values.
                if scalar == close, values.isEmpty, !wasQuoted, String(value).withoutSurroundingSpaces().isEmpty {
                    return []
                }
                values.append(wasQuoted ? String(value) : String(value).withoutSurroundingSpaces())
                if values.count > budget.limits.listValues {
                    throw ReadError.tooMany(parameter, "values in one list", budget.limits.listValues, name: "listItems")
                }
                value = String.UnicodeScalarView()
                wasQuoted = false
                if scalar == close { return values }
            } else {
                value.append(scalar)
            }
        }
        throw failure("the list is not closed with \(close)")
    }

    // MARK: - Logic

    /// The operands of `(cond,cond,…)`, after `or=` or `and=`.
    mutating func logicList(budget: inout Budget, depth: Int) throws(ReadError) -> [ReadSyntax.Condition] {
        try budget.checkDepth(depth, parameter)
        skipSpaces()
        guard take("(") else {
            throw failure("a logic operator takes its conditions in parentheses: (a.eq.1,b.gt.2)")
        }
        var operands: [ReadSyntax.Condition] = []
        while true {
            skipSpaces()
            operands.append(try logicOperand(budget: &budget, depth: depth))
            skipSpaces()
            if take(")") { return operands }
            guard take(",") else { throw unexpected() }
        }
    }

    private mutating func logicOperand(budget: inout Budget, depth: Int) throws(ReadError) -> ReadSyntax.Condition {
        try budget.takeCondition(parameter)
        let negated = isLogic(at: position + 4) && peek("not.")
        if negated { position += 4 }
        if isLogic(at: position), take("and") {
            let inner = ReadSyntax.Condition.and(try logicList(budget: &budget, depth: depth + 1))
            return negated ? .not(inner) : inner
        }
        if isLogic(at: position), take("or") {
            let inner = ReadSyntax.Condition.or(try logicList(budget: &budget, depth: depth + 1))
            return negated ? .not(inner) : inner
        }
        // `column[->path].[not.]operator…`: the column ends at the dot before an operator.
        let column = try columnPath(ending: [])
        guard take(".") else { throw failure("a condition is written column.operator.value") }
        return .test(try filter(column: column, budget: &budget, terminators: [",", ")"]))
    }

    /// Whether `and` or `or` at `index` opens a nested logic list (its
    /// parenthesis after spaces), rather than begin a column's name (`android.eq.1`).
    private func isLogic(at index: Int) -> Bool {
        var cursor = index
        for word in ["and", "or"] {
            cursor = index
            var matches = true
            for scalar in word.unicodeScalars {
                guard cursor < scalars.count, scalars[cursor] == scalar else {
                    matches = false
                    break
                }
                cursor += 1
            }
            guard matches else { continue }
            while cursor < scalars.count, scalars[cursor] == " " { cursor += 1 }
            if cursor < scalars.count, scalars[cursor] == "(" { return true }
        }
        return false
    }

    // MARK: - order

    /// The keys of one `order` argument.
    mutating func orderTerms(budget: inout Budget) throws(ReadError) -> [ReadSyntax.OrderTerm] {
        var terms: [ReadSyntax.OrderTerm] = []
        while true {
            try budget.takeItem(parameter)
            var column = try columnPath(ending: [])
            var embed: String?
            if take("(") {
                // `album(title)`: a column of an embedded to-one resource.
                guard column.json.isEmpty else { throw unexpected() }
                embed = column.name
                column = try columnPath(ending: [])
                guard take(")") else { throw unexpected() }
            }
            var term = ReadSyntax.OrderTerm(column: column, embed: embed)
            while take(".") {
                let word = try name()
                switch word {
                case "asc": term.isDescending = false
                case "desc": term.isDescending = true
                case "nullsfirst": term.nullsFirst = true
                case "nullslast": term.nullsFirst = false
                default:
                    throw failure("\"\(word)\" is not an order: asc, desc, nullsfirst or nullslast")
                }
            }
            terms.append(term)
            guard take(",") else { break }
        }
        try expectEnd()
        return terms
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces.
    func withoutSurroundingSpaces() -> String {
        var slice = Substring(self)
        while slice.first == " " { slice.removeFirst() }
        while slice.last == " " { slice.removeLast() }
        return String(slice)
    }
}
