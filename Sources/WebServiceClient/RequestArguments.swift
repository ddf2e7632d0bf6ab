import Foundation

/// The arguments of a call, by name, in the order written: path variables,
/// then the query, a form or a JSON object. Written as a dictionary literal
/// whose values are any ``RequestArgument``.
///
/// ```swift
/// let arguments: RequestArguments = ["employeeNumber": 10004, "details": ["titles", "salaries"]]
/// ```
///
/// A list is a repeated name (`details=titles&details=salaries`); `nil`
/// leaves the name out; a file `URL` or `Data` is a file part of a
/// multipart form.
public struct RequestArguments: Sendable, ExpressibleByDictionaryLiteral {
    /// The arguments in order.
    public var elements: [(name: String, value: RequestArgumentValue)]

    public init(dictionaryLiteral elements: (String, any RequestArgument)...) {
        self.elements = elements.map { (name: $0.0, value: $0.1.argumentValue) }
    }

    public init(_ elements: [(name: String, value: RequestArgumentValue)] = []) {
        self.elements = elements
    }

    /// The value named `name`, if any.
    public subscript(name: String) -> RequestArgumentValue? {
        get { elements.first { $0.name == name }?.value }
        set {
            elements.removeAll { $0.name == name }
            if let newValue { elements.append((name, newValue)) }
        }
    }

    public var isEmpty: Bool { elements.isEmpty }

    /// Whether a file or data part is among the values (multipart needed).
    var hasFileParts: Bool {
        elements.contains { $0.value.containsFilePart }
    }
}

/// One argument's value, as a ``RequestArgument`` gives it.
///
/// ```swift
/// RequestArgumentValue.file(URL(filePath: "/tmp/photo.jpg"), contentType: "image/jpeg")
/// RequestArgumentValue.data(Data("hello".utf8), filename: "hello.txt", contentType: "text/plain")
/// ```
public struct RequestArgumentValue: Sendable {
    enum Storage: Sendable {
        /// Sent as text, written in JSON as a string.
        case string(String)
        /// Sent as text, written in JSON as the number or literal it is (`42`, `true`).
        case literal(String)
        case list([RequestArgumentValue])
        case file(URL, contentType: String?)
        case data(Data, filename: String?, contentType: String?)
        /// Left out of the request.
        case absent
    }

    let storage: Storage

    init(_ storage: Storage) {
        self.storage = storage
    }

    /// A text value.
    public static func string(_ text: String) -> RequestArgumentValue { RequestArgumentValue(.string(text)) }
    /// A file on disk, streamed as a part of a multipart form.
    public static func file(_ url: URL, contentType: String? = nil) -> RequestArgumentValue {
        RequestArgumentValue(.file(url, contentType: contentType))
    }
    /// Bytes sent as a file part of a multipart form.
    public static func data(_ data: Data, filename: String? = nil, contentType: String? = nil) -> RequestArgumentValue {
        RequestArgumentValue(.data(data, filename: filename, contentType: contentType))
    }
    /// Several values under one name.
    public static func list(_ values: [RequestArgumentValue]) -> RequestArgumentValue { RequestArgumentValue(.list(values)) }

    /// The texts of a query or a form: one per value of a list.
    var texts: [String] {
        switch storage {
        case .string(let text), .literal(let text): [text]
        case .list(let values): values.flatMap(\.texts)
        case .file(let url, _): [url.absoluteString]
        case .data(let data, _, _): [String(decoding: data, as: UTF8.self)]
        case .absent: []
        }
    }

    var containsFilePart: Bool {
        switch storage {
        case .file, .data: true
        case .list(let values): values.contains { $0.containsFilePart }
        case .string, .literal, .absent: false
        }
    }

    var isAbsent: Bool {
        if case .absent = storage { true } else { false }
    }

    /// The value as JSON text, for a JSON object body.
    func appendJSON(to out: inout String) {
        switch storage {
        case .string(let text): out += JSONText.quoted(text)
        case .literal(let text): out += text
        case .list(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.appendJSON(to: &out)
            }
            out += "]"
        case .file(let url, _): out += JSONText.quoted(url.absoluteString)
        case .data(let data, _, _): out += JSONText.quoted(data.base64EncodedString())
        case .absent: out += "null"
        }
    }
}

/// A value that can be an argument of a call: strings, numbers, booleans,
/// dates, UUIDs, URLs (a file URL is a file part), `Data`, and arrays and
/// optionals of these.
///
/// ```swift
/// extension EmployeeDetail: RequestArgument {
///     public var argumentValue: RequestArgumentValue { .string(rawValue) }
/// }
/// ```
public protocol RequestArgument: Sendable {
    var argumentValue: RequestArgumentValue { get }
}

extension String: RequestArgument {
    public var argumentValue: RequestArgumentValue { RequestArgumentValue(.string(self)) }
}

extension Substring: RequestArgument {
    public var argumentValue: RequestArgumentValue { RequestArgumentValue(.string(String(self))) }
}

extension Int: RequestArgument {
    public var argumentValue: RequestArgumentValue { RequestArgumentValue(.literal(String(self))) }
}

extension Int64: RequestArgument {
    public var argumentValue: RequestArgumentValue { RequestArgumentValue(.literal(String(self))) }
}

extension Int32: RequestArgument {
    public var argumentValue: RequestArgumentValue { RequestArgumentValue(.literal(String(self))) }
}

extension Double: RequestArgument {
    /// Finite values only: JSON has no infinity or NaN, which are sent as text.
    public var argumentValue: RequestArgumentValue {
        isFinite ? RequestArgumentValue(.literal(String(self))) : RequestArgumentValue(.string(String(self)))
    }
}

extension Bool: RequestArgument {
    public var argumentValue: RequestArgumentValue { RequestArgumentValue(.literal(self ? "true" : "false")) }
}

extension Date: RequestArgument {
    /// An instant, as ISO 8601 with the time zone (`2024-05-01T12:00:00Z`).
    public var argumentValue: RequestArgumentValue { RequestArgumentValue(.string(formatted(.iso8601))) }
}

extension UUID: RequestArgument {
    public var argumentValue: RequestArgumentValue { RequestArgumentValue(.string(uuidString.lowercased())) }
}

extension URL: RequestArgument {
    /// A file URL is a file part of a multipart form, streamed from disk;
    /// any other URL is its text.
    public var argumentValue: RequestArgumentValue {
        isFileURL ? RequestArgumentValue(.file(self, contentType: nil)) : RequestArgumentValue(.string(absoluteString))
    }
}

extension Data: RequestArgument {
    /// A file part of a multipart form.
    public var argumentValue: RequestArgumentValue { RequestArgumentValue(.data(self, filename: nil, contentType: nil)) }
}

extension RequestArgumentValue: RequestArgument {
    public var argumentValue: RequestArgumentValue { self }
}

extension Array: RequestArgument where Element: RequestArgument {
    public var argumentValue: RequestArgumentValue { RequestArgumentValue(.list(map(\.argumentValue))) }
}

extension Optional: RequestArgument where Wrapped: RequestArgument {
    public var argumentValue: RequestArgumentValue { self?.argumentValue ?? RequestArgumentValue(.absent) }
}

/// JSON text helpers for the few places that write JSON by hand.
enum JSONText {
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
