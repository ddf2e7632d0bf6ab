/// The rule that a request's body is delimited one way only (RFC 9112
/// §6): by one `Content-Length` of digits, or by `Transfer-Encoding:
/// chunked` alone. A request framed any other way is refused before any
/// handler runs, and its connection closed: two readers of the same bytes
/// (a proxy in front, the server) could otherwise end the body at
/// different places, and whatever one of them takes for the next request
/// (a request smuggled in the body) would be answered.
///
/// libmicrohttpd frames a body by `Transfer-Encoding` when it is present,
/// whatever `Content-Length` says, and by the first `Content-Length` field
/// when several are; it reads any other coding as a body that ends with
/// the connection. So:
///
/// - `Content-Length` and `Transfer-Encoding` together: 400;
/// - more than one `Content-Length` field, even with equal values, or one
///   that is not digits alone: 400 (a proxy that merges equal values sends
///   one);
/// - `Transfer-Encoding` on an HTTP/1.0 request (§6.1): 400;
/// - a transfer coding other than `chunked`, known (`gzip, chunked`) or
///   not (`xchunked`, `chunked, identity`): 501, the server decodes none
///   (§6.1, §7);
/// - `chunked` more than once, or not exactly `chunked` as libmicrohttpd
///   reads it (two fields, a trailing space): 400;
/// - a field name followed by whitespace before its colon
///   (`Transfer-Encoding : chunked`, §5.1): 400, whatever the field;
/// - a name that begins with a framing field's and goes on
///   (`Transfer-Encodingchunked`, how libmicrohttpd 0.9.75 reads a value
///   folded onto a second line, §5.2): 400.
///
/// ```swift
/// RequestFraming.problem(in: ["Content-Length": "0", "Transfer-Encoding": "chunked"], isHTTP10: false)   // 400
/// RequestFraming.problem(in: ["Transfer-Encoding": "Chunked"], isHTTP10: false)                          // nil
/// ```
enum RequestFraming {
    /// The refusal of a request whose framing fields are not one of the
    /// two accepted forms; `nil` for a request framed one way, or without
    /// a body.
    static func problem(in headers: HTTPHeaders, isHTTP10: Bool) -> HTTPError? {
        // Every request passes here: a GET with neither field allocates nothing.
        var length: String?
        var lengths = 0
        var codings: [String] = []
        for (name, value) in headers {
            // No whitespace between a field's name and its colon (§5.1): a
            // reader that trims it would see another field than this one.
            if let last = name.utf8.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") {
                return refusal("A header field's name ends with whitespace before its colon (RFC 9112, section 5.1).")
            }
            // libmicrohttpd 0.9.75 joins a line folded onto `Transfer-Encoding: x`
            // (obs-fold, §5.2) to the field's name: `Transfer-Encodingchunked`.
            if name.utf8.count > 14, let field = framingPrefix(of: name) {
                return refusal("The request's \(field) field is folded over two lines or misspelled.")
            }
            switch name.utf8.count {
            case 14 where HTTPHeaders.namesMatch(name, "Content-Length"):
                length = length ?? value
                lengths += 1
            case 17 where HTTPHeaders.namesMatch(name, "Transfer-Encoding"):
                codings.append(value)
            default:
                continue
            }
        }
        if !codings.isEmpty {
            if lengths > 0 {
                return refusal("The request has both Content-Length and Transfer-Encoding, so its body could be read two ways.")
            }
            if isHTTP10 {
                return refusal("An HTTP/1.0 request cannot have Transfer-Encoding (RFC 9112, section 6.1).")
            }
            return codingProblem(codings)
        }
        if lengths > 1 {
            return refusal("The request has \(lengths) Content-Length fields; it may have one.")
        }
        if let length, length.isEmpty || !length.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return refusal("The request's Content-Length is not a number of bytes.")
        }
        return nil
    }

    /// The framing field `name` begins with and goes past, if any.
    private static func framingPrefix(of name: String) -> String? {
        for field in ["Content-Length", "Transfer-Encoding"] where name.utf8.count > field.utf8.count {
            // ASCII letters compared without case; other bytes as they are.
            let begins = zip(name.utf8, field.utf8).allSatisfy { $0 | 0x20 == $1 | 0x20 }
            if begins { return field }
        }
        return nil
    }

    /// The problem with `Transfer-Encoding` values, `nil` for `chunked` alone.
    private static func codingProblem(_ values: [String]) -> HTTPError? {
        if values.count == 1, HTTPHeaders.namesMatch(values[0], "chunked") { return nil }
        let codings = values.flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: " \t").lowercased() }
            .filter { !$0.isEmpty }
        if let other = codings.first(where: { $0 != "chunked" }) {
            return HTTPError(
                .notImplemented,
                detail: "The transfer coding \"\(other.prefix(64))\" is not implemented: a request body may only be chunked, alone.")
        }
        return refusal("The request's Transfer-Encoding must be chunked, once, in one field.")
    }

    private static func refusal(_ detail: String) -> HTTPError {
        HTTPError(.badRequest, detail: detail)
    }
}
