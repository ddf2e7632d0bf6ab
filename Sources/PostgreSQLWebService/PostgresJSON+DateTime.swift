import JSONStreaming
import PostgreSQL

// MARK: - Dates and times

extension PostgresJSON {
    /// `date`, `timestamp` and `timestamptz` in ISO 8601 or, when asked,
    /// as epoch milliseconds.
    ///
    /// `2024-05-01` → `"2024-05-01"`, `2024-05-01 10:00:00.5` →
    /// `"2024-05-01T10:00:00.5"`, `2024-05-01 10:00:00+02` →
    /// `"2024-05-01T10:00:00+02:00"`. `infinity`, `-infinity` and the ` BC`
    /// suffix are kept as PostgreSQL prints them (as `to_json` does).
    static func appendDateTime<Output: JSONOutput>(
        _ value: UnsafeRawBufferPointer, kind: Format.Kind, to output: inout Output, options: JSONRenderingOptions
    ) {
        if options.dateFormat == .epochMilliseconds, let milliseconds = PostgresDateTime.epochMilliseconds(value) {
            JSONWriter.appendInteger(milliseconds, to: &output)
            return
        }
        switch kind {
        case .timestamp:
            appendISO8601(value, normalisesOffset: false, to: &output)
        case .timestamptz:
            appendISO8601(value, normalisesOffset: true, to: &output)
        default:
            JSONWriter.appendString(utf8: value, to: &output)
        }
    }

    /// Writes the value as a JSON string, with the space between date and
    /// time replaced by `T` and a whole-hour offset (`+02`, PostgreSQL's
    /// ISO style) written as `+02:00`. Offsets with minutes or seconds
    /// (`+05:30`, `+00:53:28`) are kept.
    static func appendISO8601<Output: JSONOutput>(_ value: UnsafeRawBufferPointer, normalisesOffset: Bool, to output: inout Output) {
        guard let space = value.firstIndex(of: UInt8(ascii: " ")), space + 1 < value.count,
            DigitReader.isDigit(value[space + 1])
        else {
            JSONWriter.appendString(utf8: value, to: &output)
            return
        }
        let timeStart = space + 1
        var offsetEnd = value.count
        var needsMinutes = false
        if normalisesOffset,
            let sign = value[timeStart...].firstIndex(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") })
        {
            var end = sign + 1
            while end < value.count, DigitReader.isDigit(value[end]) { end += 1 }
            if end - sign == 3, end == value.count || value[end] != UInt8(ascii: ":") {
                offsetEnd = end
                needsMinutes = true
            }
        }
        output.append(UInt8(ascii: "\""))
        JSONWriter.appendEscaped(utf8: UnsafeRawBufferPointer(rebasing: value[0..<space]), to: &output)
        output.append(UInt8(ascii: "T"))
        JSONWriter.appendEscaped(utf8: UnsafeRawBufferPointer(rebasing: value[timeStart..<offsetEnd]), to: &output)
        if needsMinutes {
            JSONWriter.appendRaw(UnsafeRawBufferPointer(start: (":00" as StaticString).utf8Start, count: 3), to: &output)
            JSONWriter.appendEscaped(utf8: UnsafeRawBufferPointer(rebasing: value[offsetEnd...]), to: &output)
        }
        output.append(UInt8(ascii: "\""))
    }
}
