extension JSONWriter {
    // MARK: - Arrays and objects

    /// Appends `[`, each element as `appendElement` writes it, with commas
    /// between them, and `]`.
    ///
    /// ```swift
    /// JSONWriter.appendArray([1, 2], to: &out) { JSONWriter.appendInteger($0, to: &$1) }   // [1,2]
    /// ```
    @inlinable
    public static func appendArray<Elements: Sequence, Output: JSONOutput>(
        _ elements: Elements, to output: inout Output, appendElement: (Elements.Element, inout Output) -> Void
    ) {
        output.append(UInt8(ascii: "["))
        var first = true
        for element in elements {
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            appendElement(element, &output)
        }
        output.append(UInt8(ascii: "]"))
    }

    /// Appends `{`, each member in the order given as its key (a quoted,
    /// escaped string), `:` and its value as `appendValue` writes it, with
    /// commas between them, and `}`. Keys are written as given: repeated
    /// keys are written repeatedly.
    ///
    /// ```swift
    /// JSONWriter.appendObject([(key: "a", value: true)], to: &out) { JSONWriter.appendBool($0, to: &$1) }   // {"a":true}
    /// ```
    @inlinable
    public static func appendObject<Value, Members: Sequence<(key: String, value: Value)>, Output: JSONOutput>(
        _ members: Members, to output: inout Output, appendValue: (Value, inout Output) -> Void
    ) {
        output.append(UInt8(ascii: "{"))
        var first = true
        for member in members {
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            appendString(member.key, to: &output)
            output.append(UInt8(ascii: ":"))
            appendValue(member.value, &output)
        }
        output.append(UInt8(ascii: "}"))
    }
}
