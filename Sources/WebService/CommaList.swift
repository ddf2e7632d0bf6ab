/// A list of enumeration values given as repeated arguments, as
/// comma-separated values, or both: `details=titles&details=salaries` and
/// `details=titles,salaries` mean the same. Blanks around a name are ignored,
/// duplicates are dropped and the order of first appearance is kept. An
/// unknown name is a 400 that quotes it.
///
/// ```swift
/// enum ProductDetail: String, CaseIterable, ArgumentValue { case prices, stock }
///
/// Route(.get, "/?:id", Parameter<Int>("id"), Parameter<CommaList<ProductDetail>>("details")) { id, details in
///     details.contains(.prices) ? … : …
/// }
/// ```
public struct CommaList<Element>: ParameterValue, CommaSeparatedValues, RandomAccessCollection
where Element: ArgumentValue & RawRepresentable & CaseIterable & Sendable, Element.RawValue == String {
    /// The values, in the order they were first given.
    public var elements: [Element]

    /// A list of the given values.
    ///
    /// ```swift
    /// CommaList<ProductDetail>([.prices])
    /// ```
    public init(_ elements: [Element]) {
        self.elements = elements
    }

    public var startIndex: Int { elements.startIndex }
    public var endIndex: Int { elements.endIndex }
    public subscript(position: Int) -> Element { elements[position] }

    public static var valueType: ValueType { .array(Element.valueType) }
    public static var valueWhenAbsent: CommaList? { CommaList([]) }
    public var argumentTexts: [String] { elements.map(\.rawValue) }

    /// Reads every input. The names are matched as strings against the
    /// cases' raw values, read once per call: this runs unspecialised
    /// (through the `ParameterValue` witness, for any `Element`), where each
    /// generic call on `Element` costs a witness call, so none is made per
    /// item. The raw values are read in loops, not with `map` and a key path
    /// (unspecialised, a key path is instantiated at run time on every call,
    /// and `map` is a generic call of its own), and the enumeration's
    /// ``ValueType`` (its name and every raw value) is built only for the
    /// error that quotes it.
    public static func convert(_ inputs: [ArgumentInput]) throws(ArgumentConversionError) -> CommaList {
        let cases = Array(Element.allCases)
        var names: [String] = []
        names.reserveCapacity(cases.count)
        for element in cases { names.append(element.rawValue) }
        let chosen = try CommaSeparatedNames.chosen(in: inputs, names: names, type: Element.valueType)
        var elements: [Element] = []
        elements.reserveCapacity(chosen.count)
        for index in chosen { elements.append(cases[index]) }
        return CommaList(elements)
    }
}

/// A parameter type whose texts may each hold several comma-separated values.
protocol CommaSeparatedValues {}

/// Indices of chosen cases in order of first insertion, without duplicates.
/// A bit per case for the first 64 (enumerations of details are small), so
/// that ten thousand repetitions of one name cost no search.
private struct ChosenIndices {
    private(set) var order: [Int] = []
    private var bits: UInt64 = 0

    mutating func insert(_ index: Int) {
        if index < 64 {
            guard bits & (1 << index) == 0 else { return }
            bits |= 1 << index
        } else if order.contains(index) {
            return
        }
        order.append(index)
    }
}

/// Splitting an argument's text into trimmed, comma-separated names.
enum CommaSeparatedNames {
    /// The indices in `names` of the names `inputs` give (texts of
    /// comma-separated names, or JSON strings and arrays of strings), in
    /// order of first appearance, without duplicates; an unknown name is
    /// an error expecting `type` (an enumeration of `names`). What a
    /// ``CommaList`` and a runtime list of names (``RuntimeParameter``) read.
    static func chosen(
        in inputs: [ArgumentInput], names: [String], type: @autoclosure () -> ValueType
    ) throws(ArgumentConversionError) -> [Int] {
        var chosen = ChosenIndices()
        for input in inputs {
            guard case .text(let text) = input else {
                let elements: [ArgumentInput]
                if case .json(.array(let array)) = input { elements = array.map(ArgumentInput.json) } else { elements = [input] }
                for element in elements {
                    guard let text = element.scalarText, let index = names.firstIndex(of: text) else {
                        throw ArgumentConversionError(expected: type(), received: element.received)
                    }
                    chosen.insert(index)
                }
                continue
            }
            try forEachName(in: text) { (name) throws(ArgumentConversionError) in
                guard let index = names.firstIndex(where: { $0 == name }) else {
                    throw ArgumentConversionError(expected: type(), received: "\"\(name)\"")
                }
                chosen.insert(index)
            }
        }
        return chosen.order
    }

    /// Calls `body` with each comma-separated item of `text` (empty items
    /// included), trimmed of blanks: tabs and Unicode space separators,
    /// what `CharacterSet.whitespaces` holds. ASCII text, the usual case, is
    /// split and trimmed byte by byte; an item reaches `body` as a
    /// `Substring` of `text`, without a copy.
    static func forEachName<Failure: Error>(in text: String, _ body: (Substring) throws(Failure) -> Void) throws(Failure) {
        let substring = Substring(text)
        if !text.utf8.contains(where: { $0 >= 0x80 }) {
            let utf8 = substring.utf8
            var start = utf8.startIndex
            while true {
                let end = utf8[start...].firstIndex(of: UInt8(ascii: ",")) ?? utf8.endIndex
                var first = start
                var last = end
                while first < last, isASCIIBlank(utf8[first]) { first = utf8.index(after: first) }
                while last > first, isASCIIBlank(utf8[utf8.index(before: last)]) { last = utf8.index(before: last) }
                try body(substring[first..<last])
                guard end < utf8.endIndex else { return }
                start = utf8.index(after: end)
            }
        }
        for item in substring.split(separator: ",", omittingEmptySubsequences: false) {
            try body(trimmingBlanks(item))
        }
    }

    private static func isASCIIBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    /// `text` without leading and trailing blanks. Not Foundation's
    /// `trimmingCharacters(in:)`, which builds a character set on every call.
    private static func trimmingBlanks(_ text: Substring) -> Substring {
        func isBlank(_ character: Character) -> Bool {
            character.unicodeScalars.allSatisfy { $0 == "\t" || $0.properties.generalCategory == .spaceSeparator }
        }
        guard let first = text.firstIndex(where: { !isBlank($0) }), let last = text.lastIndex(where: { !isBlank($0) })
        else { return text[text.startIndex..<text.startIndex] }
        return text[first...last]
    }
}
