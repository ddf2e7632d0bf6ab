/// What an argument's values must be beyond their type: a range for an
/// integer (each element's, for a list of integers) and a least number of
/// values for a list. One declaration does both jobs: the parameter refuses
/// a value outside it with a 400 naming the parameter, and `/openapi.json`
/// states it (`minimum`, `maximum`, `minItems`), so that the document never
/// promises more than the server accepts.
///
/// ```swift
/// Parameter<Int>("places", default: 0, constraints: .range(0...10))
/// Parameter<Int>("offset", default: 0, constraints: .atLeast(0))
/// Parameter<[Double]>("values", constraints: .count(atLeast: 1))   // required: an absent list has no value
/// ```
public struct ArgumentConstraints: Sendable, Equatable {
    /// The least integer accepted; `nil`: the type's least.
    public var minimum: Int?
    /// The greatest integer accepted; `nil`: the type's greatest.
    public var maximum: Int?
    /// The least number of values of a list; `nil`: none, the list may be empty.
    public var minimumCount: Int?

    public init(minimum: Int? = nil, maximum: Int? = nil, minimumCount: Int? = nil) {
        self.minimum = minimum
        self.maximum = maximum
        self.minimumCount = minimumCount
    }

    /// No constraint beyond the type.
    public static let none = ArgumentConstraints()

    /// Integers within `range`.
    public static func range(_ range: ClosedRange<Int>) -> ArgumentConstraints {
        ArgumentConstraints(minimum: range.lowerBound, maximum: range.upperBound)
    }

    /// Integers of `minimum` or more.
    public static func atLeast(_ minimum: Int) -> ArgumentConstraints {
        ArgumentConstraints(minimum: minimum)
    }

    /// Lists of at least `count` values.
    public static func count(atLeast count: Int) -> ArgumentConstraints {
        ArgumentConstraints(minimumCount: count)
    }

    /// Whether there is no constraint beyond the type.
    public var isEmpty: Bool { self == .none }

    /// Whether an absent argument breaks them: a list that needs values.
    var requiresValues: Bool { (minimumCount ?? 0) > 0 }

    /// What the range asks, after the type's name: `from 0 to 10`, `of 0 or more`.
    private var rangeRequirement: String? {
        switch (minimum, maximum) {
        case (let minimum?, let maximum?): "from \(minimum) to \(maximum)"
        case (let minimum?, nil): "of \(minimum) or more"
        case (nil, let maximum?): "of \(maximum) or less"
        case (nil, nil): nil
        }
    }

    // MARK: - Checks

    /// Refuses an integer outside the range, worded as the type's own
    /// errors are: `expects an integer from 0 to 10; received "11"`.
    public func check(_ value: Int, type: ValueType = .integer, received: @autoclosure () -> String) throws(ArgumentConversionError) {
        if let minimum, value < minimum {
            throw ArgumentConversionError(expected: type, received: received(), requirement: rangeRequirement)
        }
        if let maximum, value > maximum {
            throw ArgumentConversionError(expected: type, received: received(), requirement: rangeRequirement)
        }
    }

    /// Refuses a converted value that breaks them: read back through its
    /// ``ParameterValue/argumentTexts`` (one text per value of a list), so
    /// that any parameter type is checked the same way.
    func check<Value: ParameterValue>(_ value: Value) throws(ArgumentConversionError) {
        guard !isEmpty else { return }
        let texts = value.argumentTexts
        if let minimumCount, texts.count < minimumCount {
            throw ArgumentConversionError(
                expected: Value.valueType, received: texts.count == 1 ? "1 value" : "\(texts.count) values",
                requirement: "of at least \(minimumCount) value" + (minimumCount == 1 ? "" : "s"))
        }
        guard minimum != nil || maximum != nil else { return }
        var elementType = Value.valueType
        if case .array(let element) = elementType { elementType = element }
        for text in texts {
            guard let integer = Int(text) else { continue }
            try check(integer, type: elementType, received: "\"\(text)\"")
        }
    }

    // MARK: - Patterns

    /// A regular expression (without anchors) that matches exactly the
    /// texts `Int(_:)` reads as an integer within `range`: an optional
    /// sign, leading zeros, then the digits. The document states a range
    /// inside a text this way (a filter's `eq.VALUE`), where `minimum` and
    /// `maximum` cannot reach.
    ///
    /// ```swift
    /// ArgumentConstraints.integerPattern(0...10)   // (?:[+-]?0+|\+?0*(?:[1-9]|10))
    /// ```
    public static func integerPattern(_ range: ClosedRange<Int>) -> String {
        var alternatives: [String] = []
        if range.contains(0) { alternatives.append("[+-]?0+") }
        if range.upperBound >= 1 {
            let magnitudes = decimalPieces(from: UInt64(max(1, range.lowerBound)), to: UInt64(range.upperBound))
            alternatives.append("\\+?0*(?:" + magnitudes.joined(separator: "|") + ")")
        }
        if range.lowerBound <= -1 {
            let magnitudes = decimalPieces(from: range.upperBound.magnitudeBelowZero, to: UInt64(range.lowerBound.magnitude))
            alternatives.append("-0*(?:" + magnitudes.joined(separator: "|") + ")")
        }
        return "(?:" + alternatives.joined(separator: "|") + ")"
    }

    /// Patterns of the decimal numbers from `low` to `high` (both at least
    /// 1), without leading zeros: one piece per run of digit counts.
    private static func decimalPieces(from low: UInt64, to high: UInt64) -> [String] {
        guard low <= high else { return [] }
        var pieces: [String] = []
        let lowText = String(low)
        let highText = String(high)
        for length in lowText.count...highText.count {
            let first = length == lowText.count ? lowText : "1" + String(repeating: "0", count: length - 1)
            let last = length == highText.count ? highText : String(repeating: "9", count: length)
            pieces += sameLengthPieces(Array(first.utf8), Array(last.utf8))
        }
        return pieces
    }

    /// Patterns of the digit strings of one length from `low` to `high`.
    private static func sameLengthPieces(_ low: [UInt8], _ high: [UInt8]) -> [String] {
        guard let lowFirst = low.first, let highFirst = high.first else { return [""] }
        if low == high { return [String(decoding: low, as: UTF8.self)] }
        let lowRest = Array(low.dropFirst())
        let highRest = Array(high.dropFirst())
        let lead = { (digit: UInt8) in String(UnicodeScalar(digit)) }
        if lowFirst == highFirst { return sameLengthPieces(lowRest, highRest).map { lead(lowFirst) + $0 } }
        let zero = UInt8(ascii: "0")
        let nine = UInt8(ascii: "9")
        var pieces: [String] = []
        var from = lowFirst
        var to = highFirst
        if !lowRest.allSatisfy({ $0 == zero }) {
            pieces += sameLengthPieces(lowRest, Array(repeating: nine, count: lowRest.count)).map { lead(lowFirst) + $0 }
            from += 1
        }
        let highAllNines = highRest.allSatisfy { $0 == nine }
        if !highAllNines { to -= 1 }
        if from <= to {
            let digits = from == to ? lead(from) : "[\(lead(from))-\(lead(to))]"
            pieces.append(digits + (lowRest.isEmpty ? "" : "[0-9]{\(lowRest.count)}"))
        }
        if !highAllNines {
            pieces += sameLengthPieces(Array(repeating: zero, count: highRest.count), highRest).map { lead(highFirst) + $0 }
        }
        return pieces
    }
}

extension Int {
    /// The magnitude of the greatest negative number at most `self`: 1 for `self` at or above 0.
    fileprivate var magnitudeBelowZero: UInt64 { self >= 0 ? 1 : UInt64(magnitude) }
}
