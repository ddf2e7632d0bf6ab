import WebService

/// A list of enumeration values given as repeated arguments, as
/// comma-separated values, or both: `details=titles&details=salaries` and
/// `details=titles,salaries` mean the same. Duplicates are dropped; order is
/// kept.
///
/// ```swift
/// Parameter<DetailList<EmployeeDetail>>("details")
/// ```
public struct DetailList<Element>: ParameterValue
where Element: ArgumentValue & RawRepresentable & CaseIterable & Hashable & Sendable, Element.RawValue == String {
    public var elements: [Element]

    public init(_ elements: [Element]) {
        self.elements = elements
    }

    public func contains(_ element: Element) -> Bool {
        elements.contains(element)
    }

    public static var valueType: ValueType { .array(Element.valueType) }
    public static var valueWhenAbsent: DetailList? { DetailList([]) }

    // Called through the `ParameterValue` witness, unspecialised, where
    // every generic call on `Element` costs (metadata look-ups, witness
    // calls): half the time of reading `details` went there. The two lists
    // this module declares get specialised copies, which the generic entry
    // point jumps to.
    @_specialize(where Element == EmployeeDetail)
    @_specialize(where Element == DepartmentDetail)
    public static func convert(_ inputs: [ArgumentInput]) throws(ArgumentConversionError) -> DetailList {
        // ASCII names are matched as bytes against the cases' raw values.
        let cases = Array(Element.allCases)
        var elements: [Element] = []
        // At most `allCases.count` distinct elements: a bit per case (the
        // first 64) beats a Set.
        var addedCases: UInt64 = 0
        func add(caseAt index: Int) {
            if index < 64 {
                guard addedCases & (1 << index) == 0 else { return }
                addedCases |= 1 << index
            } else if elements.contains(cases[index]) {
                return
            }
            elements.append(cases[index])
        }
        func add(_ element: Element) {
            if let index = cases.firstIndex(of: element) { add(caseAt: index) }
        }
        for input in inputs {
            guard case .text(var text) = input else {
                for element in try [Element].convert([input]) { add(element) }
                continue
            }
            var failure: ArgumentConversionError?
            let isASCII = text.withUTF8 { utf8 in
                guard !utf8.contains(where: { $0 >= 0x80 }) else { return false }
                Self.forEachASCIIItem(in: utf8) { item in
                    if let index = cases.firstIndex(where: { $0.rawValue.utf8.elementsEqual(item) }) {
                        add(caseAt: index)
                        return true
                    }
                    // Not a raw value byte for byte: `String` equality has the last word.
                    let name = String(decoding: item, as: UTF8.self)
                    guard let element = Element(rawValue: name) else {
                        failure = ArgumentConversionError(expected: Element.valueType, received: "\"\(name)\"")
                        return false
                    }
                    add(element)
                    return true
                }
                return true
            }
            if let failure { throw failure }
            if isASCII { continue }
            for item in text.split(separator: ",", omittingEmptySubsequences: false) {
                let name = Self.trimmingBlanks(item)
                guard let element = Element(rawValue: name) else {
                    throw ArgumentConversionError(expected: Element.valueType, received: "\"\(name)\"")
                }
                add(element)
            }
        }
        return DetailList(elements)
    }

    /// Calls `body` with each comma-separated item of ASCII `text` (empty
    /// items included), without leading and trailing spaces and tabs, until
    /// `body` returns `false`.
    private static func forEachASCIIItem(in text: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Bool) {
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var start = 0
        while true {
            var end = start
            while end < text.count, text[end] != UInt8(ascii: ",") { end += 1 }
            var first = start
            var last = end
            while first < last, isBlank(text[first]) { first += 1 }
            while last > first, isBlank(text[last - 1]) { last -= 1 }
            guard body(UnsafeBufferPointer(rebasing: text[first..<last])), end < text.count else { return }
            start = end + 1
        }
    }

    /// `text` without leading and trailing blanks (tabs and Unicode space
    /// separators, what `CharacterSet.whitespaces` holds). Not Foundation's
    /// `trimmingCharacters(in:)`, which builds a character set on every call:
    /// with it, reading `details` took 6% of the server's CPU time under
    /// `GET /employees/{n}?details=titles&details=salaries`, 3.4% without (perf).
    /// ASCII text, the usual case, is trimmed byte by byte.
    static func trimmingBlanks(_ text: Substring) -> String {
        let utf8 = text.utf8
        if !utf8.contains(where: { $0 >= 0x80 }) {
            func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
            guard let first = utf8.firstIndex(where: { !isBlank($0) }), let last = utf8.lastIndex(where: { !isBlank($0) })
            else { return "" }
            return String(text[first...last])
        }
        func isBlank(_ character: Character) -> Bool {
            character.unicodeScalars.allSatisfy { $0 == "\t" || $0.properties.generalCategory == .spaceSeparator }
        }
        guard let first = text.firstIndex(where: { !isBlank($0) }), let last = text.lastIndex(where: { !isBlank($0) })
        else { return "" }
        return String(text[first...last])
    }
}

/// What `GET /employees` and `GET /employees/{n}` can nest in each employee.
public enum EmployeeDetail: String, CaseIterable, Hashable, Sendable, ArgumentValue {
    case titles
    case salaries
    case departments
}

/// What `GET /departments/{d}` can nest in the department.
public enum DepartmentDetail: String, CaseIterable, Hashable, Sendable, ArgumentValue {
    case managers
    case employees
}
