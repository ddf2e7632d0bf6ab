import HTTPServer
import JSONStreaming

/// An `application/x-www-form-urlencoded` body read as PostgREST reads
/// one: a JSON object of its fields (which the HTTP layer decoded), each
/// value a string that PostgreSQL reads as its column's or argument's
/// type, so that the body then takes the JSON path.
///
/// ```swift
/// FormBody.json(request.formFields)   // name=Ada+L&age=36 → {"name":"Ada L","age":"36"}
/// ```
enum FormBody {
    static let contentType = "application/x-www-form-urlencoded"

    static func json(_ fields: [FormField]) throws(HTTPError) -> String {
        var json: [UInt8] = [UInt8(ascii: "{")]
        for (position, field) in fields.enumerated() {
            guard case .text(let value) = field.value else {
                throw HTTPError(.badRequest, detail: "A form field of a write is text, not a file (\(field.name)).", parameter: field.name)
            }
            if position > 0 { json.append(UInt8(ascii: ",")) }
            JSONWriter.appendString(field.name, to: &json)
            json.append(UInt8(ascii: ":"))
            JSONWriter.appendString(value, to: &json)
        }
        json.append(UInt8(ascii: "}"))
        return String(decoding: json, as: UTF8.self)
    }
}
