import Glibc
import Logging

// libFuzzer target for form decoding: urlencoded and multipart bodies go
// through libmicrohttpd's post processor as `FormReader` drives it, in a
// real `HTTPServer` on 127.0.0.1 (the post processor needs a connection).
// Built with HTTPServer's files by `scripts/fuzz form SECONDS` (not a
// package target).

/// The server under test: every form field it decoded must be a NUL-free
/// string or a file of the stated size that exists while the handler runs.
let server: HTTPServer = {
    let directory = "/tmp/form-fuzz-\(getpid())"
    mkdir(directory, 0o700)
    setenv("TMPDIR", directory, 1)
    let quiet = Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() }
    let server = HTTPServer(configuration: .init(port: 0, maximumBodySize: 1 << 20), logger: quiet) { request in
        for field in request.formFields {
            switch field.value {
            case .text(let text):
                precondition(!text.utf8.contains(0), "NUL in a text field")
            case .file(let file):
                var status = stat()
                precondition(stat(file.path, &status) == 0, "upload file missing")
                precondition(Int(status.st_size) == file.size, "upload file size \(status.st_size) != \(file.size)")
            }
        }
        return HTTPResponse(text: "\(request.formFields.count)")
    }
    try! server.start()
    return server
}()

/// libFuzzer calls the entry point from its one thread.
nonisolated(unsafe) var executions = 0

/// The first byte picks the content type (and whether the multipart
/// boundary is quoted); the rest is the body. Traps on a 5xx, on no
/// answer, and (every 1,000 inputs) on an upload file left behind.
@_cdecl("LLVMFuzzerTestOneInput")
public func formFuzzer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let contentType = switch data[0] % 3 {
    case 0: "application/x-www-form-urlencoded"
    case 1: "multipart/form-data; boundary=XyZzY"
    default: "multipart/form-data; boundary=\"XyZzY\"; charset=utf-8"
    }
    let body = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let head = "POST /form HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: \(contentType)\r\nContent-Length: \(body.count)\r\n\r\n"
    let response = exchange(Array(head.utf8) + body)
    guard let status = statusCode(response) else { preconditionFailure("no answer: \(response.count) bytes") }
    precondition(status == 200 || status == 400 || status == 413, "status \(status)")

    executions += 1
    if executions % 1_000 == 0 {
        usleep(20_000)
        let left = uploadFilesLeft()
        precondition(left == 0, "\(left) upload file(s) left behind")
    }
    return 0
}

func exchange(_ request: [UInt8]) -> [UInt8] {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    precondition(socket >= 0)
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(server.port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    precondition(connected == 0, "connect: errno \(errno)")
    var sent = 0
    while sent < request.count {
        let result = request.withUnsafeBytes { send(socket, $0.baseAddress! + sent, request.count - sent, Int32(MSG_NOSIGNAL)) }
        if result <= 0 { break }
        sent += result
    }
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        if count <= 0 { break }
        received += buffer[..<count]
    }
    return received
}

func statusCode(_ response: [UInt8]) -> Int? {
    guard response.count >= 12, response.starts(with: "HTTP/1.1 ".utf8) else { return nil }
    return Int(String(decoding: response[9..<12], as: UTF8.self))
}

func uploadFilesLeft() -> Int {
    guard let directory = opendir("/tmp/form-fuzz-\(getpid())") else { return 0 }
    defer { closedir(directory) }
    var count = 0
    while let entry = readdir(directory) {
        // `d_name` is declared 256 bytes long but the entry may end sooner:
        // read the name in place, up to its NUL, never copy the whole field.
        let name = String(cString: UnsafeRawPointer(entry).advanced(by: MemoryLayout<dirent>.offset(of: \dirent.d_name)!)
            .assumingMemoryBound(to: CChar.self))
        if name.hasPrefix("http-upload-") { count += 1 }
    }
    return count
}
