import Foundation

/// A `multipart/form-data` body (RFC 7578) written to a temporary file that
/// the upload then reads from disk: files are copied into it in blocks, so
/// a large file never sits in memory.
struct MultipartForm {
    let file: URL
    let boundary: String
    let length: Int

    /// The block size files are copied in.
    static let blockSize = 64 << 10

    static func write(_ elements: [(name: String, value: RequestArgumentValue)]) throws -> MultipartForm {
        let boundary = "Boundary-" + UUID().uuidString
        let file = FileManager.default.temporaryDirectory.appending(path: "multipart-\(UUID().uuidString).form")
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
            throw WebServiceError(.invalidRequest, detail: "Could not create \(file.path) for a multipart body.")
        }
        do {
            let output = try FileHandle(forWritingTo: file)
            defer { try? output.close() }
            var length = 0
            func put(_ text: String) throws {
                let data = Data(text.utf8)
                try output.write(contentsOf: data)
                length += data.count
            }
            for (name, value) in elements {
                for part in parts(of: value) {
                    try put("--\(boundary)\r\n")
                    switch part.storage {
                    case .file(let url, let contentType):
                        try put(disposition(name: name, filename: url.lastPathComponent))
                        try put("Content-Type: \(contentType ?? "application/octet-stream")\r\n\r\n")
                        length += try copy(url, to: output)
                    case .data(let data, let filename, let contentType):
                        try put(disposition(name: name, filename: filename ?? name))
                        try put("Content-Type: \(contentType ?? "application/octet-stream")\r\n\r\n")
                        try output.write(contentsOf: data)
                        length += data.count
                    default:
                        try put(disposition(name: name, filename: nil) + "\r\n")
                        try put(part.texts.first ?? "")
                    }
                    try put("\r\n")
                }
            }
            try put("--\(boundary)--\r\n")
            return MultipartForm(file: file, boundary: boundary, length: length)
        } catch {
            try? FileManager.default.removeItem(at: file)
            if let error = error as? WebServiceError { throw error }
            throw WebServiceError(.invalidRequest, detail: "The multipart body could not be written: \(error.localizedDescription)")
        }
    }

    /// A list's values each as a part of its own.
    private static func parts(of value: RequestArgumentValue) -> [RequestArgumentValue] {
        switch value.storage {
        case .list(let values): values.flatMap(parts)
        case .absent: []
        default: [value]
        }
    }

    private static func disposition(name: String, filename: String?) -> String {
        var line = "Content-Disposition: form-data; name=\"\(quoted(name))\""
        if let filename { line += "; filename=\"\(quoted(filename))\"" }
        return line + "\r\n"
    }

    /// A quoted-string's content: quotes and line breaks percent-encoded, as browsers do.
    private static func quoted(_ text: String) -> String {
        text.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: "\r", with: "%0D")
            .replacingOccurrences(of: "\n", with: "%0A")
    }

    /// Copies `url` into `output` block by block; the bytes copied.
    private static func copy(_ url: URL, to output: FileHandle) throws -> Int {
        let input: FileHandle
        do {
            input = try FileHandle(forReadingFrom: url)
        } catch {
            throw WebServiceError(.invalidRequest, detail: "The file \(url.path) cannot be read.")
        }
        defer { try? input.close() }
        var copied = 0
        while let block = try input.read(upToCount: blockSize), !block.isEmpty {
            try output.write(contentsOf: block)
            copied += block.count
        }
        return copied
    }
}
