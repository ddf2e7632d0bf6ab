internal import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#endif

/// Decodes an `application/x-www-form-urlencoded` or `multipart/form-data`
/// body with libmicrohttpd's post processor, as it arrives.
///
/// Text fields are collected in memory (and must be UTF-8); a part with a
/// file name is streamed into a temporary file (`mkstemp` under `$TMPDIR`
/// or `/tmp`) whose path is registered with the request context at once,
/// so it is removed when the request completes, whatever happened.
///
/// Owned by its `RequestState`; used on the connection's event loop only.
final class FormReader {
    private struct Part {
        var name: String
        var filename: String?
        var contentType: String?
        var text: [UInt8] = []
        var file: (descriptor: Int32, path: String)?
        var size = 0
    }

    static func handles(_ contentType: String) -> Bool {
        contentType == "application/x-www-form-urlencoded" || contentType == "multipart/form-data"
    }

    private(set) var fields: [FormField] = []
    private var handle: OpaquePointer?
    private var current: Part?
    private var problem: HTTPError?
    private unowned let context: RequestState
    /// An urlencoded body, whose raw bytes cannot hold a NUL (`%00` is
    /// how one would be written, and is refused too).
    private let isURLEncoded: Bool

    init(connection: ClientConnection, context: RequestState) throws(HTTPError) {
        self.context = context
        isURLEncoded = context.contentType == "application/x-www-form-urlencoded"
        handle = MHD_create_post_processor(
            connection.handle, 16 << 10, FormReader.iterate, Unmanaged.passUnretained(self).toOpaque()
        )
        if handle == nil {
            throw HTTPError(
                .badRequest,
                detail: "The form body cannot be decoded (a multipart body needs a boundary parameter)."
            )
        }
    }

    deinit {
        abandon()
    }

    /// Decodes the next piece of the body; returns the problem that makes
    /// the request a 400 (or 500), if any.
    func process(_ chunk: UnsafeRawBufferPointer) -> HTTPError? {
        guard let handle, problem == nil else { return problem }
        // libmicrohttpd's urlencoded parser would silently cut a value at a NUL.
        if isURLEncoded, chunk.contains(0) {
            problem = HTTPError(.badRequest, detail: "The form body contains a NUL byte.")
            abandon()
            return problem
        }
        let base = chunk.baseAddress?.assumingMemoryBound(to: CChar.self)
        if MHD_post_process(handle, base, chunk.count) != .YES {
            abandon()
            return problem ?? malformed()
        }
        return nil
    }

    /// The body is complete: flushes the last field; returns the problem, if any.
    func finish() -> HTTPError? {
        guard let handle, problem == nil else { return problem }
        self.handle = nil
        let completed = MHD_destroy_post_processor(handle) == .YES
        if let problem { return problem }
        finishPart()
        if let problem { return problem }
        return completed ? nil : malformed()
    }

    /// Stops decoding (the request is being rejected).
    func abandon() {
        if let handle {
            self.handle = nil
            _ = MHD_destroy_post_processor(handle)
        }
        closeOpenFile()
    }

    func closeOpenFile() {
        if let file = current?.file, file.descriptor >= 0 {
            Glibc.close(file.descriptor)
            current?.file?.descriptor = -1
        }
    }

    private func malformed() -> HTTPError {
        HTTPError(.badRequest, detail: "The \(context.contentType ?? "form") body is malformed.")
    }

    // MARK: - Parts

    private func receive(
        name: UnsafePointer<CChar>?, filename: UnsafePointer<CChar>?, contentType: UnsafePointer<CChar>?,
        data: UnsafeRawBufferPointer, offset: UInt64
    ) -> Bool {
        if offset == 0 || current == nil {
            finishPart()
            guard problem == nil else { return false }
            guard let name = name.flatMap(String.init(validatingCString:)) else {
                problem = HTTPError(.badRequest, detail: "A form field name is not valid UTF-8.")
                return false
            }
            current = Part(
                name: name,
                filename: filename.map { String(cString: $0) },
                contentType: contentType.map { String(cString: $0) }
            )
            if filename != nil, !createFile() { return false }
        }
        guard var part = current else { return false }
        part.size += data.count
        if let file = part.file {
            var written = 0
            // `data` is not empty inside the loop: it has a base address.
            while written < data.count {
                let result = write(file.descriptor, data.baseAddress! + written, data.count - written)
                if result < 0 && errno == EINTR { continue }
                guard result > 0 else {
                    problem = HTTPError(.internalServerError, detail: "The uploaded file could not be stored.")
                    context.logger.error("cannot write upload file \(file.path): errno \(errno)")
                    return false
                }
                written += result
            }
        } else {
            part.text.append(contentsOf: data)
        }
        current = part
        return true
    }

    private func createFile() -> Bool {
        let directory = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(directory)/http-upload-XXXXXX".utf8CString)
        let descriptor = mkstemp(&template)
        guard descriptor >= 0 else {
            problem = HTTPError(.internalServerError, detail: "The uploaded file could not be stored.")
            context.logger.error("cannot create an upload file in \(directory): errno \(errno)")
            return false
        }
        let path = String(nulTerminated: template)
        context.temporaryFiles.append(path)
        current?.file = (descriptor, path)
        return true
    }

    private func finishPart() {
        guard let part = current else { return }
        closeOpenFile()
        current = nil
        if let file = part.file {
            let upload = UploadedFile(filename: part.filename, contentType: part.contentType, path: file.path, size: part.size)
            fields.append(FormField(name: part.name, value: .file(upload)))
        } else if part.text.contains(0) {
            problem = HTTPError(
                .badRequest, detail: "The form field \"\(part.name)\" contains a NUL byte.", parameter: part.name
            )
        } else if let text = String(validating: part.text, as: UTF8.self) {
            fields.append(FormField(name: part.name, value: .text(text)))
        } else {
            problem = HTTPError(
                .badRequest, detail: "The form field \"\(part.name)\" is not valid UTF-8.", parameter: part.name
            )
        }
    }

    // MARK: - Callback

    private static let iterate:
        @convention(c) (
            UnsafeMutableRawPointer?, MHD_ValueKind, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
            UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UInt64, Int
        ) -> MHD_Result = { cls, _, key, filename, contentType, _, data, offset, size in
            // `cls` is the context this server registered with libmicrohttpd: never nil.
            let reader = Unmanaged<FormReader>.fromOpaque(cls!).takeUnretainedValue()
            let bytes = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size)
            return reader.receive(name: key, filename: filename, contentType: contentType, data: bytes, offset: offset)
                ? .YES : .NO
        }
}
