#if canImport(Glibc)
import Glibc
#endif
import Logging

/// Writes log lines to standard error, in `StreamLogHandler`'s format,
/// through ``StandardErrorOutput`` (info lines in batches, warnings and
/// errors at once):
///
/// ```
/// 2026-11-22T01:24:09+0000 info employees-server: [HTTPServer] GET /employees/10001 200 190 bytes 0.4 ms
/// ```
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
    var logLevel: Logger.Level = .info
    var metadataProvider: Logger.MetadataProvider?
    var metadata = Logger.Metadata()

    init(label: String) {
        self.label = label
        self.metadataProvider = LoggingSystem.metadataProvider
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
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
            line.append(contentsOf: pretty.utf8)
        }
        line.append(contentsOf: " [".utf8)
        line.append(contentsOf: event.source.utf8)
        line.append(contentsOf: "] ".utf8)
        line.append(contentsOf: event.message.description.utf8)
        line.append(UInt8(ascii: "\n"))
        StandardErrorOutput.shared.write(line, immediately: event.level >= .warning)
    }

    // MARK: - Metadata

    /// The handler's, the provider's and the event's metadata, and the
    /// error, as `key=value` pairs sorted by key; `nil` when there is none.
    private func prettyMetadata(_ event: LogEvent) -> String? {
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
        guard !merged.isEmpty else { return nil }
        return merged.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " ")
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
