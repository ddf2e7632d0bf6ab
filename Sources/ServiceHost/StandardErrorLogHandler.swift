#if canImport(Glibc)
import Glibc
#endif
import HTTPServer
import JSONStreaming
import Logging

/// Writes log lines to standard error, in `StreamLogHandler`'s format,
/// through ``StandardErrorOutput`` (info lines in batches, warnings and
/// errors at once):
///
/// ```
/// 2026-11-22T01:24:09+0000 info employees-server: [HTTPServer] GET /employees/10001 200 190 bytes 0.4 ms requestId=5f0c9a1e-1b
/// ```
///
/// or, with `--log-format json`, one JSON object per line, the metadata
/// (the access log's fields among them) as members:
///
/// ```
/// {"time":"2026-11-22T01:24:09+0000","level":"info","label":"employees-server","source":"HTTPServer","message":"request","bytes":190,"durationMs":0.4,"method":"GET","path":"/employees/10001","requestId":"5f0c9a1e-1b","status":200}
/// ```
///
/// A line never holds a character that is not printable: the message and
/// the metadata are escaped (`LogText`: `\x1b` for an escape character),
/// whoever wrote them, so that nothing a request carries, or a database
/// error quotes from it, reaches the terminal the log is read in as a
/// control sequence, or forges a line.
///
/// The server logs a line per request (the access log), so the line is
/// assembled as bytes and the time formatted by hand, without
/// `StreamLogHandler`'s string interpolations, `strftime`, and `stdio`
/// lock held across the `write`. The time comes from `localtime_r`, which
/// reads the time zone once (`localtime`, which `StreamLogHandler` calls,
/// checks `/etc/localtime` again at every call when `TZ` is unset).
///
/// ```swift
/// LoggingSystem.bootstrap(StandardErrorLogHandler.init)
/// ```
struct StandardErrorLogHandler: LogHandler {
    private let label: String
    private let format: ServerOptions.LogFormat
    var logLevel: Logger.Level = .info
    var metadataProvider: Logger.MetadataProvider?
    var metadata = Logger.Metadata()

    init(label: String, format: ServerOptions.LogFormat = .text) {
        self.label = label
        self.format = format
        self.metadataProvider = LoggingSystem.metadataProvider
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        if format == .json { return logJSON(event) }
        var line: [UInt8] = []
        line.reserveCapacity(160)
        Self.appendTimestamp(to: &line)
        line.append(UInt8(ascii: " "))
        line.append(contentsOf: event.level.rawValue.utf8)
        if !label.isEmpty {
            line.append(UInt8(ascii: " "))
            line.append(contentsOf: label.utf8)
        }
        line.append(UInt8(ascii: ":"))
        if let pretty = prettyMetadata(event) {
            line.append(UInt8(ascii: " "))
            line.append(contentsOf: LogText.escaping(pretty).utf8)
        }
        line.append(contentsOf: " [".utf8)
        line.append(contentsOf: event.source.utf8)
        line.append(contentsOf: "] ".utf8)
        line.append(contentsOf: LogText.escaping(event.message.description).utf8)
        line.append(UInt8(ascii: "\n"))
        StandardErrorOutput.shared.write(line, immediately: event.level >= .warning)
    }

    /// The event as one JSON object on one line: `time`, `level`, `label`,
    /// `source`, `message`, then the metadata sorted by key (integers and
    /// numbers as JSON numbers, the rest as strings).
    private func logJSON(_ event: LogEvent) {
        var line: [UInt8] = []
        line.reserveCapacity(256)
        line.append(contentsOf: #"{"time":""#.utf8)
        Self.appendTimestamp(to: &line)
        line.append(contentsOf: #"","level":""#.utf8)
        line.append(contentsOf: event.level.rawValue.utf8)
        line.append(contentsOf: #"","label":"#.utf8)
        JSONWriter.appendString(label, to: &line)
        line.append(contentsOf: #","source":"#.utf8)
        JSONWriter.appendString(event.source, to: &line)
        line.append(contentsOf: #","message":"#.utf8)
        JSONWriter.appendString(LogText.escaping(event.message.description), to: &line)
        for (key, value) in mergedMetadata(event).sorted(by: { $0.key < $1.key })
        where !["time", "level", "label", "source", "message"].contains(key) {
            line.append(UInt8(ascii: ","))
            JSONWriter.appendString(LogText.escaping(key), to: &line)
            line.append(UInt8(ascii: ":"))
            Self.appendJSON(value, to: &line)
        }
        line.append(contentsOf: "}\n".utf8)
        StandardErrorOutput.shared.write(line, immediately: event.level >= .warning)
    }

    private static func appendJSON(_ value: Logger.MetadataValue, to line: inout [UInt8]) {
        switch value {
        case .string(let text):
            JSONWriter.appendString(LogText.escaping(text), to: &line)
        case .stringConvertible(let number as Int):
            JSONWriter.appendInteger(number, to: &line)
        case .stringConvertible(let number as Double) where number.isFinite:
            line.append(contentsOf: "\(number)".utf8)
        case .stringConvertible(let other):
            JSONWriter.appendString(LogText.escaping(other.description), to: &line)
        case .array(let values):
            line.append(UInt8(ascii: "["))
            for (index, element) in values.enumerated() {
                if index > 0 { line.append(UInt8(ascii: ",")) }
                appendJSON(element, to: &line)
            }
            line.append(UInt8(ascii: "]"))
        case .dictionary(let members):
            line.append(UInt8(ascii: "{"))
            for (index, (key, element)) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { line.append(UInt8(ascii: ",")) }
                JSONWriter.appendString(LogText.escaping(key), to: &line)
                line.append(UInt8(ascii: ":"))
                appendJSON(element, to: &line)
            }
            line.append(UInt8(ascii: "}"))
        }
    }

    // MARK: - Metadata

    /// The handler's, the provider's and the event's metadata, and the
    /// error, as `key=value` pairs sorted by key; `nil` when there is none.
    private func prettyMetadata(_ event: LogEvent) -> String? {
        let merged = mergedMetadata(event)
        guard !merged.isEmpty else { return nil }
        return merged.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " ")
    }

    /// The handler's, the provider's and the event's metadata, and the error.
    private func mergedMetadata(_ event: LogEvent) -> Logger.Metadata {
        var merged = metadata
        if let provided = metadataProvider?.get(), !provided.isEmpty {
            merged.merge(provided) { _, provided in provided }
        }
        if let explicit = event.metadata, !explicit.isEmpty {
            merged.merge(explicit) { _, explicit in explicit }
        }
        if let error = event.error {
            merged["error.message"] = "\(error)"
            merged["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        return merged
    }

    // MARK: - Time

    /// The local time as `strftime`'s `%Y-%m-%dT%H:%M:%S%z`.
    private static func appendTimestamp(to line: inout [UInt8]) {
        var now = time(nil)
        var local = tm()
        guard localtime_r(&now, &local) != nil else { return }
        let year = Int(local.tm_year) + 1900
        appendTwoDigits(year / 100, to: &line)
        appendTwoDigits(year, to: &line)
        line.append(UInt8(ascii: "-"))
        appendTwoDigits(Int(local.tm_mon) + 1, to: &line)
        line.append(UInt8(ascii: "-"))
        appendTwoDigits(Int(local.tm_mday), to: &line)
        line.append(UInt8(ascii: "T"))
        appendTwoDigits(Int(local.tm_hour), to: &line)
        line.append(UInt8(ascii: ":"))
        appendTwoDigits(Int(local.tm_min), to: &line)
        line.append(UInt8(ascii: ":"))
        appendTwoDigits(Int(local.tm_sec), to: &line)
        let offsetMinutes = local.tm_gmtoff / 60
        line.append(offsetMinutes < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
        appendTwoDigits(abs(offsetMinutes) / 60, to: &line)
        appendTwoDigits(abs(offsetMinutes) % 60, to: &line)
    }

    /// The last two decimal digits of `value` (not negative).
    private static func appendTwoDigits(_ value: Int, to line: inout [UInt8]) {
        line.append(UInt8(ascii: "0") + UInt8(value / 10 % 10))
        line.append(UInt8(ascii: "0") + UInt8(value % 10))
    }
}
